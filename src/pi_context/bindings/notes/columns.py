"""The columns a ``notes_list`` or ``notes_search`` page is cut from, computed once per home
read: a resident host (``resident.py``) hands back the very read it holds while nothing
changed, so a call pays for the columns of the homes that changed since the last call, not
for every note of every home.

For a listing: each note's path, scope, update time and whether it is crumpled, in the read's
index order, with the read's notes sorted in the published list order (newest first, then
path); the pages of several homes merge those sorted runs. For a search: each hit's path and
whether it is crumpled, the hits in path order.

What is memoized is keyed by the read object itself (held, so its identity is never reused)
and bounded (``HELD``): a read that is no longer handed out drops out. Nothing here reads the
filesystem; the reads come from the store by its never-stale rules.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import compress
from operator import eq
from typing import Any, TypeVar

from pi_context.bindings.notes.frontmatter import crumpled_at
from pi_context.bindings.notes.records import HomeRead

HELD = 48
"""Memoized columns at once (a few kinds for each of the five homes, and recent searches)."""

T = TypeVar("T")

_memo: OrderedDict[tuple[int, str], tuple[HomeRead, object]] = OrderedDict()
_lock = threading.Lock()


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


def forget() -> None:
    """Drop every memoized column (tests: what a fresh process would hold)."""
    with _lock:
        _memo.clear()
        _merged.clear()


MERGED = 4
"""Whole listings memoized at once (``merged``)."""

_merged: OrderedDict[tuple[object, ...], tuple[list[HomeRead], Any]] = OrderedDict()


def _same(held: HomeRead, read: HomeRead) -> bool:
    """The very read held, or both hold nothing (a home that does not exist is read afresh
    by every call, as an empty read)."""
    if held is read:
        return True
    empty = not (len(held) or len(read) or held.refused or read.refused)
    return empty and held.scope == read.scope


def merged(key: tuple[object, ...], reads: list[HomeRead], make: Callable[[], T]) -> T:
    """``make()`` for these very ``reads`` (held, so their identities are not reused), and
    ``key`` (what else the result depends on): a listing of homes none of which changed is
    the one made last time."""
    with _lock:
        held = _merged.get(key)
        if held is not None and all(map(_same, held[0], reads)):
            _merged.move_to_end(key)
            return held[1]  # type: ignore[no-any-return]
    made = make()
    with _lock:
        _merged[key] = (list(reads), made)
        while len(_merged) > MERGED:
            _merged.popitem(last=False)
    return made


class ListColumns:
    """One home read's listing columns, by the read's index: ``paths``, ``updated``,
    ``crumpled``; and ``live`` / ``crumpled_order``: the indices of the live and of the
    crumpled notes, each newest first, then by path."""

    def __init__(self, read: HomeRead) -> None:
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

    def row_texts(self, scope: str) -> list[str]:
        """Each note's walk row as ``walks`` records it (``updated NUL scope NUL path``),
        built once for the read."""
        if self._texts is None:
            head = "\0" + scope + "\0"
            pairs = zip(self.updated, self.paths, strict=True)
            self._texts = [f"{updated}{head}{path}" for updated, path in pairs]
        return self._texts


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
    """The listing columns of ``read`` (memoized for the read)."""
    return _memoized(read, "list", ListColumns)


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
