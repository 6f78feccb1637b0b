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

import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import pi_context.support.cache as cache
from pi_context.bindings.notes.diskcache import cache_file

Row = tuple[int, str, str]

HELD = 8
"""Walks this process holds at once (the oldest is dropped first)."""
SLOTS = 16
"""Snapshot files per notes root in the cache."""
MAGIC = b"PINOTEW2"
ROWS_MAX = 1_000_000
"""A recorded snapshot longer than this is not read back (it is not one we wrote)."""

_held: OrderedDict[str, tuple[str, list[Row]]] = OrderedDict()
_lock = threading.Lock()


def _file(root: Path, walk: str) -> Path | None:
    slot = zlib.crc32(walk.encode("utf-8", "surrogatepass")) % SLOTS
    return cache_file(root, f"{root}\0walk\0{slot}")


def hold(walk: str, selection: str, rows: list[Row]) -> None:
    """Keep ``rows`` as walk ``walk``'s order in this process."""
    with _lock:
        _held[walk] = (selection, rows)
        _held.move_to_end(walk)
        while len(_held) > HELD:
            _held.popitem(last=False)


def record(
    root: Path, walk: str, selection: str, rows: list[Row], texts: Sequence[str] | None = None
) -> None:
    """Record walk ``walk``'s order in the cache too (a fresh process resumes from it). Never
    raises: a snapshot that cannot be recorded only costs the exactness of a later resume.
    ``texts``, when given, are ``rows`` already encoded one by one (see ``_joined``)."""
    file = _file(root, walk)
    if file is None:
        return
    data = _encode(walk, selection, rows) if texts is None else _joined(walk, selection, texts)
    head = MAGIC + zlib.crc32(data).to_bytes(4, "little")
    try:
        cache.private_dir(file.parent)
        cache.record("notes", file, [cache.source_of(root)])
        cache.write_private(file, head, data)
    except OSError:
        return


def _joined(walk: str, selection: str, texts: Sequence[str]) -> bytes:
    """As ``_encode``, from each row already encoded (``updated NUL scope NUL path``)."""
    return "\0".join([walk, selection, *texts]).encode("utf-8", "surrogatepass")


def _encode(walk: str, selection: str, rows: list[Row]) -> bytes:
    """``walk``, ``selection`` and each row's three fields, NUL-separated (no path, scope,
    walk name or JSON selection holds a NUL): built by slices, not a loop per row."""
    flat: list[str] = [""] * (3 * len(rows))
    if rows:
        updated, scopes, paths = zip(*rows, strict=True)
        flat[0::3] = map(str, updated)
        flat[1::3] = scopes
        flat[2::3] = paths
    return "\0".join([walk, selection, *flat]).encode("utf-8", "surrogatepass")


def find(root: Path | None, walk: str, selection: str) -> list[Row] | None:
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


def _read(root: Path, walk: str, selection: str) -> list[Row] | None:
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
    return list(zip(map(int, stamps), fields[3::3], fields[4::3], strict=True))


def forget() -> None:
    """Drop every walk this process holds (what a fresh process would see; the cache stays)."""
    with _lock:
        _held.clear()
