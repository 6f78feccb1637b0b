"""Read and mutate notes inside their homes.

Reads take no lock: every write replaces a whole file atomically, so a reader sees one
complete version. Every mutation is a read-modify-write performed under the note's
cross-process lock, so concurrent writers never lose each other's updates.

A missing home (or missing note) is normal. Any other filesystem failure while reading a
home is a ``HomeReadError`` for that home only; callers that span several homes keep the
others.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from pi_context.bindings.notes.address import RESERVED_PREFIX, NoteAddressError, validate_path
from pi_context.bindings.notes.durable import (
    LOCK_DIR,
    atomic_write,
    ensure_dirs,
    file_lock,
    make_dirs,
)
from pi_context.bindings.notes.frontmatter import NoteMeta, ParsedNote, parse_note, render_note
from pi_context.bindings.notes.homes import NotesHomes

NOTE_MAX_BYTES = 1_000_000
"""Largest note body, in UTF-8 bytes."""

HEAD_BYTES = 8192
"""Listing reads this much of each file; the metadata block nearly always fits."""

MIGRATE_HINT = "run `pi-context notes migrate` to preview and `--apply` to rename them"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class NoteError(Exception):
    """A named note failure: ``message`` is what the model sees, ``fields`` what it echoes."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


class NoteNotFoundError(NoteError):
    def __init__(self, scope: str, path: str) -> None:
        super().__init__("note not found", path=path, scope=scope)


class InvalidPathError(NoteError):
    pass


class PathEscapeError(NoteError):
    pass


class LegacyNoteError(NoteError):
    pass


class NoteTooLargeError(NoteError):
    pass


class NoteConflictError(NoteError):
    pass


class EditError(NoteError):
    pass


class HomeReadError(NoteError):
    """A real failure reading a home (not its absence)."""


@dataclass(frozen=True)
class Note:
    scope: str
    path: str
    text: str
    """The whole file, metadata block included: what ``notes_read`` windows over."""
    parsed: ParsedNote

    @property
    def meta(self) -> NoteMeta:
        return self.parsed.meta

    @property
    def body(self) -> str:
        return self.parsed.body

    @property
    def size_bytes(self) -> int:
        return len(self.parsed.body.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class NoteRecord:
    """What a listing knows about a note without reading its body."""

    scope: str
    path: str
    meta: NoteMeta
    size_bytes: int


@dataclass(frozen=True)
class Refused:
    """A file in a home that cannot be used as a note, and why."""

    scope: str
    path: str
    reason: str


@dataclass(frozen=True)
class HomeScan:
    scope: str
    records: tuple[NoteRecord, ...]
    refused: tuple[Refused, ...]


@dataclass(frozen=True)
class HomeLoad:
    scope: str
    notes: tuple[Note, ...]
    refused: tuple[Refused, ...]


@dataclass(frozen=True)
class WriteOutcome:
    note: Note
    created: bool
    applied: int = 0


def _legacy_reason(parsed: ParsedNote) -> str:
    keys = ", ".join(parsed.legacy_keys)
    return f"note uses legacy snake_case metadata ({keys}); {MIGRATE_HINT}"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NoteError(f"{what} is not valid Unicode (it contains a lone surrogate)") from exc


def _read_exactly(fd: int, size: int) -> bytes:
    """Up to ``size`` bytes (fewer only if the file shrank meanwhile)."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _mtime_ms(info: os.stat_result) -> int:
    return info.st_mtime_ns // 1_000_000


def lock_path(home: Path, path: str) -> Path:
    """The lock file serializing writers of note ``path`` in ``home`` (any process)."""
    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:40]
    return home / LOCK_DIR / f"{digest}.lock"


def _within(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


class NoteStore:
    """The five homes of one host identity."""

    def __init__(self, homes: NotesHomes, clock: Callable[[], int] = now_ms) -> None:
        self.homes = homes
        self.clock = clock

    # --- addressing ---------------------------------------------------------------------

    def home(self, scope: str) -> Path:
        return self.homes.home(scope)

    def _target(self, scope: str, path: str) -> tuple[Path, Path]:
        """(home, home/path) after validating ``path``; raises for a malformed path."""
        try:
            validate_path(path)
        except NoteAddressError as exc:
            raise InvalidPathError(str(exc), path=path) from exc
        home = self.home(scope)
        return home, home.joinpath(*path.split("/"))

    def _check_inside(self, home: Path, target: Path, scope: str, path: str) -> None:
        real_home = os.path.realpath(home)
        real_target = os.path.realpath(target)
        if not _within(real_target, real_home) or real_target == real_home:
            raise PathEscapeError(
                "path escapes its home (a symbolic link points outside it)", path=path, scope=scope
            )

    def physical_path(self, scope: str, path: str) -> Path:
        """Where the note ``path`` of ``scope`` lives (validated; it may not exist)."""
        return self._target(scope, path)[1]

    # --- reads --------------------------------------------------------------------------

    def _read_file(self, scope: str, path: str, target: Path) -> Note:
        try:
            with open(target, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise NoteNotFoundError(scope, path)
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as exc:
            raise NoteNotFoundError(scope, path) from exc
        except OSError as exc:
            raise NoteError(
                f"cannot read note: {exc.strerror or exc}", path=path, scope=scope
            ) from exc
        text = _decode(data)
        return Note(scope, path, text, parse_note(text, _mtime_ms(info)))

    def read(self, scope: str, path: str, *, allow_legacy: bool = False) -> Note:
        """The note at ``path``; ``NoteNotFoundError`` if absent, ``LegacyNoteError`` if old."""
        home, target = self._target(scope, path)
        if not os.path.lexists(target):
            raise NoteNotFoundError(scope, path)
        self._check_inside(home, target, scope, path)
        note = self._read_file(scope, path, target)
        if note.parsed.legacy_keys and not allow_legacy:
            raise LegacyNoteError(_legacy_reason(note.parsed), path=path, scope=scope)
        return note

    def _walk(self, scope: str) -> Iterator[tuple[str, str]]:
        """(virtual path, file) for every regular file of the home; raises ``HomeReadError``.

        Order is unspecified (callers sort); plain strings keep a 10,000-note walk cheap.
        """
        stack: list[tuple[str, str]] = [(os.fspath(self.home(scope)), "")]
        while stack:
            directory, prefix = stack.pop()
            try:
                with os.scandir(directory) as entries:
                    listed = list(entries)
            except FileNotFoundError:
                continue  # a missing home is empty; a directory removed mid-walk is gone
            except OSError as exc:
                raise HomeReadError(
                    f"cannot read the {scope} home: {exc.strerror or exc}",
                    scope=scope,
                    home=directory,
                ) from exc
            for entry in listed:
                name = entry.name
                if name.startswith(RESERVED_PREFIX):
                    continue  # the store's own temp and lock files
                try:
                    if entry.is_symlink():
                        continue  # listing never follows links out of (or around) a home
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, prefix + name + "/"))
                    elif entry.is_file(follow_symlinks=False):
                        yield prefix + name, entry.path
                except OSError as exc:
                    raise HomeReadError(
                        f"cannot read the {scope} home: {exc.strerror or exc}",
                        scope=scope,
                        home=directory,
                    ) from exc

    def _open_home_file(self, scope: str, file: str, head_only: bool) -> tuple[bytes, int, int]:
        """(bytes, total size, mtime ms), or raise FileNotFoundError if it vanished.

        Raw ``os`` calls: a buffered file object costs more than the read for small notes.
        """
        try:
            fd = os.open(file, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise HomeReadError(
                f"cannot read the {scope} home: {exc.strerror or exc}",
                scope=scope,
                home=os.path.dirname(file),
            ) from exc
        try:
            info = os.fstat(fd)
            want = info.st_size if not head_only else min(info.st_size, HEAD_BYTES)
            data = _read_exactly(fd, want)
            if head_only and info.st_size > HEAD_BYTES and b"\n---" not in data[3:]:
                data += _read_exactly(fd, info.st_size - len(data))  # a long metadata block
        except OSError as exc:
            raise HomeReadError(
                f"cannot read the {scope} home: {exc.strerror or exc}",
                scope=scope,
                home=os.path.dirname(file),
            ) from exc
        finally:
            os.close(fd)
        return data, info.st_size, _mtime_ms(info)

    def _usable(self, scope: str, path: str, parsed: ParsedNote | None) -> Refused | None:
        try:
            validate_path(path)
        except NoteAddressError as exc:
            return Refused(scope, path, f"not addressable as a note: {exc}")
        if parsed is not None and parsed.legacy_keys:
            return Refused(scope, path, _legacy_reason(parsed))
        return None

    def scan(self, scope: str) -> HomeScan:
        """Metadata of every note in one home, reading only the head of each file."""
        records: list[NoteRecord] = []
        refused: list[Refused] = []
        for path, file in self._walk(scope):
            try:
                data, size, mtime = self._open_home_file(scope, file, head_only=True)
            except FileNotFoundError:
                continue  # removed between listing and opening
            text = _decode(data)
            parsed = parse_note(text, mtime)
            problem = self._usable(scope, path, parsed)
            if problem is not None:
                refused.append(problem)
                continue
            header_bytes = len(text[: parsed.header_chars].encode("utf-8", "surrogatepass"))
            records.append(NoteRecord(scope, path, parsed.meta, max(0, size - header_bytes)))
        return HomeScan(scope, tuple(records), tuple(sorted(refused, key=lambda r: r.path)))

    def load(
        self,
        scope: str,
        accept: Callable[[str], bool] | None = None,
        contains: Sequence[str] | None = None,
    ) -> HomeLoad:
        """Every note of one home in full.

        ``accept`` filters virtual paths; ``contains`` keeps only notes whose body holds one of
        those literals (checked on the raw file first, so most files are never parsed).
        """
        notes: list[Note] = []
        refused: list[Refused] = []
        for path, file in self._walk(scope):
            if accept is not None and not accept(path):
                continue
            try:
                data, _size, mtime = self._open_home_file(scope, file, head_only=False)
            except FileNotFoundError:
                continue
            text = _decode(data)
            if contains is not None and not any(literal in text for literal in contains):
                continue
            parsed = parse_note(text, mtime)
            problem = self._usable(scope, path, parsed)
            if problem is not None:
                refused.append(problem)
                continue
            if contains is not None and not any(literal in parsed.body for literal in contains):
                continue  # the literal was only in the metadata block
            notes.append(Note(scope, path, text, parsed))
        return HomeLoad(scope, tuple(notes), tuple(refused))

    # --- writes -------------------------------------------------------------------------

    @contextmanager
    def locked(self, scope: str, path: str) -> Iterator[Path]:
        """Hold ``path``'s cross-process lock, creating the home and parents; yield the file.

        Filesystem failures inside the block surface as a ``NoteError`` naming the note.
        """
        home, target = self._target(scope, path)
        try:
            ensure_dirs(home / LOCK_DIR)
            with file_lock(lock_path(home, path)):
                self._prepare_parent(home, target, scope, path)
                yield target
        except NoteError:
            raise
        except OSError as exc:
            raise NoteError(
                f"cannot write note: {exc.strerror or exc}", path=path, scope=scope
            ) from exc

    def _prepare_parent(self, home: Path, target: Path, scope: str, path: str) -> None:
        """Create the note's directories inside the home, refusing links out and file clashes."""
        real_home = os.path.realpath(home)
        parts = path.split("/")
        current = home
        for index, part in enumerate(parts[:-1]):
            current = current / part
            if os.path.lexists(current):
                if not _within(os.path.realpath(current), real_home):
                    raise PathEscapeError(
                        "path escapes its home (a symbolic link points outside it)",
                        path=path,
                        scope=scope,
                    )
                if not current.is_dir():
                    clash = "/".join(parts[: index + 1])
                    raise NoteConflictError(
                        f"path runs through the note {clash!r}; a note cannot also be a folder",
                        path=path,
                        scope=scope,
                    )
            else:
                make_dirs(current.parent, (part,))
        if os.path.islink(target):
            raise NoteConflictError(
                "path is a symbolic link; notes are only written as regular files",
                path=path,
                scope=scope,
            )
        if target.is_dir():
            raise NoteConflictError("path is a folder of notes, not a note", path=path, scope=scope)

    def _current(self, scope: str, path: str, target: Path) -> Note | None:
        if not os.path.lexists(target):
            return None
        note = self._read_file(scope, path, target)
        if note.parsed.legacy_keys:
            raise LegacyNoteError(_legacy_reason(note.parsed), path=path, scope=scope)
        return note

    def _commit(
        self, scope: str, path: str, target: Path, meta: NoteMeta, body: str, extra: tuple[str, ...]
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
        atomic_write(target, text.encode("utf-8"))
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

    def write(self, scope: str, path: str, content: str, *, stale: bool = False) -> WriteOutcome:
        """Create or replace the body; keeps createdAt and origin. Without ``stale`` it revives."""
        _utf8(content, "content")
        with self.locked(scope, path) as target:
            previous = self._current(scope, path, target)
            meta = self._next_meta(previous, stale, changed=True)
            extra = previous.parsed.extra_lines if previous else ()
            note = self._commit(scope, path, target, meta, content, extra)
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
        with self.locked(scope, path) as target:
            previous = self._current(scope, path, target)
            if previous is None:
                raise NoteNotFoundError(scope, path)
            if "\ufffd" in previous.text and edits:
                self._require_utf8(scope, path, target)
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
            note = self._commit(scope, path, target, meta, body, previous.parsed.extra_lines)
            return WriteOutcome(note, created=False, applied=len(edits))

    def update(self, scope: str, path: str, change: Callable[[str | None], str]) -> Note:
        """Generic read-modify-write of the body under the lock (``None`` when absent)."""
        with self.locked(scope, path) as target:
            previous = self._current(scope, path, target)
            body = change(previous.body if previous else None)
            meta = self._next_meta(previous, None, changed=True)
            extra = previous.parsed.extra_lines if previous else ()
            return self._commit(scope, path, target, meta, body, extra)

    def _require_utf8(self, scope: str, path: str, target: Path) -> None:
        # An edit rewrites the body; a file that was not UTF-8 would silently lose bytes.
        try:
            target.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NoteError(
                "note is not valid UTF-8; rewrite it with notes_write instead of editing",
                path=path,
                scope=scope,
            ) from exc
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
