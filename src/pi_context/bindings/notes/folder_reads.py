"""Reading a notes home folder by folder: one folder's listing and the stat of each note in
it, one file read and parsed (or refused), and the patch reads a resident view
(``resident.py``) merges into a read it holds: the notes of some folders, or just some note
files, by the same per-file rules as a whole read (``store.py``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.access import _Access
from pi_context.bindings.notes.address import NOTE_SUFFIX, RESERVED_PREFIX
from pi_context.bindings.notes.cache import MAX_FILE_BYTES, Entry, settled, stamp_of
from pi_context.bindings.notes.errors import HomeReadError, NoteError
from pi_context.bindings.notes.frontmatter import parse_note
from pi_context.bindings.notes.homecache import (
    _holds,
    _HomeCache,
    _Listings,
    _plausible,
    _Served,
    _Walked,
)
from pi_context.bindings.notes.records import (
    TWIN_REASON,
    HomeRead,
    Refused,
    _decode,
    _legacy_reason,
    _mtime_ms,
    _path_problem,
)

HEAD_BYTES = 8192
"""Listing reads this much of each file; the metadata block nearly always fits."""


class _FolderReads(_Access):
    """The store's reads of one folder, and of some files, of a home."""

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
                refused.append(Refused(scope, shown, TWIN_REASON))
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

    def _read_fd(self, scope: str) -> int | None:
        """The home folder of ``scope`` opened for reading (None when it does not exist);
        a home that cannot be opened is a ``HomeReadError`` naming why."""
        try:
            return self._home_fd(scope, create=False)
        except NoteError as exc:
            message = f"cannot read the {scope} home: {exc.message}"
            raise HomeReadError(message, scope=scope) from exc

    def _admit(
        self,
        scope: str,
        path: str,
        entry: Entry,
        contains: Sequence[str] | None,
        found: list[tuple[str, Entry]],
        refused: list[Refused],
    ) -> None:
        """A note read from disk into ``found``, or its problem into ``refused``; a search
        (``contains``) keeps only notes holding a literal (a refused one where its name
        does)."""
        problem = self._usable(scope, path, entry)
        if contains is not None and not _holds(entry, problem is not None, contains):
            return
        if problem is not None:
            refused.append(problem)
            return
        found.append((path, entry))

    def read_folders(
        self, scope: str, folders: set[str], bodies: bool, contains: Sequence[str] | None
    ) -> tuple[set[str], HomeRead]:
        """The notes of just these folders of a home (relative paths as on disk, each read
        on its own, not below it), by the same rules as a whole read: what a resident view
        (``resident.py``) merges into a read it holds after a change in those folders.
        Returns the folders read (a folder that is gone holds nothing) and what they hold."""
        found: list[tuple[str, Entry]] = []
        refused: list[Refused] = []
        cache = _HomeCache(self.homes.root, str(self.home(scope)), bodies, contains is not None)
        home_fd = self._read_fd(scope)
        if home_fd is None:
            return folders, HomeRead(scope, [], None, [], [])
        try:
            for folder in sorted(folders):
                fd = self._patch_folder(home_fd, folder)
                if fd is None:
                    continue
                try:
                    files, _below = self._files(scope, fd, folder + "/" if folder else "", refused)
                    for item in files:
                        self._patch_note(scope, cache, fd, item, bodies, contains, found, refused)
                finally:
                    os.close(fd)
        finally:
            os.close(home_fd)
        return folders, HomeRead(scope, found, None, [], refused)

    def read_notes(
        self, scope: str, notes: set[str], bodies: bool, contains: Sequence[str] | None
    ) -> tuple[set[str], HomeRead]:
        """Just these note files of a home (relative paths with ASCII names, as a watcher
        reported them), each read again unless this process holds it with the same stat,
        older than the racy window (the store's per-file rules): what a resident view
        merges into a read it holds after those files changed. A name that is gone, or is
        no regular file now, holds nothing. Returns the notes read and what they hold."""
        found: list[tuple[str, Entry]] = []
        refused: list[Refused] = []
        cache = _HomeCache(self.homes.root, str(self.home(scope)), bodies, contains is not None)
        home_fd = self._read_fd(scope)
        if home_fd is None:
            return notes, HomeRead(scope, [], None, [], [])
        by_folder: dict[str, list[str]] = {}
        for path in notes:
            folder, _, name = path.rpartition("/")
            by_folder.setdefault(folder, []).append(name)
        try:
            for folder, names in sorted(by_folder.items()):
                fd = self._patch_folder(home_fd, folder)
                if fd is None:
                    continue
                try:
                    for name in sorted(names):
                        if not name.endswith(NOTE_SUFFIX) or name.startswith(RESERVED_PREFIX):
                            continue
                        try:
                            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                        except OSError:
                            continue  # gone (or unreachable): it holds no note
                        if not stat.S_ISREG(info.st_mode):
                            continue
                        path = f"{folder}/{name}" if folder else name
                        item = (path, name, stamp_of(info))
                        self._patch_note(scope, cache, fd, item, bodies, contains, found, refused)
                finally:
                    os.close(fd)
        finally:
            os.close(home_fd)
        return notes, HomeRead(scope, found, None, [], refused)

    @staticmethod
    def _patch_folder(home_fd: int, folder: str) -> int | None:
        """An open descriptor of ``folder`` below the home, or None if it holds no notes."""
        try:
            return jail.walk_dirs(
                home_fd, folder.split("/") if folder else [], create=False, shown=""
            )
        except jail.JailError:
            return None  # a link or a file now: it holds no notes

    def _patch_note(
        self,
        scope: str,
        cache: _HomeCache,
        fd: int,
        item: _Walked,
        bodies: bool,
        contains: Sequence[str] | None,
        found: list[tuple[str, Entry]],
        refused: list[Refused],
    ) -> None:
        """One file of a patch, by a whole read's rules: into ``found`` or ``refused``."""
        path, _name, stamp = item
        entry = cache.memory.get(path)
        if entry is None or entry.stamp != stamp or (bodies and entry.body is None):
            try:
                got = self._entry(scope, cache, fd, item, head_only=not bodies)
            except FileNotFoundError:
                return
            if isinstance(got, Refused):
                refused.append(got)
                return
            entry = got
        self._admit(scope, path, entry, contains, found, refused)
