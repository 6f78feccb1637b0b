"""The columns a ``notes_list`` or ``notes_search`` page is cut from, computed once per home
read: a resident host (``resident.py``) hands back the very read it holds while nothing
changed, so a call pays for the columns of the homes that changed since the last call, not
for every note of every home; and when a few notes of a home changed (the resident view
patched its read), for those notes only.

For a listing: each note's path, update time, whether it is crumpled and where its record
comes from, with the notes sorted in the published list order (newest first, then path);
the listing of several homes (``Merged``) merges those sorted runs (then scope, then home).
Columns and listings of a patched read are derived from the earlier ones: the changed notes
are appended and moved in the orders by bisection, never merged again (``derive``). For a
search: each hit's path and whether it is crumpled, the hits in path order.

What is memoized is keyed by the read object itself (held, so its identity is never reused)
and bounded (``HELD``, ``LATEST``, ``MERGED``): a read that is no longer handed out drops out.
Nothing here reads the filesystem; the reads come from the store by its never-stale rules.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, insort
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import eq
from typing import Any, TypeVar

from pi_context.bindings.notes.frontmatter import crumpled_at
from pi_context.bindings.notes.records import HomeRead, NoteRecord

HELD = 48
"""Memoized columns at once (a few kinds for each of the five homes, and recent searches)."""

T = TypeVar("T")
Change = tuple[list[int], int, list[int]]
"""How a read differs from an earlier one (``ListColumns.change``)."""

_memo: OrderedDict[tuple[int, str], tuple[HomeRead, object]] = OrderedDict()
_lock = threading.Lock()
GROW = threading.Lock()
"""Held while columns shared along a chain of derived ones grow (``ListColumns.derive``)."""


def _memoized(read: HomeRead, kind: str, make: Callable[[HomeRead], T]) -> T:
    key = (id(read), kind)
    with _lock:
        held = _memo.get(key)
        if held is not None and held[0] is read:
            _memo.move_to_end(key)
            return held[1]  # type: ignore[return-value]
    made = make(read)
    with _lock:
        _memo[key] = (read, made)
        while len(_memo) > HELD:
            _memo.popitem(last=False)
    return made


_held: OrderedDict[tuple[object, ...], tuple[list[object], Any]] = OrderedDict()
HELD_ORDERS = 8
"""Orders ``held`` keeps at once (a few recent searches)."""


def held(key: tuple[object, ...], parts: list[Any], make: Callable[[], T]) -> T:
    """``make()`` for ``key``, made once while ``parts`` (what it is made of: columns, which
    share their items with the last ones when unchanged, so comparing them is quick) stay
    equal to the ones it was made of."""
    with _lock:
        found = _held.get(key)
        if found is not None and found[0] == parts:
            _held.move_to_end(key)
            return found[1]  # type: ignore[no-any-return]
    made = make()
    with _lock:
        _held[key] = (list(parts), made)
        while len(_held) > HELD_ORDERS:
            _held.popitem(last=False)
    return made


FORGET: list[Callable[[], None]] = []
"""What else ``forget`` drops (the merged listings made of these columns, ``list_merge``)."""


def forget() -> None:
    """Drop every memoized column (tests: what a fresh process would hold)."""
    with _lock:
        _memo.clear()
        _latest.clear()
        _held.clear()
    for also in FORGET:
        also()


PATCH_MAX = 64
"""Notes changed at once (gone and added) up to which columns and listings are derived."""
LINEAGE = 8
"""Changes each columns remember: a listing built that many reads of a home ago follows them."""

_serials = count(1)
_latest: OrderedDict[str, list[ListColumns]] = OrderedDict()
"""The last columns made for each scope (a few: several homes share the agent scope)."""


class ListColumns:
    """One home read's listing columns, by a local index of the columns' own: ``paths``,
    ``updated``, ``crumpled``, ``sources`` (the read's ``(path, entry)`` or ``(path, row)``
    pair) and ``served`` (whether that pair is a disk-cache row); and ``live`` /
    ``crumpled_order``: the local indices of the live and of the crumpled notes, each newest
    first, then by path.

    Made for a read once (a full sort), or derived from the columns of an earlier read of the
    same home (``derive``): a read the resident view patched (a few notes re-read) keeps the
    other notes' very pairs, so the derived columns share the earlier ones, append the changed
    notes under new local indices and move them in copies of the two orders by bisection. A
    local index means one pair forever along such a chain (columns only grow), and
    ``lineage`` lists the last changes (``serial`` before, the local indices removed and
    added), so a merged listing built over earlier columns follows them (``Merged``)."""

    def __init__(self, read: HomeRead | None = None) -> None:
        if read is None:  # filled in by ``derive``
            return
        self.rows = read.rows
        self.entries = read.entries  # the read's own lists, compared by the next derivation
        self.served_pairs = read.rows_served
        count_entries = len(read.entries)
        self.entry_at = list(range(count_entries))
        self.served_at = list(range(count_entries, len(read)))
        self.sources: list[tuple[str, Any]] = [*read.entries, *read.rows_served]
        self.served = [False] * count_entries + [True] * len(read.rows_served)
        self.paths = read.paths()
        self.updated = read.updated_at()
        self.crumpled = read.crumpled()
        order = list(range(len(self.paths)))
        # Stable sorts with C key functions, least significant key first.
        order.sort(key=self.paths.__getitem__)
        order.sort(key=self.updated.__getitem__, reverse=True)
        marks = self.crumpled
        self.live = [index for index in order if not marks[index]]
        self.crumpled_order = [index for index in order if marks[index]]
        self._texts: list[str] | None = None
        self.records: dict[int, NoteRecord] = {}
        """Records built (by local index), shared along a chain of derived columns."""
        self.shown: dict[int, tuple[str, object, Any, int]] = {}
        """Rows a listing page showed (by local index; shared as ``records``): the address
        and time zone they were made for, the row and its JSON bytes (``tool_calls``)."""
        self.serial = next(_serials)
        self.lineage: tuple[tuple[int, list[int], list[int]], ...] = ()

    def __len__(self) -> int:
        return len(self.entry_at) + len(self.served_at)

    def key(self, index: int) -> tuple[int, str]:
        """Note ``index``'s place in the list order (newest first, then path)."""
        return -self.updated[index], self.paths[index]

    def row_texts(self, scope: str, size: int) -> list[str]:
        """The walk row (``updated NUL scope NUL path``, as ``walks`` records it) of each of
        the first ``size`` notes, by local index (built once, grown with the columns)."""
        with GROW:
            texts = self._texts
            if texts is None:
                head = "\0" + scope + "\0"
                pairs = zip(self.updated, self.paths, strict=True)
                texts = self._texts = [f"{updated}{head}{path}" for updated, path in pairs]
            while len(texts) < size:
                at = len(texts)
                texts.append(f"{self.updated[at]}\0{scope}\0{self.paths[at]}")
            return texts[:size]

    def record(self, scope: str, index: int) -> NoteRecord:
        """Note ``index`` as a listing record (built once)."""
        made = self.records.get(index)
        if made is None:
            path, source = self.sources[index]
            if self.served[index]:
                rows = self.rows
                assert rows is not None
                crumpled = crumpled_at(rows.extra_lines(source))
                made = NoteRecord(scope, path, rows.meta(source), rows.size_bytes(source), crumpled)
            else:
                made = NoteRecord(
                    scope, path, source.meta, source.size_bytes, crumpled_at(source.extra_lines)
                )
            self.records[index] = made
        return made

    def change(self, read: HomeRead) -> Change | None:
        """How ``read`` differs from the read these columns were made for, if it is a later
        read of the same home that kept the other notes' pairs (the resident view's patch):
        the positions of its entries and served rows gone, and how many entries were kept
        (the rest were appended). None when it is not (or changed too much)."""
        if read.rows is not self.rows:
            return None
        entries = _removals(self.entries, read.entries)
        served = _removals(self.served_pairs, read.rows_served)
        if entries is None or served is None or served[1] < len(read.rows_served):
            return None  # a patch never adds a disk-cache row
        change = (entries[0], entries[1], served[0])
        appended = len(read.entries) - entries[1]
        if len(entries[0]) + len(served[0]) + appended > PATCH_MAX:
            return None
        if len(self.paths) + appended > len(read) + slack(len(read)):
            return None  # mostly replaced notes: sorted afresh, the columns compacted
        return change

    def derive(self, read: HomeRead, change: Change | None = None) -> ListColumns | None:
        """These columns moved on to ``read`` (``change``, by default ``self.change(read)``):
        ``self`` when nothing changed, None when ``read`` is not a patch of the read they
        were made for (it is then sorted afresh)."""
        if change is None:
            change = self.change(read)
            if change is None:
                return None
        entries_gone, kept, served_gone = change
        appended = read.entries[kept:]
        if not (entries_gone or served_gone or appended):
            return self
        removed = [self.entry_at[at] for at in entries_gone]
        removed += [self.served_at[at] for at in served_gone]
        child = ListColumns()
        child.rows, child.entries, child.served_pairs = self.rows, read.entries, read.rows_served
        child.entry_at = _without(self.entry_at, entries_gone)
        child.served_at = _without(self.served_at, served_gone)
        # Columns only grow, and an index names one note forever: they are shared along the
        # chain (and grown under ``GROW``); the orders are the child's own.
        child.sources, child.served = self.sources, self.served
        child.paths, child.updated, child.crumpled = self.paths, self.updated, self.crumpled
        child._texts = self._texts
        child.live, child.crumpled_order = self.live.copy(), self.crumpled_order.copy()
        for index in removed:
            held = child.crumpled_order if child.crumpled[index] else child.live
            at = bisect_left(held, child.key(index), key=child.key)
            if at >= len(held) or held[at] != index:
                return None  # not where the order says: never guess, sort afresh
            del held[at]
        added: list[int] = []
        for pair in appended:
            path, entry = pair
            with GROW:
                index = len(child.paths)
                child.sources.append(pair)
                child.served.append(False)
                child.paths.append(path)
                child.updated.append(entry.meta.updated_at)
                child.crumpled.append(crumpled_at(entry.extra_lines) is not None)
            child.entry_at.append(index)
            held = child.crumpled_order if child.crumpled[index] else child.live
            insort(held, index, key=child.key)
            added.append(index)
        child.records, child.shown = self.records, self.shown
        for index in removed:
            self.records.pop(index, None)
            self.shown.pop(index, None)
        child.serial = next(_serials)
        step = (self.serial, removed, added)
        child.lineage = (*self.lineage, step)[-LINEAGE:]
        return child


def slack(notes: int) -> int:
    """Replaced notes columns of ``notes`` notes keep before they are made afresh (they hold
    what the replaced notes were until then)."""
    return max(PATCH_MAX, notes // 4)


def _removals(old: list[T], new: list[T]) -> tuple[list[int], int] | None:
    """The positions of ``old`` gone from ``new`` and how many of ``new`` are the rest of
    ``old`` (the others were appended), if ``new`` is ``old`` less a few items (at most
    ``PATCH_MAX``) plus items appended; else None. Found by bisection (a patched read keeps the
    others in their order), then checked whole."""
    gone: list[int] = []
    shift = 0  # items of ``old`` gone before the place looked at
    low = 0
    while True:
        high = min(len(new), len(old) - shift)
        if low >= high or new[high - 1] is old[high - 1 + shift]:
            break
        while low < high - 1:  # the first place from ``low`` where ``new`` differs
            middle = (low + high - 1) // 2
            if new[middle] is old[middle + shift]:
                low = middle + 1
            else:
                high = middle + 1
        gone.append(low + shift)
        shift += 1
        if len(gone) > PATCH_MAX:
            return None
    kept = len(old) - shift
    if len(new) < kept:  # the last items of ``old`` went too
        if kept - len(new) + len(gone) > PATCH_MAX:
            return None
        gone.extend(range(len(new) + shift, len(old)))
        kept = len(new)
    if _without(old, gone) != new[:kept]:
        return None
    return gone, kept


def _without(items: list[T], gone: list[int]) -> list[T]:
    """``items`` less the positions ``gone`` (ascending)."""
    kept = items.copy()
    for at in reversed(gone):
        del kept[at]
    return kept


def merge_runs(
    order: list[int], updated: Sequence[int], paths: Sequence[str], scopes: Sequence[str]
) -> None:
    """Sort ``order`` (in place) into the published list order: newest first, then by path,
    then by scope (ties beyond that keep their order). Given a concatenation of runs already
    in that order (each home's notes, ``ListColumns.live``), the one sort by time merges the
    runs; only the notes that share a time with another are then ordered by (path, scope)."""
    order.sort(key=updated.__getitem__, reverse=True)
    times = list(map(updated.__getitem__, order))
    tied = list(compress(range(len(times) - 1), map(eq, times, times[1:])))
    at = 0
    while at < len(tied):
        start = end = tied[at]
        while at < len(tied) and tied[at] == end:  # one group of equal times
            end += 1
            at += 1
        group = order[start : end + 1]
        group.sort(key=lambda index: (paths[index], scopes[index]))
        order[start : end + 1] = group


def list_columns(read: HomeRead) -> ListColumns:
    """The listing columns of ``read`` (memoized for the read): derived from the columns of
    an earlier read of its home when it is one patched from it, else sorted afresh."""
    return _memoized(read, "list", _columns_of)


def _columns_of(read: HomeRead) -> ListColumns:
    with _lock:
        recent = list(_latest.get(read.scope, ()))
    # Of the columns held for the scope, those that ``read`` patches; the one sharing the
    # most notes with it (named homes share a scope), then the one it changes least.
    best: tuple[tuple[int, int], ListColumns, Change] | None = None
    for earlier in reversed(recent):
        change = earlier.change(read)
        if change is not None:
            entries_gone, kept, served_gone = change
            shared = kept + len(read.rows_served)
            changed = len(entries_gone) + len(served_gone) + len(read.entries) - kept
            if best is None or (-shared, changed) < best[0]:
                best = ((-shared, changed), earlier, change)
    made = base = None
    if best is not None:
        base = best[1]
        made = base.derive(read, best[2])
    if made is None:
        made = ListColumns(read)
    with _lock:  # the columns derived from are superseded by the new ones, and so are
        # columns too full of replaced notes to derive from again (``slack``)
        held = [
            c
            for c in _latest.pop(read.scope, [])
            if c is not made and c is not base and len(c.paths) < len(c) + slack(len(c))
        ]
        _latest[read.scope] = [*held, made][-LATEST:]
        while len(_latest) > HELD:
            _latest.popitem(last=False)
    return made


LATEST = 3
"""Columns held per scope to derive from (named agents' homes share the agent scope)."""


class SearchHits:
    """One home read's search hits (its notes, which all hold a query), in path order:
    ``entries`` (path, entry), ``paths``, ``crumpled``."""

    def __init__(self, read: HomeRead) -> None:
        entries = list(read.entries)
        rows = read.rows
        if rows is not None:  # a search read holds entries only; served rows are built
            built = ((path, rows.entry(row)) for path, row in read.rows_served)
            entries += [(path, entry) for path, entry in built if entry is not None]
        entries.sort(key=lambda pair: pair[0])
        self.entries = entries
        self.paths = [path for path, _entry in entries]
        self.crumpled = [crumpled_at(entry.extra_lines) is not None for _path, entry in entries]


def search_hits(read: HomeRead) -> SearchHits:
    """The search hits of ``read``, a read made with ``contains`` (memoized for the read)."""
    return _memoized(read, "search", SearchHits)
