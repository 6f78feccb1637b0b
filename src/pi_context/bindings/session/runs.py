"""A clean load's index, and its branch walked by runs of consecutive entries.

Almost every session file is a tree written in order: every value after the header is an
entry object with a unique, non-empty string id, and every parent comes before its children
(most often on the line just before). The parse loop (``store._parse_lines``) gathers a
``Clean`` record while each entry is at hand, as long as the entries stay clean; ``runs_of``
checks the rest (ids unique, parents before children) and then ``Session._load`` takes what
its per-entry loop would have built from it (nothing to report, no cycle possible); otherwise
the loop decides, as before. (A second pass over the entries, even in C, costs ~80 ms at
100k entries in cache misses: each entry is visited once, while it is parsed.)

In such a file a branch is a few runs of consecutive entries, each entry the child of the one
before. ``Runs`` remembers where each run starts and the index of its first entry's parent, so
the walk from the newest entry joins a few ranges of positions (``run_path``) instead of
following every parent link one at a time (~50 ms for a 70k-entry branch), and reads no entry
(a lazy load's entries stay undecoded: ``lazy.py``). The tests hold both against the loop and
``tree.branch_path`` on generated sessions.
"""

from __future__ import annotations

from bisect import bisect_right

from pi_context.support.frozen import field, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


@record
class Runs:
    """The runs of a clean load: ``starts`` holds the index of each run's first entry,
    ascending (0 first); ``parent`` maps a run's start to the index of its first entry's
    parent (absent: that entry is a root). ``size`` is the number of entries indexed;
    ``dangling`` the parent ids that name no entry (an entry given one of them later would
    become a parent of entries before it: the runs cannot follow that)."""

    starts: list[int]
    parent: dict[int, int]
    size: int
    dangling: set[str] = field(default_factory=set)


@record
class Clean:
    """What the parse loop gathers about the entries (the values after the header) while each
    is at hand, for as long as they stay clean: ``by_id`` (the last entry of each id wins, as
    in the loop), the label entries, their number, and the index and ``parentId`` of
    each entry that does not continue the run of the entry before it. ``by_id`` maps an id to
    its entry's position among the entries."""

    by_id: dict[str, int] = field(default_factory=dict)
    labels: list[Any] = field(default_factory=list)
    size: int = 0  # the number of entries gathered
    heads: list[int] = field(default_factory=list)
    head_parents: list[Any] = field(default_factory=list)


def runs_of(clean: Clean) -> Runs | None:
    """The runs of a clean load, or None where the loop must decide after all: a repeated id
    (the loop reports it) or a parent after its child (the loop looks for cycles)."""
    by_id, size = clean.by_id, clean.size
    if len(by_id) != size:
        return None
    parent: dict[int, int] = {}
    dangling: set[str] = set()
    for start, parent_id in zip(clean.heads, clean.head_parents, strict=True):
        found = by_id.get(parent_id) if type(parent_id) is str else None
        if found is None:
            if type(parent_id) is str:
                dangling.add(parent_id)
            continue  # no parent, or none loaded: a root
        if found >= start:
            return None
        parent[start] = found
    return Runs(clean.heads, parent, size, dangling)


def add_entry(runs: Runs, entry_id: str, parent_id: object, parent: int | None) -> bool | None:
    """Extend ``runs`` by an appended entry (at position ``runs.size``) with a new id, whose
    parent is at position ``parent`` (None: no entry has ``parent_id``). Whether it starts a
    run (for ``drop_entry``), or None where the runs cannot follow (an earlier entry names its
    id as a parent): the caller drops them."""
    if entry_id in runs.dangling:
        return None
    index = runs.size
    runs.size += 1
    if index and parent == index - 1:
        return False
    runs.starts.append(index)
    if parent is not None:
        runs.parent[index] = parent
    elif type(parent_id) is str:
        runs.dangling.add(parent_id)
    return True


def drop_entry(runs: Runs, started: bool) -> None:
    """Take back the ``add_entry`` of the newest entry (its write failed)."""
    runs.size -= 1
    if started:
        runs.starts.pop()
        runs.parent.pop(runs.size, None)


def run_path(runs: Runs, last: int) -> list[int]:
    """The positions of root -> entry ``last``, as ``tree.branch_path`` walks it, by whole
    runs."""
    starts, parent = runs.starts, runs.parent
    pieces: list[range] = []
    index: int | None = last
    while index is not None:
        start = starts[bisect_right(starts, index) - 1]
        pieces.append(range(start, index + 1))
        index = parent.get(start)  # always before ``start``: the walk ends
    path: list[int] = []
    for piece in reversed(pieces):
        path += piece
    return path
