"""The walk snapshots of the notes tools' paging: the order a ``notes_list`` or ``notes_search``
walk took at its first page, so that its later pages, in this process or in a fresh one (the
``pi-context tool`` CLI, another MCP server), list every note present at its start exactly once.

A snapshot is held in this process (the last ``HELD`` walks) and, when the walk has a second
page, recorded in the cache beside the notes caches: ``notes/<key>.bin``, one of ``SLOTS`` files
per notes root (a new walk replaces the oldest of its slot), recorded as belonging to the notes
root, so it is pruned with it and never outlives it. Its content is never trusted: a file that is
short, foreign, damaged or of another walk is ignored, and a snapshot only orders notes; what a
page shows is always read from the notes themselves (a row that names no note is passed over).
``PI_CONTEXT_NOTES_CACHE=0`` keeps snapshots in the process only.

A row is ``(updated ms, scope, path)``: the note as the walk found it at its start.
"""

from __future__ import annotations

import contextlib
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

import pi_context.support.cache as cache
from pi_context.bindings.notes.diskcache import ENABLE_ENV, cache_file
from pi_context.support.cache_dir import CACHE_ENV

Row = tuple[int, str, str]
T = TypeVar("T")


class Through(Sequence[T]):
    """``column`` read through ``order``: item ``i`` is ``column[order[i]]`` (a walk's rows
    over a listing's columns without copying them)."""

    __slots__ = ("column", "order")

    def __init__(self, column: Sequence[T], order: Sequence[int]) -> None:
        self.column, self.order = column, order

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self.column[at] for at in self.order[index]]
        return self.column[self.order[index]]

    def __iter__(self) -> Iterator[T]:
        return map(self.column.__getitem__, self.order)


class Rows:
    """A walk's rows held as three columns: a held walk of 10,000 notes is three lists (or
    three views of a listing's lists), not 10,000 tuples that a long-lived host's garbage
    collector scans again and again."""

    __slots__ = ("paths", "scopes", "updated")

    def __init__(self, updated: Sequence[int], scopes: Sequence[str], paths: Sequence[str]) -> None:
        self.updated, self.scopes, self.paths = updated, scopes, paths

    @staticmethod
    def of(rows: Sequence[Row]) -> Rows:
        if not rows:
            return Rows([], [], [])
        updated, scopes, paths = zip(*rows, strict=True)
        return Rows(list(updated), list(scopes), list(paths))

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> Row:
        return self.updated[index], self.scopes[index], self.paths[index]

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Rows):
            return NotImplemented
        mine = (list(self.paths), list(self.scopes), list(self.updated))
        return mine == (list(other.paths), list(other.scopes), list(other.updated))

    __hash__ = None  # type: ignore[assignment]


HELD = 8
"""Walks this process holds at once (the oldest is dropped first)."""
SLOTS = 16
"""Snapshot files per notes root in the cache."""
MAGIC = b"PINOTEW2"
ROWS_MAX = 1_000_000
"""A recorded snapshot longer than this is not read back (it is not one we wrote)."""

_held: OrderedDict[str, tuple[str, Rows]] = OrderedDict()
_lock = threading.Lock()
Identity = tuple[int, int, int, int]
_recorded: OrderedDict[str, tuple[Path, str, Rows, Identity | None, tuple[object, ...]]] = (
    OrderedDict()
)
"""What this process last recorded for each walk, where (a walk of an unchanged order is not
written again while its file is the one written, in the cache the environment names)."""


def _where(root: Path) -> tuple[object, ...]:
    """What names the cache file of a walk besides its name: the notes root and the
    environment the cache folder comes from."""
    environ = os.environ
    names = (CACHE_ENV, "XDG_CACHE_HOME", "HOME", ENABLE_ENV)
    return (root, *map(environ.get, names))


def _file(root: Path, walk: str) -> Path | None:
    slot = zlib.crc32(walk.encode("utf-8", "surrogatepass")) % SLOTS
    return cache_file(root, f"{root}\0walk\0{slot}")


def hold(walk: str, selection: str, rows: Rows) -> None:
    """Keep ``rows`` as walk ``walk``'s order in this process."""
    with _lock:
        _held[walk] = (selection, rows)
        _held.move_to_end(walk)
        while len(_held) > HELD:
            _held.popitem(last=False)


def record(
    root: Path,
    walk: str,
    selection: str,
    rows: Rows,
    texts: Callable[[], Sequence[str]] | None = None,
) -> None:
    """Record walk ``walk``'s order in the cache too (a fresh process resumes from it). Never
    raises: a snapshot that cannot be recorded only costs the exactness of a later resume.
    ``texts``, when given, makes ``rows`` already encoded one by one (see ``_joined``)."""
    where = _where(root)
    with _lock:
        done = _recorded.get(walk)
    if (
        done is not None
        and done[3] is not None
        and done[4] == where
        and done[1] == selection
        and done[2] == rows
        and done[3] == _identity(done[0])
    ):
        return  # this very order is recorded there, and the file is still the one written
    file = _file(root, walk)
    if file is None:
        return
    data = _encode(walk, selection, rows) if texts is None else _joined(walk, selection, texts())
    head = MAGIC + zlib.crc32(data).to_bytes(4, "little")
    try:
        cache.private_dir(file.parent)
        cache.record("notes", file, [cache.source_of(root)])
        # The slot's earlier walk goes first: renaming over it would make the filesystem
        # (ext4's replace-by-rename rule) flush the new file's data before the rename.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(file)
        cache.write_private(file, head, data)
    except OSError:
        return
    written = _identity(file)
    with _lock:
        _recorded[walk] = (file, selection, rows, written, where)
        _recorded.move_to_end(walk)
        while len(_recorded) > HELD:
            _recorded.popitem(last=False)


def _identity(file: Path) -> Identity | None:
    """(device, inode, size, mtime) of ``file``: another write there changes it."""
    try:
        info = os.stat(file, follow_symlinks=False)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _joined(walk: str, selection: str, texts: Sequence[str]) -> bytes:
    """As ``_encode``, from each row already encoded (``updated NUL scope NUL path``)."""
    return "\0".join([walk, selection, *texts]).encode("utf-8", "surrogatepass")


def _encode(walk: str, selection: str, rows: Rows) -> bytes:
    """``walk``, ``selection`` and each row's three fields, NUL-separated (no path, scope,
    walk name or JSON selection holds a NUL): built by slices, not a loop per row."""
    flat: list[str] = [""] * (3 * len(rows))
    flat[0::3] = map(str, rows.updated)
    flat[1::3] = rows.scopes
    flat[2::3] = rows.paths
    return "\0".join([walk, selection, *flat]).encode("utf-8", "surrogatepass")


def find(root: Path | None, walk: str, selection: str) -> Rows | None:
    """Walk ``walk``'s order over ``selection``: held here, else recorded in the cache of
    notes root ``root`` (``None``: held here only)."""
    with _lock:
        held = _held.get(walk)
        if held is not None:
            _held.move_to_end(walk)
    if held is not None:
        return held[1] if held[0] == selection else None
    rows = None if root is None else _read(root, walk, selection)
    if rows is not None:
        hold(walk, selection, rows)
    return rows


def _read(root: Path, walk: str, selection: str) -> Rows | None:
    file = _file(root, walk)
    if file is None:
        return None
    try:
        with open(file, "rb") as handle:  # noqa: PTH123 - a plain read of our own file
            raw = handle.read(64 << 20)
    except OSError:
        return None
    data = raw[len(MAGIC) + 4 :]
    if raw[: len(MAGIC)] != MAGIC or raw[len(MAGIC) : len(MAGIC) + 4] != zlib.crc32(data).to_bytes(
        4, "little"
    ):
        return None
    try:
        fields = data.decode("utf-8", "surrogatepass").split("\0")
    except UnicodeDecodeError:
        return None
    if len(fields) < 2 or (len(fields) - 2) % 3 or fields[0] != walk or fields[1] != selection:
        return None
    if (len(fields) - 2) // 3 > ROWS_MAX:
        return None
    stamps = fields[2::3]
    if not all(stamp.isdigit() and stamp.isascii() and len(stamp) < 20 for stamp in stamps):
        return None
    return Rows(list(map(int, stamps)), fields[3::3], fields[4::3])


def forget() -> None:
    """Drop every walk this process holds (what a fresh process would see; the cache stays)."""
    with _lock:
        _held.clear()
        _recorded.clear()
