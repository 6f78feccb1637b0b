"""The listing of several homes a ``notes_list`` page is cut from (``Merged``): the homes'
columns (``columns.ListColumns``) concatenated, their sorted runs merged into the published
list order, and, once the homes' columns were derived from earlier ones (a resident host
patched a read), moved on by the changed notes alone instead of merged again. A few listings
are held (``MERGED``), keyed by the selection they list; nothing here reads the filesystem.
A page renders only the rows it shows (``PageRows``), each kept with its home's columns.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_context.bindings.notes import columns
from pi_context.bindings.notes.columns import GROW, ListColumns, merge_runs, slack
from pi_context.bindings.notes.frontmatter import zone
from pi_context.bindings.notes.list_cursor import Listing
from pi_context.bindings.notes.note_address import format_address
from pi_context.bindings.notes.records import NoteRecord
from pi_context.bindings.notes.tool_args import record_json
from pi_context.bindings.tool_output import json_bytes
from pi_context.bindings.tools import JSONValue

if TYPE_CHECKING:
    from pi_context.bindings.notes.store import NoteStore

MERGED = 4
"""Whole listings held at once (``merged``)."""

_merged: list[Merged] = []
"""The listings last made, the newest last."""
_lock = threading.Lock()


def forget() -> None:
    """Drop every held listing (what a fresh process would hold)."""
    with _lock:
        _merged.clear()


columns.FORGET.append(forget)


class Merged:
    """The listing of several homes: their columns concatenated in the given home order (a
    global index is a home's local index moved by the home's start, ``at``), and ``order``:
    the live notes (or, with ``wastebasket``, the crumpled ones) in the published list order,
    newest first, then path, then scope, then home. ``excluded`` counts the other side.

    A listing of the same homes whose columns were since derived (``ListColumns.derive``)
    follows their ``lineage``: the changed notes are appended to copies of the columns and
    moved in the order by bisection (``derive``), not merged again."""

    def __init__(
        self,
        chosen: str,
        scopes: list[str],
        homes: list[ListColumns],
        wastebasket: bool,
        accept: Callable[[str], bool] | None = None,
    ) -> None:
        self.chosen, self.scopes, self.homes = chosen, scopes, list(homes)
        self.wastebasket = wastebasket
        self.paths: list[str] = []
        self.updated: list[int] = []
        self.scope_column: list[str] = []
        self.home_of: list[int] = []
        self.local_of: list[int] = []
        self.at: list[list[int]] = []
        self.order: list[int] = []
        self.excluded = 0
        self._ordered: list[str] | None = None
        self.fresh = True
        """Made here, not derived: the global columns are the homes' concatenated."""
        self.listing: Listing | None = None
        """The cursor's view of this listing (``cursor_listing``), made once."""
        self.sizes: list[int] = []
        """How many of each home's notes the concatenated columns hold."""
        for number, (scope, home) in enumerate(zip(scopes, homes, strict=True)):
            with GROW:  # columns shared along a chain grow only under this lock
                start, size = len(self.paths), len(home.paths)
                self.paths.extend(home.paths)
                self.updated.extend(home.updated)
            self.sizes.append(size)
            self.scope_column.extend([scope] * size)
            self.home_of.extend([number] * size)
            self.local_of.extend(range(size))
            self.at.append(list(range(start, start + size)))
            run = home.crumpled_order if wastebasket else home.live
            other = home.live if wastebasket else home.crumpled_order
            if accept is not None:
                run = [index for index in run if accept(home.paths[index])]
                if not wastebasket:
                    self.excluded += sum(1 for index in other if accept(home.paths[index]))
            elif not wastebasket:
                self.excluded += len(other)
            self.order.extend(map(start.__add__, run))
        merge_runs(self.order, self.updated, self.paths, self.scope_column)

    def key(self, index: int) -> tuple[int, str, str, int]:
        """Note ``index``'s place in the published list order."""
        scope, home = self.scope_column[index], self.home_of[index]
        return -self.updated[index], self.paths[index], scope, home

    def record(self, index: int) -> NoteRecord:
        home = self.home_of[index]
        return self.homes[home].record(self.scopes[home], self.local_of[index])

    def texts(self) -> list[str]:
        """The rows of ``order`` as ``walks`` records them (``updated NUL scope NUL path``):
        made once, then moved on with the order by ``derive`` (never changed in place)."""
        if self._ordered is None:
            if self.fresh:  # the homes' columns concatenated are the listing's
                every: list[str] = []
                for scope, home, size in zip(self.scopes, self.homes, self.sizes, strict=True):
                    every.extend(home.row_texts(scope, size))
                self._ordered = list(map(every.__getitem__, self.order))
            else:
                self._ordered = [self._text(index) for index in self.order]
        return self._ordered

    def _text(self, index: int) -> str:
        return f"{self.updated[index]}\0{self.scope_column[index]}\0{self.paths[index]}"

    def derive(self, scopes: list[str], homes: list[ListColumns]) -> Merged | None:
        """This listing over ``homes``, the same homes' later columns: ``self`` when none
        changed, None when one is not derived from the columns held (it is merged afresh)."""
        if scopes != self.scopes:
            return None
        steps: list[tuple[int, tuple[tuple[int, list[int], list[int]], ...]]] = []
        for number, home in enumerate(homes):
            was = self.homes[number]
            if home is was:
                continue
            serials = [serial for serial, _gone, _added in home.lineage]
            if was.serial not in serials:
                return None
            steps.append((number, home.lineage[serials.index(was.serial) :]))
        if not steps:
            return self
        child = Merged.__new__(Merged)
        child.chosen, child.scopes, child.homes = self.chosen, scopes, list(homes)
        child.wastebasket, child.excluded, child.listing = self.wastebasket, self.excluded, None
        child.fresh = False
        # As with a home's columns: the global columns are shared and only grow.
        child.paths, child.updated = self.paths, self.updated
        child.scope_column, child.home_of = self.scope_column, self.home_of
        child.local_of, child.order = self.local_of, self.order.copy()
        child.at, child.sizes = list(self.at), self.sizes
        child._ordered = None if self._ordered is None else self._ordered.copy()
        for number, chain in steps:
            if not child._follow(number, chain):
                return None
        notes = sum(map(len, homes))
        if len(child.paths) > notes + slack(notes):
            return None  # mostly replaced notes: merged afresh, the columns compacted
        return child

    def _follow(self, number: int, chain: tuple[tuple[int, list[int], list[int]], ...]) -> bool:
        home, scope, side = self.homes[number], self.scopes[number], self.wastebasket
        at = self.at[number] = self.at[number].copy()
        order, ordered = self.order, self._ordered
        for _serial, gone, added in chain:
            for local in gone:
                index = at[local]
                if home.crumpled[local] == side:
                    place = bisect_left(order, self.key(index), key=self.key)
                    if place >= len(order) or order[place] != index:
                        return False  # not where the order says: never guess
                    del order[place]
                    if ordered is not None:
                        del ordered[place]
                elif not side:
                    self.excluded -= 1
            for local in added:
                if local != len(at):
                    return False
                with GROW:
                    index = len(self.paths)
                    self.paths.append(home.paths[local])
                    self.updated.append(home.updated[local])
                    self.scope_column.append(scope)
                    self.home_of.append(number)
                    self.local_of.append(local)
                at.append(index)
                if home.crumpled[local] == side:
                    place = bisect_right(order, self.key(index), key=self.key)
                    order.insert(place, index)
                    if ordered is not None:
                        ordered.insert(place, self._text(index))
                elif not side:
                    self.excluded += 1
        return True


def merged(chosen: str, scopes: list[str], homes: list[ListColumns], wastebasket: bool) -> Merged:
    """The listing of ``homes`` (the columns of this call's reads, in ``scopes`` order) for
    the selection ``chosen``: the one held when no home changed, derived from it when the
    homes' columns were, else merged afresh."""
    with _lock:
        held = [m for m in _merged if m.chosen == chosen and m.wastebasket == wastebasket]
    made = base = None
    for earlier in reversed(held):
        made = earlier.derive(scopes, homes)
        if made is not None:
            base = earlier
            break
    if made is None:
        made = Merged(chosen, scopes, homes, wastebasket)
    with _lock:
        if made is not base:
            if base is not None and base in _merged:
                _merged.remove(base)
            _merged.append(made)
            del _merged[:-MERGED]
    return made


SHOWN_HELD = 4096
"""Rendered listing rows each home's columns keep (``ListColumns.shown``) before starting over."""


class PageRows(Sequence["JSONValue"]):
    """Rows rendered on access: a page touches a few dozen of 10,000 notes, so only those
    are built into records (the order needs only each note's time, path and scope). A row
    and its JSON size are kept with the home's columns for the next page that shows it (for
    the same address and time zone)."""

    def __init__(self, stores: list[NoteStore], listing: Merged, indices: list[int]) -> None:
        self._stores = stores
        self._listing = listing
        self._indices = indices
        self._slugs: dict[int, tuple[str | None, str | None]] = {}
        self._zone = zone()

    def __len__(self) -> int:
        return len(self._indices)

    def _shown(self, position: int) -> tuple[str, object, JSONValue, int]:
        index = self._indices[position]
        listing = self._listing
        number, local = listing.home_of[index], listing.local_of[index]
        scope, home = listing.scopes[number], listing.homes[number]
        slugs = self._slugs.get(number)
        if slugs is None:  # as ``address_in``, once per home and page
            homes = self._stores[number].homes
            slugs = self._slugs[number] = (homes.slug(scope), homes.running_slug(scope))
        address = format_address(scope, listing.paths[index], *slugs)
        held = home.shown.get(local)
        if held is None or held[0] != address or held[1] != self._zone:
            row = record_json(home.record(scope, local), address)
            held = (address, self._zone, row, json_bytes(row))
            if len(home.shown) >= SHOWN_HELD:
                home.shown.clear()
            home.shown[local] = held
        return held

    def size(self, position: int) -> int:
        """The JSON bytes of row ``position``."""
        return self._shown(position)[3]

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._shown(at)[2] for at in range(len(self._indices))[index]]
        return self._shown(range(len(self._indices))[index])[2]


def cursor_listing(merged: Merged) -> Listing:
    """The cursor's view of a merged listing (made once per listing). It reaches the listing
    through a weak reference: a listing and its view are no reference cycle, so a replaced
    listing is freed at once, not left to the cyclic collector."""
    if merged.listing is None:
        scopes = merged.scope_column
        held = weakref.ref(merged)

        def created_of(index: int) -> int:
            listing = held()
            assert listing is not None  # the caller holds the listing while it pages
            return listing.record(index).meta.created_at

        def texts() -> list[str]:
            listing = held()
            assert listing is not None
            return listing.texts()

        get = scopes.__getitem__
        merged.listing = Listing(
            merged.order, merged.paths, merged.updated, get, created_of, scopes, texts
        )
    return merged.listing
