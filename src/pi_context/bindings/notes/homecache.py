"""The notes store's home cache: one read of one home through this process's cache and the
disk cache, what a walk reuses of a stored listing, and what it writes back."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from pi_context.bindings.notes import diskcache, diskcache_save
from pi_context.bindings.notes.address import (
    NOTE_SUFFIX,
    RESERVED_PREFIX,
)
from pi_context.bindings.notes.cache import (
    CACHE,
    Entry,
    Stamp,
    cacheable,
)
from pi_context.bindings.notes.records import _path_problem

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
        self.seen: list[diskcache_save.Listing] = []
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
        if entry.storable or (entry.storable is None and diskcache_save.storable(path, entry)):
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
            if diskcache_save.storable(path, entry):
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
        diskcache_save.save(
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
