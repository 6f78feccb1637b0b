"""``notes_list`` cursors that survive writes and edits between pages.

The listing is most recently updated first, so an edit moves a note to the front: an offset
into that order skips a note edited before its page came. A cursor here names where the walk
stands instead: ``"n1:<start>:<snapshot>:<offset>:<updated>:<[scope, path]>"``.

* ``start`` is when the walk began (ms, the notes' clock). A note updated after it was edited
  (or written) during the walk.
* ``snapshot`` names the order taken at the walk's first page, held by this process and, when
  the walk has a second page, recorded in the cache (``walks``), so a fresh process (the
  ``pi-context tool`` CLI) resumes from it too; ``offset`` is the next row in it. While it can
  be found, a walk lists every note present at its start exactly once, each with its current
  record (a note deleted meanwhile is left out, a note written meanwhile is not listed).
* Otherwise (the cache is off, or the snapshot was replaced) the keyset ``(updated, scope,
  path)`` of the next row resumes the notes not edited since the start at the same place;
  notes edited since the start and present at it follow at the end, by path. None is
  skipped; a note listed and then edited may come again.

The published integer cursor (an offset into the current order) is still accepted.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from pi_context.bindings.notes import walks
from pi_context.bindings.notes.walks import Row, Rows, Through
from pi_context.bindings.tool_output import json_bytes

PREFIX = "n1:"


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
        scopes: Sequence[str] | None = None,
        texts: Callable[[], list[str]] | None = None,
    ) -> None:
        self.order = order
        self.paths = paths
        self.updated = updated
        self.scope_of = scope_of
        self.created_of = created_of
        self.scopes = scopes
        """Each note's scope by index, when the caller has the column (else ``scope_of``)."""
        self.texts = texts
        """The rows of ``order`` as ``walks`` records them, when the caller has them."""
        self.walk: tuple[str, Rows] | None = None
        """The walk last started from this very listing (its name and rows)."""

    def rows(self) -> Rows:
        """The row of every note in ``order``: views of the listing's columns (a listing is
        never changed once made)."""
        order = self.order
        scopes = self.scopes
        if scopes is None:
            scopes = [self.scope_of(index) for index in range(len(self.paths))]
        updated, paths = Through(self.updated, order), Through(self.paths, order)
        return Rows(updated, Through(scopes, order), paths)

    def row(self, index: int) -> Row:
        return self.updated[index], self.scope_of(index), self.paths[index]


def forget_snapshots() -> None:
    """Drop every walk order this process holds (what a fresh process would see)."""
    walks.forget()


def _head(start: int, name: str) -> str:
    """The part of a walk's cursors that every one of them shares."""
    return f"{PREFIX}{start}:{name}:"


def _tail(offset: int, row: Row) -> str:
    updated, scope, path = row
    return f"{offset}:{updated}:" + json.dumps([scope, path], ensure_ascii=False)


@lru_cache(maxsize=1 << 14)
def _key_bytes(scope: str, path: str) -> int:
    """The JSON bytes ``[scope, path]`` takes inside a cursor (without the quotes)."""
    return json_bytes(json.dumps([scope, path], ensure_ascii=False)) - 2


def _tail_bytes(offset: int, row: Row) -> int:
    """``json_bytes(_tail(offset, row)) - 2``: a JSON string escapes character by character,
    so a cursor's bytes are its parts' bytes added (digits and colons are one byte each)."""
    updated, scope, path = row
    return len(str(offset)) + len(str(updated)) + 2 + _key_bytes(scope, path)


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
    """The rows of one page's listing, in delivery order, and the cursor each one starts
    (``head`` and the row's ``place``: its offset in the walk and its row as the walk took it).
    ``started`` is the order a walk took at its first page (its name and rows), to be recorded
    for a fresh process when the walk has a second page."""

    def __init__(
        self,
        indices: list[int],
        head: str,
        place: Callable[[int], tuple[int, Row]],
        started: tuple[str, Rows] | None = None,
    ) -> None:
        self.indices = indices
        self.head = head
        self.place = place
        self.started = started

    def cursor_of(self, index: int) -> str:
        """The cursor that resumes the walk at row ``index`` of this page."""
        return self.head + _tail(*self.place(index))

    def widest(self, end: int) -> int:
        """The most JSON bytes ``cursor_of(i)`` takes for ``0 < i < end`` (0 for none),
        counted without making the cursors."""
        if end <= 1:
            return 0
        place = self.place
        tails = max(_tail_bytes(*place(index)) for index in range(1, end))
        return json_bytes(self.head) + tails


def resume(
    listing: Listing,
    cursor: int | str,
    selection: str,
    now_ms: int,
    root: Path | None = None,
    limit: int | None = None,
) -> Walk:
    """Where a ``notes_list`` page starts, and how its ``next_cursor`` is named. ``root`` is
    the notes root whose recorded walk orders (``walks``) a fresh process resumes from. With
    ``limit`` (the page size), a resumed walk names at most ``limit + 1`` rows: enough for
    the page and to know whether another follows."""
    if isinstance(cursor, int):  # the walk starts (0), or a published offset
        # The same listing as an earlier walk's start (nothing changed): the same order,
        # held under the same name (each cursor carries its own walk's start).
        earlier = listing.walk
        if earlier is not None and walks.find(None, earlier[0], selection) is earlier[1]:
            name, rows = earlier
        else:
            rows = listing.rows()
            name = secrets.token_hex(8)
            walks.hold(name, selection, rows)
            listing.walk = (name, rows)
        # The walk's order is the listing's own: row ``at`` is ``listing.order[at]``.
        offset = min(cursor, len(rows))
        indices = listing.order[offset:]
        walk = Walk(indices, _head(now_ms, name), lambda i: (offset + i, rows[offset + i]))
        walk.started = (name, rows)
        return walk
    parsed = _decode(cursor)
    held = walks.find(root, parsed.name, selection)
    if held is not None:
        return _held_walk(listing, held, parsed.start, parsed.name, parsed.offset, limit)
    return _keyset_walk(listing, parsed)


def _held_walk(
    listing: Listing, rows: Rows, start: int, name: str, offset: int, limit: int | None
) -> Walk:
    order = listing.order
    scopes = listing.scopes
    if scopes is None:
        where = {(listing.scope_of(i), listing.paths[i]): i for i in order}
    else:
        in_order = map(scopes.__getitem__, order)
        keys = zip(in_order, map(listing.paths.__getitem__, order), strict=True)
        where = dict(zip(keys, order, strict=True))
    wanted = len(rows) if limit is None else limit + 1
    indices: list[int] = []
    offsets: list[int] = []
    held_scopes, held_paths = rows.scopes, rows.paths
    for at in range(offset, len(rows)):
        index = where.get((held_scopes[at], held_paths[at]))
        if index is not None:  # deleted since the walk began: nothing to list
            indices.append(index)
            offsets.append(at)
            if len(indices) >= wanted:
                break
    # The keyset part names the row as it stood at the start (for a process without it).
    return Walk(indices, _head(start, name), lambda i: (offsets[i], rows[offsets[i]]))


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
    return Walk(indices, _head(start, "-"), lambda i: (0, listing.row(indices[i])))
