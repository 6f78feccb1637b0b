"""Read and mutate notes inside their homes.

All filesystem access goes through ``jail``: every component below the notes root is opened
relative to an open directory with ``O_NOFOLLOW``, so no symbolic link (planted, or swapped in
mid-call) and no hard link leads a read or a write out of its home, and every operating-system
failure surfaces as a named ``NoteError``.

Reads take no lock: every write replaces a whole file atomically, so a reader sees one
complete version. Every mutation is a read-modify-write performed under the note's
cross-process lock, so concurrent writers never lose each other's updates.

A missing home (or missing note) is normal. Any other filesystem failure while reading a
home is a ``HomeReadError`` for that home only; callers that span several homes keep the
others.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from functools import lru_cache
from pathlib import Path

from pi_context.bindings.notes import diskcache, jail
from pi_context.bindings.notes.address import (
    NOTE_SUFFIX,
    RESERVED_PREFIX,
    NoteAddressError,
)
from pi_context.bindings.notes.cache import (
    CACHE,
    MAX_FILE_BYTES,
    Entry,
    Stamp,
    cacheable,
    settled,
    stamp_of,
)
from pi_context.bindings.notes.errors import (
    EditError,
    HomeReadError,
    InvalidPathError,
    LegacyNoteError,
    LinkedNoteError,
    NoteConflictError,
    NoteError,
    NoteNotFoundError,
    NoteTooLargeError,
    PathEscapeError,
    UnsafeHomeError,
)
from pi_context.bindings.notes.frontmatter import (
    NoteMeta,
    ParsedNote,
    parse_note,
    render_note,
    yaml_scalar,
)
from pi_context.bindings.notes.homes import NotesHomes, project_key
from pi_context.bindings.notes.note_address import address_path
from pi_context.clock import now_ms
from pi_context.digest import sha256_hex
from pi_context.frozen import frozen, replace
from pi_context.gc_pause import gc_paused

__all__ = [
    "EditError",
    "HomeReadError",
    "InvalidPathError",
    "LegacyNoteError",
    "LinkedNoteError",
    "NoteConflictError",
    "NoteError",
    "NoteNotFoundError",
    "NoteTooLargeError",
    "PathEscapeError",
    "UnsafeHomeError",
]

NOTE_MAX_BYTES = 1_000_000
"""Largest note body, in UTF-8 bytes."""

HEAD_BYTES = 8192
"""Listing reads this much of each file; the metadata block nearly always fits."""

MIGRATE_HINT = "run `pi-context notes migrate` to preview and `--apply` to rename them"


@frozen
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


@frozen
class NoteRecord:
    """What a listing knows about a note without reading its body."""

    scope: str
    path: str
    meta: NoteMeta
    size_bytes: int


@frozen
class Refused:
    """A file in a home that cannot be used as a note, and why."""

    scope: str
    path: str
    reason: str


@frozen
class HomeScan:
    scope: str
    records: tuple[NoteRecord, ...]
    refused: tuple[Refused, ...]


class HomeRead:
    """One read of one home: notes built as entries, then notes served straight from the
    disk cache's rows (``rows_served``: (path, row)). Index ``i`` counts entries first."""

    __slots__ = ("scope", "entries", "rows", "rows_served", "refused")

    def __init__(
        self,
        scope: str,
        entries: list[tuple[str, Entry]],
        rows: diskcache.Rows | None,
        rows_served: list[tuple[str, int]],
        refused: list[Refused],
    ) -> None:
        self.scope = scope
        self.entries = entries
        self.rows = rows
        self.rows_served = rows_served
        self.refused = refused

    def __len__(self) -> int:
        return len(self.entries) + len(self.rows_served)

    def paths(self) -> list[str]:
        return [path for path, _ in self.entries] + [path for path, _ in self.rows_served]

    def updated_at(self) -> list[int]:
        column = self.rows.updated_at if self.rows is not None else []
        return [entry.meta.updated_at for _, entry in self.entries] + [
            column[row] for _, row in self.rows_served
        ]

    def record(self, index: int) -> NoteRecord:
        """Note ``index`` as a listing record (built on request)."""
        if index < len(self.entries):
            path, entry = self.entries[index]
            key = ("record", self.scope)
            record: NoteRecord | None = entry.memo.get(key)
            if record is None or record.path != path:
                record = NoteRecord(self.scope, path, entry.meta, entry.size_bytes)
                entry.memo[key] = record
            return record
        path, row = self.rows_served[index - len(self.entries)]
        assert self.rows is not None
        return NoteRecord(self.scope, path, self.rows.meta(row), self.rows.size_bytes(row))


@frozen
class HomeLoad:
    scope: str
    notes: tuple[Note, ...]
    refused: tuple[Refused, ...]


@frozen
class WriteOutcome:
    note: Note
    created: bool
    applied: int = 0


def _legacy_reason(parsed: ParsedNote | Entry) -> str:
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


@lru_cache(maxsize=1 << 17)
def _path_problem(path: str) -> str | None:
    """Why a listed path is not addressable (pure, so a listing of 50k notes asks once each)."""
    try:
        address_path(path)
    except NoteAddressError as exc:
        return str(exc)
    return None


def lock_name(path: str) -> str:
    """The lock file (inside the home's lock folder) serializing writers of note ``path``."""
    return sha256_hex(path.encode("utf-8"))[:40] + ".lock"


MAX_WALK_DEPTH = 128
"""Folders nested deeper than this are not listed (a hostile tree cannot exhaust descriptors),
and a write deeper than this is refused, so every note the tools write is listed."""


def _note_error(exc: jail.JailError, scope: str, path: str) -> NoteError:
    """A jail refusal on the way to one note, as the store's named error."""
    if exc.kind == "symlink":
        return PathEscapeError(f"path escapes its home: {exc.message}", path=path, scope=scope)
    if exc.kind == "linked":
        return LinkedNoteError(exc.message, path=path, scope=scope)
    if exc.kind == "conflict":
        return NoteConflictError(exc.message, path=path, scope=scope)
    return NoteError(exc.message, path=path, scope=scope)


_Served = tuple[
    dict[str, Entry], dict[str, int], Sequence[Sequence[int]], list[bool], list[tuple[str, int]]
]
"""(this process's entries, row of each path, the six stamp columns, row usable, rows served
so far)."""

_Walked = tuple[str, str, Stamp]
"""A candidate note met by a home walk: (virtual path in NFC, name in its folder, stamp)."""


def _plausible(folders: list[str], names: list[str]) -> bool:
    """Whether a stored listing holds only names ``_list`` keeps. Its checksum stops damage,
    not a forger: a stored ``..`` must never lead the walk out of its home, nor a stored
    non-note name into being read as a note."""
    for name in folders:
        if name in ("", ".", "..") or name.startswith(RESERVED_PREFIX) or "\0" in name:
            return False
    for name in names:
        if not name.endswith(NOTE_SUFFIX) or name.startswith(RESERVED_PREFIX) or "\0" in name:
            return False
    return True


class _Listings:
    """The folder listings of one complete walk: a folder whose stamp equals the one stored
    in the disk cache is not listed again (its names are reused); every folder's listing is
    kept for the next cache file."""

    __slots__ = ("rows", "seen", "changed", "now_ns")

    def __init__(self, rows: diskcache.Rows | None, now_ns: int) -> None:
        self.rows = rows
        self.seen: list[diskcache.Listing] = []
        self.changed = False
        """A settled folder was listed anew: the cache file should keep its new listing."""
        self.now_ns = now_ns


def _holds(entry: Entry, refused: bool, literals: Sequence[str]) -> bool:
    """A search keeps a note whose body holds a literal; a refusal is reported only for a
    file that holds one anywhere."""
    body = entry.body or ""
    if any(literal in body for literal in literals):
        return True
    return refused and any(literal in entry.text() for literal in literals)


class _HomeCache:
    """One read of one home through both caches (this process's, then the disk's).

    An entry is used only when its stamp equals the one the walk just saw. Files read during
    the walk are remembered; at the end, if the disk cache disagrees with what the walk saw,
    it is rewritten with the current entries (``finish``).
    """

    def __init__(self, notes_root: Path, home: str, bodies: bool, search: bool) -> None:
        self.home = home
        self.bodies = bodies
        self.search = search
        """A search loads every body with the rows (one byte search finds the candidates);
        otherwise a body is read from the cache file only when it is used."""
        self.file = diskcache.cache_file(notes_root, home)
        self.rows: diskcache.Rows | None = None
        self.tried = False
        self.loaded = False
        self.memory = CACHE.home(home)
        self.seen: list[tuple[str, Entry]] = []
        """The storable entries of this walk: what the disk cache should hold."""
        self.disk_hits = 0
        self.dirty = False
        self.now_ns = time.time_ns()
        self.holding: set[int] | None = None
        self.listings: _Listings | None = None
        """The folder listings of a complete walk (kept in the cache file)."""
        self.matched: list[tuple[str, int]] = []
        """Disk rows the walk matched and left unbuilt (a listing's or a snapshot's rows, the
        rows a search skipped): still what the disk cache should hold."""

    def rows_now(self) -> diskcache.Rows | None:
        """The disk cache's rows, loaded once per read. Loading alone does not count as
        consulting them (``tried``): a read served wholly from this process's cache leaves
        the disk cache alone, as before."""
        if not self.loaded and self.file is not None:
            self.loaded = True
            # A search scans the bodies; a process that searches again (a host) keeps
            # them in memory, a one-off process streams them (see ``Rows.holding``).
            keep = self.search and diskcache.loaded_before(self.file)
            self.rows = diskcache.load(self.file, bodies=keep)
        return self.rows

    def holding_now(self, literals: Sequence[str]) -> set[int] | None:
        """The rows whose body holds a literal (computed once per read); ``None`` when there
        are no rows, or their bodies proved damaged (the rows are then dropped)."""
        rows = self.rows_now()
        if rows is not None and self.holding is None:
            self.holding = rows.holding(literals)
            if self.holding is None:
                self.rows = None  # a damaged file: no row of it is used
        return None if self.rows is None else self.holding

    def unneeded(self, path: str, stamp: Stamp, literals: Sequence[str]) -> bool:
        """Whether the disk cache proves that the usable note at ``path`` holds none of
        ``literals`` (a search then skips it without building it)."""
        self.tried = True
        holding = self.holding_now(literals)
        rows = self.rows
        row = None if rows is None else rows.matching(path, stamp)
        if rows is None or row is None or holding is None:
            return False
        if row in holding or rows.legacy(row) or not rows.addressable(row):
            return False
        self.matched.append((path, row))
        return True

    def consult(self) -> diskcache.Rows | None:
        """The rows, used to answer a miss in this process's cache."""
        self.tried = True
        return self.rows_now()

    def hit(self, path: str, entry: Entry) -> None:
        """``entry`` came from this process's cache."""
        if entry.storable or (entry.storable is None and diskcache.storable(path, entry)):
            self.seen.append((path, entry))

    def lookup(self, path: str, stamp: Stamp) -> Entry | None:
        """The entry for the file from the disk cache (after a miss in this process's)."""
        rows = self.consult()
        row = None if rows is None else rows.matching(path, stamp)
        if rows is None or row is None:
            return None
        entry = rows.entry(row, body=self.bodies)
        if entry is not None:
            CACHE.put(self.home, path, entry, self.now_ns)
            self.seen.append((path, entry))
            self.disk_hits += 1
        return entry

    def remember(self, path: str, entry: Entry) -> None:
        """``entry`` was just read from the file with the walk's stamp."""
        if cacheable(entry.stamp, self.now_ns):
            CACHE.put(self.home, path, entry, self.now_ns)
            if diskcache.storable(path, entry):
                self.seen.append((path, entry))
                self.dirty = True

    def _on_disk(self, path: str, entry: Entry) -> bool:
        row = None if self.rows is None else self.rows.index.get(path)
        return row is not None and self.rows is not None and self.rows.stamp(row) == entry.stamp

    def _in_line(self) -> bool:
        """Whether the disk cache holds exactly this walk's entries."""
        rows = self.rows
        if rows is None:
            return not self.seen and not self.matched
        if rows.count != len(self.seen) + len(self.matched):
            return False
        if self.disk_hits == len(self.seen):
            return True  # every entry was matched against its own row
        return all(self._on_disk(path, entry) for path, entry in self.seen)

    def finish(self) -> None:
        """After a complete walk: bring the disk cache in line with it if they differ."""
        listings = self.listings
        relisted = listings is not None and listings.changed
        if self.file is None or not (self.dirty or self.tried or relisted):
            return  # served from this process's cache alone: the disk was not consulted
        if not self.dirty and not relisted and self._in_line():
            return
        if self.matched and self.rows is not None:
            rows = self.rows
            built = ((path, rows.entry(row)) for path, row in self.matched)
            self.seen.extend((path, entry) for path, entry in built if entry is not None)
        if any(entry.body is None for _path, entry in self.seen):
            full = diskcache.load(self.file, bodies=True)
            self.seen = [(path, self._with_body(full, path, entry)) for path, entry in self.seen]
        diskcache.save(
            self.file,
            self.seen,
            lambda path: _path_problem(path) is None,
            () if listings is None else listings.seen,
            source=self.home,
        )

    @staticmethod
    def _with_body(rows: diskcache.Rows | None, path: str, entry: Entry) -> Entry:
        if entry.body is not None or rows is None:
            return entry
        row = rows.index.get(path)
        if row is None or rows.stamp(row) != entry.stamp:
            return entry  # left out of the disk cache until a call reads it again
        return rows.entry(row) or entry


class NoteStore:
    """The five homes of one host identity."""

    def __init__(self, homes: NotesHomes, clock: Callable[[], int] = now_ms) -> None:
        self.homes = homes
        self.clock = clock

    # --- addressing ---------------------------------------------------------------------

    def home(self, scope: str) -> Path:
        return self.homes.home(scope)

    def _canonical(self, path: str) -> str:
        try:
            return address_path(path)
        except NoteAddressError as exc:
            raise InvalidPathError(str(exc), path=path) from exc

    def physical_path(self, scope: str, path: str) -> Path:
        """Where the note ``path`` of ``scope`` lives (for display; I/O never uses it)."""
        return self.home(scope).joinpath(*self._canonical(path).split("/"))

    def _home_fd(self, scope: str, *, create: bool) -> int | None:
        """An open descriptor of the scope's home, or ``None`` when it does not exist."""
        parts = list(self.homes.parts(scope))
        root = self.homes.root
        try:
            root_fd = jail.open_root(root, create=create)
            if root_fd is None:
                return None
            try:
                return jail.walk_dirs(root_fd, parts, create=create, shown=str(root))
            finally:
                os.close(root_fd)
        except jail.JailError as exc:
            if exc.kind == "symlink":
                raise UnsafeHomeError(
                    f"the {scope} home is not trusted: {exc.message}", scope=scope
                ) from exc
            raise NoteError(exc.message, scope=scope) from exc

    @contextmanager
    def _note_dir(self, scope: str, path: str, *, create: bool) -> Iterator[tuple[int, str] | None]:
        """(open folder of the note, file name), or ``None`` when a folder is absent."""
        home_fd = self._home_fd(scope, create=create)
        if home_fd is None:
            yield None
            return
        parts = path.split("/")
        made: list[str] = []
        try:
            try:
                dir_fd = jail.walk_dirs(home_fd, parts[:-1], create=create, shown="", made=made)
            except jail.JailError as exc:
                if exc.kind == "conflict":
                    raise NoteConflictError(
                        f"{exc.message}: a note cannot also be a folder", path=path, scope=scope
                    ) from exc
                raise _note_error(exc, scope, path) from exc
        finally:
            os.close(home_fd)
        if dir_fd is None:
            yield None
            return
        try:
            yield dir_fd, parts[-1]
        except BaseException:  # a failed write (a full disk) takes back the folders it made
            with suppress(NoteError, jail.JailError, OSError):
                self._prune(scope, parts[:-1], made)
            raise
        finally:
            os.close(dir_fd)

    def _prune(self, scope: str, parts: list[str], made: list[str]) -> None:
        home_fd = self._home_fd(scope, create=False) if made else None
        if home_fd is not None:
            try:
                jail.prune_made(home_fd, parts, made)
            finally:
                os.close(home_fd)

    # --- reads --------------------------------------------------------------------------

    def _read_in(self, scope: str, path: str, dir_fd: int, name: str) -> Note | None:
        try:
            data, info = jail.read_file(dir_fd, name, shown=path)
        except FileNotFoundError:
            return None
        except jail.JailError as exc:
            if exc.kind == "conflict" and "folder" in exc.message:
                return None  # a folder of notes is not a note
            raise _note_error(exc, scope, path) from exc
        text = _decode(data)
        return Note(scope, path, text, parse_note(text, _mtime_ms(info)))

    def read(self, scope: str, path: str, *, allow_legacy: bool = False) -> Note:
        """The note at ``path``; ``NoteNotFoundError`` if absent, ``LegacyNoteError`` if old."""
        path = self._canonical(path)
        with self._note_dir(scope, path, create=False) as located:
            note = None if located is None else self._read_in(scope, path, *located)
        if note is None:
            raise NoteNotFoundError(scope, path)
        if note.parsed.legacy_keys and not allow_legacy:
            raise LegacyNoteError(_legacy_reason(note.parsed), path=path, scope=scope)
        return note

    def _walk(
        self,
        scope: str,
        refused: list[Refused],
        served: _Served | None = None,
        listings: _Listings | None = None,
    ) -> Iterator[tuple[int, list[_Walked]]]:
        """Every ``.md`` regular file of the home, folder by folder: (open folder, its files);
        raises ``HomeReadError``. The folder's descriptor is valid only while it is yielded.

        Links are never followed (a folder swapped for a link mid-walk is skipped), names are
        reported in NFC, and a second spelling of one name in a folder is refused. At most one
        descriptor per folder level is open. Order is unspecified (callers sort).

        With ``served``, a file that this process's cache does not hold and whose usable
        disk-cache row has the file's stamp is recorded there instead of being yielded.
        With ``listings``, folders are listed through it (see ``_Listings``).
        """
        try:
            home_fd = self._home_fd(scope, create=False)
        except NoteError as exc:
            message = f"cannot read the {scope} home: {exc.message}"
            raise HomeReadError(message, scope=scope) from exc
        if home_fd is None:
            return
        # Frames of (open folder, its virtual prefix, sub-folder names still to visit).
        stack: list[tuple[int, str, list[str]]] = []
        try:
            files, folders = self._files(scope, home_fd, "", refused, served, listings)
            stack.append((home_fd, "", folders))
            home_fd = -1  # the stack owns it now
            if files:
                yield stack[-1][0], files
            while stack:
                fd, prefix, pending = stack[-1]
                if not pending:
                    stack.pop()
                    os.close(fd)
                    continue
                name = pending.pop()
                shown = prefix + (name if name.isascii() else jail.nfc(name))
                if len(stack) > MAX_WALK_DEPTH:
                    refused.append(Refused(scope, shown + "/", "nested too deeply to list"))
                    continue
                child: int | None
                try:
                    # The name is the on-disk spelling just listed: open it directly, and
                    # let the jail classify only a failure (absent, a link, a file).
                    child = os.open(name, jail.DIR_FLAGS, dir_fd=fd)
                except OSError:
                    child = None
                try:
                    if child is None:
                        child = jail.open_dir(fd, name, create=False, shown=shown)
                except jail.JailError as exc:
                    if exc.kind in ("symlink", "conflict"):
                        continue  # swapped for a link or a file since it was listed
                    raise HomeReadError(
                        f"cannot read the {scope} home: {exc.message}", scope=scope
                    ) from exc
                if child is None:
                    continue  # removed since it was listed
                try:
                    files, below = self._files(scope, child, shown + "/", refused, served, listings)
                except BaseException:
                    os.close(child)
                    raise
                stack.append((child, shown + "/", below))
                if files:
                    yield child, files
        finally:
            if home_fd >= 0:
                os.close(home_fd)
            for fd, _prefix, _pending in stack:
                os.close(fd)

    def _files(
        self,
        scope: str,
        fd: int,
        prefix: str,
        refused: list[Refused],
        served: _Served | None = None,
        listings: _Listings | None = None,
    ) -> tuple[list[_Walked], list[str]]:
        """The notes of one open folder, and its sub-folder names (one tight loop per folder:
        at 10,000 notes the walk is most of a fresh listing's time)."""
        try:
            if listings is None:
                folders, names = self._list(fd)
            else:
                # The stamp is taken before the listing: a change after it makes the next
                # walk's stamp differ, so a stored listing is never older than its stamp.
                before = stamp_of(os.fstat(fd))
                known = None if listings.rows is None else listings.rows.listing(before)
                if known is not None and not _plausible(*known):
                    known = None  # names a listing of ours never holds: list the folder
                folders, names = self._list(fd) if known is None else known
                # Only a settled folder's listing is kept: two changes inside one timestamp
                # tick would leave its stamp unchanged.
                if known is not None or settled(before, listings.now_ns):
                    listings.seen.append((before, tuple(folders), tuple(names)))
                    listings.changed = listings.changed or known is None
        except OSError as exc:
            raise HomeReadError(
                f"cannot read the {scope} home: {exc.strerror or exc}", scope=scope
            ) from exc
        files: list[_Walked] = []
        seen: set[str] = set()  # non-ASCII names only: an ASCII name has no other spelling
        fast = served is not None
        if served is not None:
            memory, index, (dev, ino, size, mtime, ctime, nlink), usable, out = served
        regular, stat_of = stat.S_ISREG, os.stat
        for name in names:
            try:
                info = stat_of(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # vanished since it was listed
            if name.isascii():
                path = prefix + name
                if fast and path not in memory:
                    # The hot path of a fresh process: a usable row with the walk's stamp,
                    # compared field by field (no stamp object per file). Rows are of
                    # regular files, and an inode with the same ctime has not changed type.
                    row = index.get(path)
                    if (
                        row is not None
                        and usable[row]
                        and ino[row] == info.st_ino
                        and mtime[row] == info.st_mtime_ns
                        and ctime[row] == info.st_ctime_ns
                        and size[row] == info.st_size
                        and nlink[row] == info.st_nlink
                        and dev[row] == info.st_dev
                    ):
                        out.append((path, row))
                        continue
            else:
                path = ""
            if not regular(info.st_mode):
                continue  # replaced by a link or a folder since it was listed
            stamp = stamp_of(info)
            if path:
                files.append((path, name, stamp))
                continue
            shown = prefix + jail.nfc(name)
            if shown in seen:
                reason = "another spelling (NFC/NFD) of this name is the note"
                refused.append(Refused(scope, shown, reason))
                continue
            seen.add(shown)
            files.append((shown, name, stamp))
        return files, folders

    @staticmethod
    def _list(fd: int) -> tuple[list[str], list[str]]:
        """(sub-folder names, candidate note names) of one open folder, read from the
        filesystem. Exact NFC spellings come first, so a later NFD twin is the one refused."""
        with os.scandir(fd) as listing:
            entries = list(listing)
        if not all(entry.name.isascii() for entry in entries):
            entries.sort(key=lambda e: not (e.name.isascii() or jail.nfc(e.name) == e.name))
        folders: list[str] = []
        names: list[str] = []
        for entry in entries:
            name = entry.name
            try:
                # Neither test follows a link: a symbolic link is neither a folder nor a file.
                if entry.is_dir(follow_symlinks=False):
                    if not name.startswith(RESERVED_PREFIX):
                        folders.append(name)
                elif (
                    name.endswith(NOTE_SUFFIX)
                    and not name.startswith(RESERVED_PREFIX)  # the store's temp and lock files
                    and entry.is_file(follow_symlinks=False)
                ):
                    names.append(name)  # notes are .md files; other files are not notes
            except OSError:
                continue  # vanished since it was listed
        return folders, names

    def _entry(
        self, scope: str, cache: _HomeCache, dir_fd: int, item: _Walked, head_only: bool
    ) -> Entry | Refused:
        """The parsed file, read now (both caches missed).

        ``head_only`` may return just the head of a large file. Raises ``FileNotFoundError``
        if the file vanished.
        """
        path, name, stamp = item
        whole = not head_only or stamp[2] <= MAX_FILE_BYTES
        limit = None if whole else HEAD_BYTES
        try:
            data, info = jail.read_file(dir_fd, name, shown=path, limit=limit, exact=True)
            if not whole and info.st_size > HEAD_BYTES and b"\n---" not in data[3:]:
                # a long metadata block: read the whole file
                data, info = jail.read_file(dir_fd, name, shown=path, exact=True)
        except jail.JailError as exc:
            return Refused(scope, path, exc.message)
        text = _decode(data)
        entry = Entry.of(stamp, text, parse_note(text, _mtime_ms(info)))
        if len(data) == info.st_size and stamp_of(info) == stamp:
            cache.remember(path, entry)
        return entry

    def _usable(self, scope: str, path: str, entry: Entry) -> Refused | None:
        problem = None if entry.addressable else _path_problem(path)
        if problem is None and not entry.legacy_keys:
            return None
        if problem is not None:
            return Refused(scope, path, f"not addressable as a note: {problem}")
        return Refused(scope, path, _legacy_reason(entry))

    def read_home(
        self,
        scope: str,
        accept: Callable[[str], bool] | None = None,
        *,
        bodies: bool,
        contains: Sequence[str] | None = None,
    ) -> HomeRead:
        """Every usable note of one home (as entries, or as disk-cache rows), and the refused
        files.

        ``bodies`` asks for whole files (else a large file may be read only up to its
        body); ``contains`` keeps only notes whose body holds one of those literals (they
        always come as entries). Raises ``HomeReadError``.
        """
        with gc_paused():
            return self._read_home(scope, accept, bodies, contains)

    def _read_home(
        self,
        scope: str,
        accept: Callable[[str], bool] | None,
        bodies: bool,
        contains: Sequence[str] | None,
    ) -> HomeRead:
        found: list[tuple[str, Entry]] = []
        served: list[tuple[str, int]] = []
        refused: list[Refused] = []
        cache = _HomeCache(self.homes.root, str(self.home(scope)), bodies, contains is not None)
        memory_get = cache.memory.get
        rows_tried = contains is not None  # a search consults the rows through ``unneeded``
        index: dict[str, int] = {}
        usable: list[bool] = []
        rows: diskcache.Rows | None = None
        fast: _Served | None = None
        skipped: list[tuple[str, int]] = []
        if contains is None and accept is None:
            rows = cache.rows_now()
            if rows is not None:
                rows_tried = True
                index, usable = rows.index, rows.usable
                fast = (cache.memory, index, rows.stamp_columns, usable, served)
        elif contains is not None and accept is None:
            # A whole-home search: a usable row with the walk's stamp whose body holds no
            # literal is skipped inside the walk; the rows that hold one are built below.
            holding = cache.holding_now(contains)
            rows = cache.rows
            if rows is not None and holding is not None:
                skippable = list(rows.usable)
                for holder in holding:
                    skippable[holder] = False
                fast = (cache.memory, rows.index, rows.stamp_columns, skippable, skipped)
        listings = None
        if accept is None and cache.file is not None:
            listings = _Listings(cache.rows, cache.now_ns)
            cache.listings = listings
        for dir_fd, files in self._walk(scope, refused, fast, listings):
            for item in files:
                path, _name, stamp = item
                if accept is not None and not accept(path):
                    continue
                entry = memory_get(path)
                if (
                    entry is not None
                    and entry.stamp == stamp
                    and (entry.body is not None or not bodies)
                ):
                    cache.hit(path, entry)  # the hot path of a long-lived host
                else:
                    if not rows_tried:
                        rows_tried = True
                        rows = cache.consult()
                        if rows is not None:
                            index, usable = rows.index, rows.usable
                    if contains is None:
                        # The hot path of a fresh process: a usable row with the walk's stamp
                        # is served from its columns, never built.
                        row = index.get(path)
                        if row is not None and usable[row] and rows and rows.stamp(row) == stamp:
                            served.append((path, row))
                            continue
                    elif cache.unneeded(path, stamp, contains):
                        continue
                    got: Entry | Refused | None = cache.lookup(path, stamp)
                    if got is None:
                        try:
                            got = self._entry(scope, cache, dir_fd, item, head_only=not bodies)
                        except FileNotFoundError:
                            continue  # removed between listing and opening
                    if isinstance(got, Refused):
                        refused.append(got)
                        continue
                    entry = got
                problem = self._usable(scope, path, entry)
                if contains is not None and not _holds(entry, problem is not None, contains):
                    continue
                if problem is not None:
                    refused.append(problem)
                    continue
                found.append((path, entry))
        if served or skipped:
            cache.tried = True  # rows answered: the disk cache must match the walk
        cache.matched.extend(served)
        cache.matched.extend(skipped)
        if accept is None:
            cache.finish()  # only a complete walk knows which notes are gone
        return HomeRead(scope, found, cache.rows if served else None, served, refused)

    def scan(self, scope: str) -> HomeScan:
        """Metadata of every note in one home, reading only the head of large files."""
        read = self.read_home(scope, bodies=False)
        records = [read.record(index) for index in range(len(read))]
        refused = tuple(sorted(read.refused, key=lambda r: r.path))
        return HomeScan(scope, tuple(records), refused)

    def load(
        self,
        scope: str,
        accept: Callable[[str], bool] | None = None,
        contains: Sequence[str] | None = None,
    ) -> HomeLoad:
        """Every note of one home in full.

        ``accept`` filters virtual paths; ``contains`` keeps only notes whose body holds one of
        those literals.
        """
        read = self.read_home(scope, accept, bodies=True, contains=contains)
        found, refused = read.entries, read.refused
        if read.rows is not None:
            rows = read.rows
            built = ((path, rows.entry(row)) for path, row in read.rows_served)
            found = found + [(path, entry) for path, entry in built if entry is not None]
        key = ("note", scope)
        notes: list[Note] = []
        for path, entry in found:
            note = entry.memo.get(key)
            if note is None or note.path != path:
                note = Note(scope, path, entry.text(), entry.parsed())
                entry.memo[key] = note
            notes.append(note)
        return HomeLoad(scope, tuple(notes), tuple(refused))

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

    # --- maintenance --------------------------------------------------------------------

    def sweep(self, scope: str) -> int:
        """Remove stale temp files of killed writers from every folder of one home."""
        home_fd = self._home_fd(scope, create=False)
        if home_fd is None:
            return 0
        try:
            return jail.sweep_tree(home_fd, MAX_WALK_DEPTH)
        finally:
            os.close(home_fd)
