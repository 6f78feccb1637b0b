"""The notes store's writes: every mutation is a read-modify-write under the note's
cross-process lock, committed by an atomic replace of the whole file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.access import MAX_WALK_DEPTH, _Access, _note_error, lock_name
from pi_context.bindings.notes.errors import (
    EditError,
    InvalidPathError,
    LegacyNoteError,
    NoteError,
    NoteNotFoundError,
    NoteTooLargeError,
    UnsafeHomeError,
)
from pi_context.bindings.notes.frontmatter import (
    NoteMeta,
    parse_note,
    render_note,
    yaml_scalar,
)
from pi_context.bindings.notes.homes import project_key
from pi_context.bindings.notes.records import (
    NOTE_MAX_BYTES,
    Note,
    WriteOutcome,
    _legacy_reason,
    _utf8,
)
from pi_context.support.frozen import replace


class _Writes(_Access):
    """The writing side of a notes store (``NoteStore`` is one)."""

    # --- writes -------------------------------------------------------------------------

    @contextmanager
    def locked(self, scope: str, path: str) -> Iterator[tuple[int, str]]:
        """Hold ``path``'s cross-process lock, creating the home and parents.

        Yields (open folder of the note, file name). Stale temp files of killed writers in
        that folder are swept first. Filesystem failures surface as a ``NoteError``; a path
        deeper than the walk lists is refused (``MAX_WALK_DEPTH``).
        """
        folders = path.count("/")
        if folders > MAX_WALK_DEPTH:
            raise InvalidPathError(
                f"path is nested {folders} folders deep; the limit is {MAX_WALK_DEPTH} "
                "(deeper notes could be read but never listed or searched)",
                path=path,
                scope=scope,
            )
        with ExitStack() as stack:
            try:
                home_fd = self._home_fd(scope, create=True)
            except NoteError as exc:
                kind = UnsafeHomeError if isinstance(exc, UnsafeHomeError) else NoteError
                raise kind(f"cannot write note: {exc.message}", path=path, scope=scope) from exc
            assert home_fd is not None
            try:
                stack.enter_context(jail.file_lock(home_fd, lock_name(path), shown=scope))
            except jail.JailError as exc:
                raise UnsafeHomeError(
                    f"cannot lock the note: {exc.message}", path=path, scope=scope
                ) from exc
            finally:
                os.close(home_fd)
            located = stack.enter_context(self._note_dir(scope, path, create=True))
            assert located is not None
            jail.sweep_temps(located[0])
            yield located

    def _current(self, scope: str, path: str, dir_fd: int, name: str) -> Note | None:
        note = self._read_in(scope, path, dir_fd, name)
        if note is not None and note.parsed.legacy_keys:
            raise LegacyNoteError(_legacy_reason(note.parsed), path=path, scope=scope)
        if note is None:
            try:
                jail.existing_kind(dir_fd, name, path)
            except jail.JailError as exc:
                raise _note_error(exc, scope, path) from exc
        return note

    def _commit(
        self,
        scope: str,
        path: str,
        where: tuple[int, str],
        meta: NoteMeta,
        body: str,
        extra: tuple[str, ...],
    ) -> Note:
        size = len(_utf8(body, "content"))
        if size > NOTE_MAX_BYTES:
            raise NoteTooLargeError(
                f"note would be {size} UTF-8 bytes; the limit is {NOTE_MAX_BYTES}",
                path=path,
                scope=scope,
                size_bytes=size,
            )
        text = render_note(meta, body, extra)
        try:
            jail.replace_file(where[0], where[1], text.encode("utf-8"), shown=path)
        except jail.JailError as exc:
            raise _note_error(exc, scope, path) from exc
        return Note(scope, path, text, parse_note(text, meta.updated_at))

    def _next_meta(self, previous: Note | None, stale: bool | None, changed: bool) -> NoteMeta:
        now = self.clock()
        if previous is None:
            return replace(NoteMeta.new(now, stale=bool(stale)), access_count=1)
        meta = previous.meta
        updated = max(now, meta.created_at) if changed else meta.updated_at
        return replace(
            meta,
            stale=meta.stale if stale is None else stale,
            updated_at=updated,
            last_accessed=max(now, meta.created_at),
            access_count=meta.access_count + 1,
        )

    def _new_extra(self, scope: str) -> tuple[str, ...]:
        # The extension records the owning project on every new session note.
        if scope != "session":
            return ()
        return (f"project: {yaml_scalar(project_key(self.homes.project_root))}",)

    def write(self, scope: str, path: str, content: str, *, stale: bool = False) -> WriteOutcome:
        """Create or replace the body; keeps createdAt and origin. Without ``stale`` it revives."""
        path = self._canonical(path)
        _utf8(content, "content")
        with self.locked(scope, path) as where:
            previous = self._current(scope, path, *where)
            meta = self._next_meta(previous, stale, changed=True)
            extra = previous.parsed.extra_lines if previous else self._new_extra(scope)
            note = self._commit(scope, path, where, meta, content, extra)
            return WriteOutcome(note, created=previous is None)

    def edit(
        self,
        scope: str,
        path: str,
        edits: Sequence[tuple[str, str]] = (),
        *,
        stale: bool | None = None,
    ) -> WriteOutcome:
        """Apply exact-text replacements in order, all or nothing, and/or set ``stale``."""
        path = self._canonical(path)
        with self.locked(scope, path) as where:
            previous = self._current(scope, path, *where)
            if previous is None:
                raise NoteNotFoundError(scope, path)
            if "\ufffd" in previous.text and edits:
                self._require_utf8(scope, path, where)
            body = previous.body
            for index, (old, new) in enumerate(edits):
                count = body.count(old)
                if count != 1:
                    problem = "was not found" if count == 0 else f"matches {count} places"
                    hint = "" if count == 0 else "; include more surrounding text"
                    raise EditError(
                        f"edits[{index}].oldText {problem} in the note{hint}",
                        path=path,
                        scope=scope,
                        edit_index=index,
                    )
                body = body.replace(old, new, 1)
            meta = self._next_meta(previous, stale, changed=body != previous.body)
            note = self._commit(scope, path, where, meta, body, previous.parsed.extra_lines)
            return WriteOutcome(note, created=False, applied=len(edits))

    def update(self, scope: str, path: str, change: Callable[[str | None], str]) -> Note:
        """Generic read-modify-write of the body under the lock (``None`` when absent)."""
        path = self._canonical(path)
        with self.locked(scope, path) as where:
            previous = self._current(scope, path, *where)
            body = change(previous.body if previous else None)
            meta = self._next_meta(previous, None, changed=True)
            extra = previous.parsed.extra_lines if previous else self._new_extra(scope)
            return self._commit(scope, path, where, meta, body, extra)

    def _require_utf8(self, scope: str, path: str, where: tuple[int, str]) -> None:
        # An edit rewrites the body; a file that was not UTF-8 would silently lose bytes.
        try:
            data, _info = jail.read_file(where[0], where[1], shown=path)
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NoteError(
                "note is not valid UTF-8; rewrite it with notes_write instead of editing",
                path=path,
                scope=scope,
            ) from exc
        except FileNotFoundError:
            return
        except jail.JailError as exc:
            raise _note_error(exc, scope, path) from exc
