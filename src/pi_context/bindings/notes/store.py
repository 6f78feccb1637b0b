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

``NoteStore`` is this module's reads, on top of ``writes.py`` (the mutations) and
``access.py`` (reaching a note's folder); a home is read through ``homecache.py``, and what
the store hands out is in ``records.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from pi_context.bindings.notes import diskcache, jail, resident
from pi_context.bindings.notes.access import MAX_WALK_DEPTH, lock_name
from pi_context.bindings.notes.cache import (
    Entry,
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
from pi_context.bindings.notes.folder_reads import _FolderReads
from pi_context.bindings.notes.homecache import (
    _HomeCache,
    _Listings,
    _Served,
    _Walked,
)
from pi_context.bindings.notes.records import (
    NOTE_MAX_BYTES,
    HomeLoad,
    HomeRead,
    HomeScan,
    Note,
    NoteRecord,
    Refused,
    WriteOutcome,
    _legacy_reason,
    note_of,
)
from pi_context.bindings.notes.writes import _Writes
from pi_context.support.gc_pause import gc_paused

__all__ = [
    "MAX_WALK_DEPTH",
    "NOTE_MAX_BYTES",
    "HomeLoad",
    "HomeRead",
    "HomeScan",
    "Note",
    "NoteRecord",
    "NoteStore",
    "Refused",
    "WriteOutcome",
    "lock_name",
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


class NoteStore(_FolderReads, _Writes):
    """The five homes of one host identity."""

    # --- reads --------------------------------------------------------------------------

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
        home_fd = self._read_fd(scope)
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
            if accept is None and resident.enabled():
                return resident.read(
                    self,
                    scope,
                    bodies,
                    contains,
                    lambda: self._read_home(scope, None, bodies, contains),
                    lambda: self._read_home(scope, None, True, None),
                )
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
                self._admit(scope, path, entry, contains, found, refused)
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
        notes = [note_of(scope, path, entry) for path, entry in found]
        return HomeLoad(scope, tuple(notes), tuple(refused))

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
