"""``notes_list`` cursors that survive writes and edits between pages.

The listing is most recently updated first, so an edit moves a note to the front: an offset
into that order skips a note edited before its page came. A cursor here names where the walk
stands instead: ``"n1:<start>:<snapshot>:<offset>:<updated>:<[scope, path]>"``.

* ``start`` is when the walk began (ms, the notes' clock). A note updated after it was edited
  (or written) during the walk.
* ``snapshot`` names the order taken at the walk's first page, held by this process (the MCP
  server, a runtime: the resident hosts); ``offset`` is the next row in it. While it is held,
  a walk lists every note present at its start exactly once, each with its current record
  (a note deleted meanwhile is left out, a note written meanwhile is not listed).
* Otherwise (another process, or the snapshot was dropped) the keyset ``(updated, scope,
  path)`` of the next row resumes the notes not edited since the start at the same place;
  notes edited since the start and present at it follow at the end, by path. None is
  skipped; a note listed and then edited may come again.

The published integer cursor (an offset into the current order) is still accepted.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import count

PREFIX = "n1:"
SNAPSHOTS_MAX = 4
"""Walks whose order this process holds at once (the oldest is dropped first)."""

Row = tuple[int, str, str]
"""(updated ms, scope, path) of one listed note."""


class Listing:
    """Every note a listing selected, by index, with its order (``order``) as published:
    most recently updated first, then path, then scope."""

    def __init__(
        self,
        order: list[int],
        paths: Sequence[str],
        updated: Sequence[int],
        scope_of: Callable[[int], str],
        created_of: Callable[[int], int],
    ) -> None:
        self.order = order
        self.paths = paths
        self.updated = updated
        self.scope_of = scope_of
        self.created_of = created_of

    def row(self, index: int) -> Row:
        return self.updated[index], self.scope_of(index), self.paths[index]


class _Snapshot:
    def __init__(self, selection: str, rows: list[Row]) -> None:
        self.selection = selection
        self.rows = rows  # (updated at the start, scope, path) in walk order


_snapshots: OrderedDict[str, _Snapshot] = OrderedDict()
_lock = threading.Lock()
_ids = count(1)


def _remember(snapshot: _Snapshot) -> str:
    with _lock:
        name = str(next(_ids))
        _snapshots[name] = snapshot
        while len(_snapshots) > SNAPSHOTS_MAX:
            _snapshots.popitem(last=False)
    return name


def _held(name: str, selection: str) -> _Snapshot | None:
    with _lock:
        snapshot = _snapshots.get(name)
        if snapshot is not None:
            _snapshots.move_to_end(name)
    return snapshot if snapshot is not None and snapshot.selection == selection else None


def forget_snapshots() -> None:
    """Drop every held walk order (what another process would see)."""
    with _lock:
        _snapshots.clear()


def _encode(start: int, name: str, offset: int, row: Row) -> str:
    updated, scope, path = row
    return f"{PREFIX}{start}:{name}:{offset}:{updated}:" + json.dumps(
        [scope, path], ensure_ascii=False
    )


class CursorError(ValueError):
    """A cursor ``notes_list`` did not issue."""


class _Cursor:
    def __init__(self, start: int, name: str, offset: int, row: Row) -> None:
        self.start, self.name, self.offset, self.row = start, name, offset, row


def _bad(cursor: object) -> CursorError:
    del cursor
    return CursorError(
        "cursor must be 0, or a next_cursor exactly as notes_list returned it; start again "
        "without a cursor"
    )


def _decode(cursor: str) -> _Cursor:
    if not cursor.startswith(PREFIX):
        raise _bad(cursor)
    parts = cursor[len(PREFIX) :].split(":", 4)
    if len(parts) != 5 or not all(p.isdigit() for p in (parts[0], parts[2], parts[3])):
        raise _bad(cursor)
    try:
        scope, path = json.loads(parts[4])
    except (ValueError, TypeError):
        raise _bad(cursor) from None
    if not isinstance(scope, str) or not isinstance(path, str):
        raise _bad(cursor)
    return _Cursor(int(parts[0]), parts[1], int(parts[2]), (int(parts[3]), scope, path))


def _after(row: Row, key: Row) -> bool:
    """Whether ``row`` comes at or after ``key`` in the published order."""
    return (-row[0], row[2], row[1]) >= (-key[0], key[2], key[1])


class Walk:
    """The rows of one page's listing, in delivery order, and the cursor each one starts."""

    def __init__(self, indices: list[int], cursor_of: Callable[[int], str]) -> None:
        self.indices = indices
        self.cursor_of = cursor_of


def resume(listing: Listing, cursor: int | str, selection: str, now_ms: int) -> Walk:
    """Where a ``notes_list`` page starts, and how its ``next_cursor`` is named."""
    if isinstance(cursor, int):  # the walk starts (0), or a published offset
        start = now_ms
        snapshot = _Snapshot(selection, [listing.row(i) for i in listing.order])
        name = _remember(snapshot)
        return _held_walk(listing, snapshot, start, name, cursor)
    parsed = _decode(cursor)
    held = _held(parsed.name, selection)
    if held is not None:
        return _held_walk(listing, held, parsed.start, parsed.name, parsed.offset)
    return _keyset_walk(listing, parsed)


def _held_walk(listing: Listing, snapshot: _Snapshot, start: int, name: str, offset: int) -> Walk:
    where = {(listing.scope_of(i), listing.paths[i]): i for i in listing.order}
    rows = snapshot.rows
    indices: list[int] = []
    offsets: list[int] = []
    for at in range(offset, len(rows)):
        index = where.get((rows[at][1], rows[at][2]))
        if index is not None:  # deleted since the walk began: nothing to list
            indices.append(index)
            offsets.append(at)
    # The keyset part names the row as it stood at the start (for a process without it).
    return Walk(indices, lambda i: _encode(start, name, offsets[i], rows[offsets[i]]))


def _keyset_walk(listing: Listing, parsed: _Cursor) -> Walk:
    start, key = parsed.start, parsed.row
    edited_phase = key[0] > start  # the cursor stands among the notes edited during the walk
    unchanged: list[int] = []
    edited: list[int] = []
    for index in listing.order:
        if listing.updated[index] <= start:
            if not edited_phase and _after(listing.row(index), key):
                unchanged.append(index)
        elif listing.created_of(index) <= start:  # present at the start, edited since
            edited.append(index)
    edited.sort(key=lambda i: (listing.paths[i], listing.scope_of(i)))
    if edited_phase:
        at = (key[2], key[1])
        edited = [i for i in edited if (listing.paths[i], listing.scope_of(i)) >= at]
    indices = unchanged + edited
    return Walk(indices, lambda i: _encode(start, "-", 0, listing.row(indices[i])))
