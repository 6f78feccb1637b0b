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
    crumpled_at,
    parse_note,
    render_note,
    with_crumpled,
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

    def write(
        self,
        scope: str,
        path: str,
        content: str,
        *,
        stale: bool = False,
        origin: str | None = None,
    ) -> WriteOutcome:
        """Create or replace the body; keeps createdAt and every other metadata line. Without
        ``stale`` it revives; a crumpled note comes back smoothed (``uncrumpled``). ``origin``
        (user, self or external) replaces the note's origin; ``None`` keeps it."""
        path = self._canonical(path)
        _utf8(content, "content")
        with self.locked(scope, path) as where:
            previous = self._current(scope, path, *where)
            meta = self._next_meta(previous, stale, changed=True)
            if origin is not None:
                meta = replace(meta, origin=origin)
            extra = previous.parsed.extra_lines if previous else self._new_extra(scope)
            was_crumpled = crumpled_at(extra) is not None
            note = self._commit(scope, path, where, meta, content, with_crumpled(extra, None))
            return WriteOutcome(note, created=previous is None, uncrumpled=was_crumpled)

    def edit(
        self,
        scope: str,
        path: str,
        edits: Sequence[tuple[str, str]] = (),
        *,
        stale: bool | None = None,
        origin: str | None = None,
        crumpled: bool | None = None,
        replace_all: bool = False,
    ) -> WriteOutcome:
        """Apply exact-text replacements in order, all or nothing, and/or set metadata.

        Each ``oldText`` must occur exactly once, or at least once with ``replace_all`` (every
        occurrence is then replaced). ``origin`` changes where the content came from and, like
        a body change, moves ``updatedAt``; ``crumpled`` crumples (keeping an earlier mark's
        time) or smooths the note without moving ``updatedAt``; ``stale`` is the earlier
        contract's flag.
        """
        path = self._canonical(path)
        with self.locked(scope, path) as where:
            previous = self._current(scope, path, *where)
            if previous is None:
                raise NoteNotFoundError(scope, path)
            if "\ufffd" in previous.text and edits:
                self._require_utf8(scope, path, where)
            body = previous.body
            applied = 0
            for index, (old, new) in enumerate(edits):
                count = body.count(old)
                if count == 0 or (count > 1 and not replace_all):
                    raise _edit_error(body, old, count, index, path, scope)
                changed = body.replace(old, new) if replace_all else body.replace(old, new, 1)
                applied += changed != body
                body = changed
            body_changed = body != previous.body
            origin_changed = origin is not None and origin != previous.meta.origin
            meta = self._next_meta(previous, stale, changed=body_changed or origin_changed)
            if origin is not None:
                meta = replace(meta, origin=origin)
            extra = previous.parsed.extra_lines
            if crumpled is not None:
                extra = with_crumpled(extra, self.clock() if crumpled else None)
            kind = "body" if body_changed else "none"
            if kind == "none" and (origin_changed or extra != previous.parsed.extra_lines):
                kind = "metadata"
            note = self._commit(scope, path, where, meta, body, extra)
            return WriteOutcome(note, created=False, applied=applied, change_kind=kind)

    def rename(self, scope: str, path: str, to_scope: str, to_path: str) -> WriteOutcome:
        """Move a note to another address, every metadata line kept and ``updatedAt`` moved.

        A live note at the target refuses (``already_exists``); a crumpled one is replaced
        (``replaced_crumpled``); the same file is ``nothing_to_do``. The target is written
        first, then the source is removed only if it is still the very file that was read
        (device and inode), so a failure never loses the note.
        """
        path, to_path = self._canonical(path), self._canonical(to_path)
        if (scope, path) == (to_scope, to_path):
            raise NoteError("rename_to names the note itself", code="nothing_to_do", path=path)
        first, second = sorted([(scope, path), (to_scope, to_path)])
        with ExitStack() as stack:
            held = {key: stack.enter_context(self.locked(*key)) for key in (first, second)}
            source_where, target_where = held[scope, path], held[to_scope, to_path]
            previous = self._current(scope, path, *source_where)
            if previous is None:
                raise NoteNotFoundError(scope, path)
            source_id = _identity(*source_where)
            target = self._current(to_scope, to_path, *target_where)
            if target is not None and _identity(*target_where) == source_id:
                raise NoteError(
                    "rename_to names the same file as the note", code="nothing_to_do", path=path
                )
            if target is not None and target.crumpled_at is None:
                raise NoteError(
                    "a live note already exists at rename_to; rename or crumple it first",
                    code="already_exists",
                    path=to_path,
                    scope=to_scope,
                )
            meta = self._next_meta(previous, None, changed=True)
            extra = previous.parsed.extra_lines
            note = self._commit(to_scope, to_path, target_where, meta, previous.body, extra)
            _remove_if_same(source_where, source_id, scope, path)
            return WriteOutcome(
                note,
                created=target is None,
                change_kind="file",
                renamed_from=path,
                replaced_crumpled=target is not None,
            )

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


def _edit_error(body: str, old: str, count: int, index: int, path: str, scope: str) -> EditError:
    """Why edit ``index`` cannot apply: its text is missing, or (without ``replace_all``) it
    matches several places, named by their line numbers."""
    if count == 0:
        message = f"edits[{index}].oldText was not found in the note"
        return EditError(message, path=path, scope=scope, edit_index=index)
    lines: list[int] = []
    start = body.find(old)
    while start != -1 and len(lines) < 20:
        lines.append(body.count("\n", 0, start) + 1)
        start = body.find(old, start + 1)
    return EditError(
        f"edits[{index}].oldText matches {count} places in the note; include more surrounding "
        "text, or pass replace_all to replace every one",
        code="ambiguous_edit",
        path=path,
        scope=scope,
        edit_index=index,
        line_numbers=lines,
    )


def _identity(dir_fd: int, name: str) -> tuple[int, int] | None:
    """Device and inode of ``name`` in the open folder (a link is not followed), or ``None``."""
    try:
        info = os.stat(jail._actual_name(dir_fd, name), dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _remove_if_same(
    where: tuple[int, str], identity: tuple[int, int] | None, scope: str, path: str
) -> None:
    """Unlink the renamed note's old file, proving first it is the file that was read."""
    dir_fd, name = where
    if identity is None or _identity(dir_fd, name) != identity:
        raise NoteError(
            "the note changed on disk while it was moved; its copy at rename_to was written and "
            "the original left in place",
            code="io_error",
            path=path,
            scope=scope,
        )
    try:
        os.unlink(jail._actual_name(dir_fd, name), dir_fd=dir_fd)
    except OSError as exc:
        raise NoteError(
            f"the note was copied to rename_to but its old file could not be removed: "
            f"{exc.strerror or exc}",
            code="io_error",
            path=path,
            scope=scope,
        ) from exc
