"""Branch views of the history index: the selected branch's items, roles and windows,
projected from the entry columns and extended in place when the file leaf grows."""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import compress, pairwise
from operator import ne

from pi_context.bindings.session.windows import root_id_in_format

from .columns import CorruptIndex
from .format import (
    _DEVELOPER,
    _FLIP,
    _STAMP,
    _SYSTEM,
    _UPSTREAM,
    _WHOLE,
    View,
    _Entries,
    _Stored,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


class _Views(_Stored):
    """The branch views of a history index (``HistoryIndex`` is one)."""

    def _entries(self, new: _Entries | None = None) -> _Entries:
        """Every indexed entry (plus ``new``, not yet stored) as lists."""
        count = self.meta["entries"]
        table = _Entries(
            ids=self._strings("e_id").all(),
            parents=self._strings("e_parent").all(),
            markers=self._strings("e_marker").all(),
            stamps=self._strings("e_stamp").all(),
            flags=bytearray(self._blob("e_flags")),
            item0=list(self._array("e_item0")),
            roles=self._blob("i_role"),
        )
        if len(table.roles) != self.meta["items"]:
            raise CorruptIndex("role column disagrees")
        for column in (table.ids, table.parents, table.markers, table.stamps, table.flags):
            if len(column) != count:
                raise CorruptIndex("entry columns disagree")
        if len(table.item0) != count:
            raise CorruptIndex("entry columns disagree")
        if new is not None:
            table.ids += new.ids
            table.parents += new.parents
            table.markers += new.markers
            table.stamps += new.stamps
            table.flags += new.flags
            table.item0 += new.item0
            table.roles = bytes(table.roles) + bytes(new.roles)
        else:
            table.item0.append(self.meta["items"])
        return table

    def _winner(self, entry_id: str) -> int | None:
        found = self._strings("e_id").positions(entry_id, last=True)
        return found[0] if found else None

    # -- views

    def _new_view(self, meta: dict[str, Any], new: _Entries) -> View:
        """The file leaf's view after ``new`` is appended (extended when it can be)."""
        seq = meta["entries"] + len(new) - 1
        if meta["entries"] == 0:  # a fresh build: everything is at hand
            return self._build_view(seq, new)
        old = self.file_view
        if old is None:
            assert self.db is not None
            old = View.from_blob(self._blob("view"))
        if not new.ids:
            return old
        if not self._breaks_branches(new):
            extended = self._extend_view(old, new, seq)
            if extended is not None:
                return extended
        return self._build_view(seq, self._entries(new))

    def _breaks_branches(self, new: _Entries) -> bool:
        """Whether appending ``new`` can change an existing branch: an id that repeats (a later
        duplicate wins) or that an existing entry already names as its parent."""
        if len(set(new.ids)) != len(new.ids):
            return True
        # Sorted checksums of every stored id and parent rule most ids out; a checksum that is
        # there (a real hit, or a rare collision) is settled by an exact search.
        parts = []
        for blob in self._parts("e_keys"):
            keys = array("I")
            try:
                keys.frombytes(blob)
            except ValueError as exc:
                raise CorruptIndex("column e_keys is not a whole number of values") from exc
            parts.append(keys)
        for entry_id in new.ids:
            key = zlib.crc32(entry_id.encode("utf-8", "surrogatepass"))
            for keys in parts:
                at = bisect_left(keys, key)
                if at < len(keys) and keys[at] == key:
                    ids, parents = self._strings("e_id"), self._strings("e_parent")
                    if ids.positions(entry_id, True) or parents.positions(entry_id, True):
                        return True
                    break
        return False

    # -- loading

    def _build_view(self, leaf_seq: int, table: _Entries) -> View:
        """Project the branch ending at ``leaf_seq`` (root to leaf, cycles stop the walk)."""
        first = table.first
        branch = _branch(leaf_seq, table)
        view = View(leaf_seq, array("i"), bytearray(), [])
        root_created = None
        if branch and table.flags[branch[0] - first] & _STAMP:
            root_created = table.stamps[branch[0] - first]
        # The root's naming follows what the branch shows: ``_extend`` settles it.
        root = root_id_in_format(self.session_id, fork_safe=False)
        view.windows.append((root, root_created, None, 0))
        self._extend(view, table, branch, None)
        return view

    def _extend_view(self, view: View, new: _Entries, leaf_seq: int) -> View | None:
        """The file leaf moved: extend the old branch if the new leaf descends from its leaf."""
        first = new.first
        winners = {entry_id: seq for seq, entry_id in enumerate(new.ids, first)}
        path: list[int] = []
        current = leaf_seq
        while True:
            path.append(current)
            parent_id = new.parents[current - first]
            if not parent_id:
                return None
            parent = winners.get(parent_id)
            if parent is None:
                parent = self._winner(parent_id)
            if parent is not None and parent == view.leaf_seq and parent < first:
                break
            if parent is None or parent < first or len(path) > len(new):
                return None
            current = parent
        path.reverse()
        extended = View(
            leaf_seq,
            array("i", view.positions),
            bytearray(view.roles),
            list(view.windows),
            view.ascending,
            view.naming,
        )
        old = view.leaf_seq
        flags, item0 = self._blob("e_flags"), self._array("e_item0")
        before = (flags[old], item0[old], self._next_item0(old)) if old >= 0 else None
        self._extend(extended, new, path, before)
        return extended

    def _next_item0(self, seq: int) -> int:
        item0 = self._array("e_item0")
        return item0[seq + 1] if seq + 1 < len(item0) else self.meta["items"]

    def _extend(
        self,
        view: View,
        table: _Entries,
        path: Sequence[int],
        before: tuple[int, int, int] | None,
    ) -> None:
        """Append ``path`` (seqs in branch order) to ``view``; ``before`` is the flags and item
        span of the entry preceding it (None: the path starts the branch)."""
        first = table.first
        flags, item0 = table.flags, table.item0
        # The path as runs of consecutive seqs (a branch is mostly lines in file order):
        # each run is one span of items, and the entry before a run is the run before's last.
        runs = [path] if isinstance(path, range) else _runs(path)
        naming = max([view.naming, *(_naming(table, run) for run in runs)])
        if view.windows and naming != view.naming:
            # The branch now shows which naming the session's own windows use: so is its root.
            view.naming = naming
            _, created, marker_id, start = view.windows[0]
            root = root_id_in_format(self.session_id, fork_safe=naming == _NAMING_WHOLE)
            view.windows[0] = (root, created, marker_id, start)
        previous = before
        for run in runs:
            _extend_run(view, table, run, previous)
            if run:
                at = run[-1] - first
                previous = (flags[at], item0[at], item0[at + 1])


def _runs(path: Sequence[int]) -> list[range]:
    """``path`` as maximal runs of consecutive seqs, in order."""
    if not path:
        return []
    cuts = [at for at in range(1, len(path)) if path[at] != path[at - 1] + 1]
    bounds = [0, *cuts, len(path)]
    return [range(path[a], path[b - 1] + 1) for a, b in pairwise(bounds)]


def _flip(view: View, start: int, stop: int) -> None:
    for pos in range(start, stop):
        if view.roles[pos] == _SYSTEM:
            view.roles[pos] = _DEVELOPER


def _branch(leaf_seq: int, table: _Entries) -> Sequence[int]:
    """The seqs of the branch ending at ``leaf_seq``, root first (a cycle stops the walk)."""
    first = table.first
    ids, parents = table.ids, table.parents
    last = first + len(ids) - 1
    # The usual file is one chain, each entry the child of the line before it: with unique ids
    # the walk from the last entry would visit every entry, so it is not taken.
    if leaf_seq == last and parents[1:] == ids[:-1] and len(set(ids)) == len(ids):
        return range(first, last + 1)
    return _walk(leaf_seq, table)


def _walk(leaf_seq: int, table: _Entries) -> list[int]:
    """The branch by following parent ids from ``leaf_seq`` (a later duplicate id wins)."""
    first = table.first
    ids, parents = table.ids, table.parents
    last = first + len(ids) - 1
    winners = dict(zip(ids, range(first, last + 1), strict=True))  # a later one wins
    if first <= leaf_seq <= last and len(winners) == len(ids) and "" not in winners:
        return _walk_segments(leaf_seq, table, winners)
    branch: list[int] = []
    seen: set[int] = set()
    current: int | None = leaf_seq if first <= leaf_seq <= last else None
    while current is not None and current not in seen:
        seen.add(current)
        branch.append(current)
        parent = parents[current - first]
        current = winners.get(parent) if parent else None
    branch.reverse()
    return branch


def _walk_segments(leaf_seq: int, table: _Entries, winners: dict[str, int]) -> list[int]:
    """``_walk`` for unique, non-empty ids: the file cut into segments where each entry's
    parent is the line before it, walked a segment at a time (a segment met again is a cycle:
    the walk takes what it had not seen of it, then stops, as the step-by-step walk does)."""
    first, ids, parents = table.first, table.ids, table.parents
    starts = [0, *compress(range(1, len(ids)), map(ne, parents[1:], ids[:-1]))]
    spans: list[range] = []
    reached: dict[int, int] = {}  # segment start -> the highest index the walk reached in it
    at: int | None = leaf_seq - first
    while at is not None:
        start = starts[bisect_right(starts, at) - 1]
        earlier = reached.get(start)
        if earlier is not None:  # a cycle: stop at the first index already seen
            if at > earlier:
                spans.append(range(earlier + 1, at + 1))
            break
        reached[start] = at
        spans.append(range(start, at + 1))
        parent = parents[start]
        seq = winners.get(parent) if parent else None
        at = None if seq is None else seq - first
    branch = [index + first for span in reversed(spans) for index in span]
    return branch


_NAMING_NONE, _NAMING_WHOLE, _NAMING_UPSTREAM = 0, 1, 2
"""What a branch shows of its session's own window naming; a larger value wins (an own id in
the extension's form decides for it even after whole-id ones, as ``windows`` rules)."""
_UPSTREAM_BIT = bytes(value & _UPSTREAM for value in range(256))  # translation tables
_WHOLE_BIT = bytes(value & _WHOLE for value in range(256))


def _naming(table: _Entries, path: Sequence[int]) -> int:
    """The window naming the session's own entries on ``path`` show (``_NAMING_*``)."""
    first, flags = table.first, table.flags
    if isinstance(path, range):
        run = flags[path.start - first : path.stop - first]
        if run.translate(_UPSTREAM_BIT).count(0) != len(run):
            return _NAMING_UPSTREAM
        return _NAMING_WHOLE if run.translate(_WHOLE_BIT).count(0) != len(run) else _NAMING_NONE
    found = _NAMING_NONE
    for seq in path:
        bits = flags[seq - first]
        if bits & _UPSTREAM:
            return _NAMING_UPSTREAM
        if bits & _WHOLE:
            found = _NAMING_WHOLE
    return found


def _extend_run(
    view: View, table: _Entries, run: range, before: tuple[int, int, int] | None
) -> None:
    """``_extend`` for a path of consecutive seqs: their items are one span, so only the
    reset markers among them need a step of their own."""
    first, item0, flags = table.first, table.item0, table.flags
    lo, hi = item0[run.start - first], item0[run.stop - first]
    positions = view.positions
    start = len(positions)
    if hi > lo:
        if positions and positions[-1] >= lo:
            view.ascending = False
        positions.extend(range(lo, hi))
        view.roles += table.roles[lo - table.item_base : hi - table.item_base]
    markers = table.markers
    for at in range(run.start - first, run.stop - first):
        marker = markers[at]
        if not marker:
            continue
        here = start + item0[at] - lo  # the marker's place among the positions
        if at > run.start - first:
            if flags[at - 1] & _FLIP:
                _flip(view, here - (item0[at] - item0[at - 1]), here)
        elif before is not None and before[0] & _FLIP:
            _flip(view, here - (before[2] - before[1]), here)
        stamp = table.stamps[at] if flags[at] & _STAMP else None
        view.windows.append((marker, stamp, table.ids[at], here))
