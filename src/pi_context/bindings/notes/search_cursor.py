"""``notes_search`` cursors that survive notes written or deleted between pages.

Search pages come in path order (then scope), which an edit does not change, but a note
created (or deleted) before the cursor's place shifts every later file: an offset into the
current order repeats (or skips) one. The cursor stays the published integer, now an offset
into the order the walk took at its first page (``walks``: held by this process, recorded in
the cache for a fresh one), keyed by the request itself (queries, pattern, homes, wastebasket):
a later page lists the files of that order from the offset on, each as it is now, passing over
any deleted or no longer matching; a file that came to match during the walk is not listed. An
undisturbed walk is the published offsets exactly (0, then ``max_files``, …). Without the
order (the cache off, or a new walk of the same request replaced it), the offset is into the
current order, as published.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from pi_context.bindings.notes import walks
from pi_context.bindings.notes.walks import Rows


class SearchWalk:
    """The files a page may show, from the cursor on (indices into the current result, in
    walk order), the walk position of each (its cursor), and the whole walk's length."""

    def __init__(
        self,
        indices: list[int],
        positions: list[int],
        length: int,
        started: tuple[str, Rows] | None,
    ) -> None:
        self.indices, self.positions, self.length, self.started = (
            indices,
            positions,
            length,
            started,
        )


def name_of(request: str) -> str:
    """The walk name of a search request (one walk per request at a time)."""
    return "s" + hashlib.sha256(request.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_made: OrderedDict[int, tuple[Sequence[tuple[str, str]], Rows]] = OrderedDict()
_lock = threading.Lock()
MADE = 8
"""Walk rows kept for the results they were made of (a few recent searches)."""


def _rows_of(keys: Sequence[tuple[str, str]]) -> Rows:
    """The walk rows of ``keys``: the very rows made before for the very same keys (a
    resident host's unchanged result), so the walk is known to be recorded already."""
    with _lock:
        held = _made.get(id(keys))
        if held is not None and held[0] is keys:
            _made.move_to_end(id(keys))
            return held[1]
    rows = Rows([0] * len(keys), [scope for scope, _path in keys], [p for _s, p in keys])
    with _lock:
        _made[id(keys)] = (keys, rows)
        while len(_made) > MADE:
            _made.popitem(last=False)
    return rows


def resume(
    keys: Sequence[tuple[str, str]], cursor: int, request: str, root: Path | None
) -> SearchWalk:
    """The walk of a ``notes_search`` page at ``cursor``; ``keys`` are the current result's
    ``(scope, path)`` in path order."""
    name = name_of(request)
    if cursor == 0:
        rows = _rows_of(keys)
        walks.hold(name, request, rows)
        everything = list(range(len(keys)))
        return SearchWalk(everything, everything, len(keys), (name, rows))
    order = walks.find(root, name, request)
    if order is None:  # the published offset into the current order
        rest = list(range(cursor, len(keys)))
        return SearchWalk(rest, rest, len(keys), None)
    where = {key: index for index, key in enumerate(keys)}
    indices: list[int] = []
    positions: list[int] = []
    for position in range(cursor, len(order)):
        index = where.get((order.scopes[position], order.paths[position]))
        if index is not None:
            indices.append(index)
            positions.append(position)
    return SearchWalk(indices, positions, len(order), None)
