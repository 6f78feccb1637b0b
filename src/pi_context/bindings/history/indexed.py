"""The four history operations answered from a ``HistoryIndex`` view.

Same arguments, same checks in the same order, same rendering and paging as ``query`` (whose
helpers this reuses), so answers are byte-identical to the unindexed tools; only selection and
search run over the index's packed arrays instead of a freshly projected ``History``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence

from pi_context.bindings.tool_output import JSONValue, page

from .cursors import _parse, key_of, resume_index
from .errors import Paging
from .format import View
from .index import HistoryIndex
from .items import ROLE_CODES, Item
from .query import (
    Filters,
    HistoryError,
    Rendered,
    _known_windows,
    first_match,
    item_page,
    parse_filters,
    parse_max_chars,
    parse_paging,
    parse_queries,
    read_item,
    render_item,
    shrink_item,
    window_page,
    window_row,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, overload


class IndexedHistory:
    """What ``query`` needs of a ``History`` (ids, lookups), served from an index view."""

    def __init__(self, index: HistoryIndex, view: View) -> None:
        self.index = index
        self.view = view
        self._position_of: dict[int, int] | None = None

    @property
    def window_ids(self) -> list[str]:
        return [window[0] for window in self.view.windows]

    def window_index(self, pos: int) -> int:
        """The window a branch position belongs to (the last window starting at or before it)."""
        starts = self.view.memoized("starts", lambda: [w[3] for w in self.view.windows])
        # Empty windows share a start with the next one; the item belongs to the last of them.
        return bisect_right(starts, pos) - 1

    def item_at(self, pos: int) -> Item:
        view = self.view
        window_id = view.windows[self.window_index(pos)][0]
        return self.index.item(view.positions[pos], window_id, view.roles[pos])

    @property
    def count(self) -> int:
        """How many items the branch holds."""
        return len(self.view.positions)

    def item_id_at(self, pos: int) -> str:
        return self.item_at(pos).item_id

    def find(self, item_id: str) -> Item | None:
        """The first item on the branch with this id (ids can repeat only in a hand-edited file)."""
        found = self.positions_of(self.index.find_ids(item_id))
        return self.item_at(found[0]) if found else None

    def positions_of(self, nums: Iterable[int]) -> list[int]:
        """Branch positions of those item numbers that are on the branch, ascending."""
        positions = self.view.positions
        out: list[int] = []
        count = len(positions)
        if self.view.ascending and count and positions[0] == 0 and positions[-1] == count - 1:
            # Every item is on the branch, in file order: a position is its item number.
            return sorted(num for num in nums if 0 <= num < count)
        if self.view.ascending:  # the usual case: branch order is file order
            for num in nums:
                pos = bisect_left(positions, num)
                if pos < len(positions) and positions[pos] == num:
                    out.append(pos)
        else:
            if self._position_of is None:
                self._position_of = {num: pos for pos, num in enumerate(positions)}
            out = [p for p in map(self._position_of.get, nums) if p is not None]
        out.sort()
        return out


class _Reversed(Sequence[int]):
    """An ascending position list read newest first, without a reversed copy."""

    def __init__(self, ascending: Sequence[int]) -> None:
        self._ascending = ascending
        self._last = len(ascending) - 1

    def __len__(self) -> int:
        return self._last + 1

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, index: int) -> int: ...
        @overload
        def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._last + 1))]
        if not -self._last - 1 <= index <= self._last:
            raise IndexError(index)
        return self._ascending[self._last - index % (self._last + 1)]

    def first_at_or_before(self, position: int) -> int:
        """Where a newest-first cursor at ``position`` resumes: the index of the first entry
        at or before it (``cursors.resume_index``), found without probing the entries."""
        ascending = self._ascending
        if isinstance(ascending, _RolePositions):
            before = ascending.at_or_before(position)
        else:
            before = bisect_right(ascending, position)
        return len(ascending) - before


class _RolePositions(Sequence[int]):
    """The ascending branch positions whose role is ``code``, found as pages ask for them: a
    byte search of the role codes from whichever end of the branch is nearer (newest-first
    pages read from the end), the positions found kept for the next page. Its length, and
    where a cursor resumes, are counts of the role code (C speed, nothing kept)."""

    def __init__(self, roles: bytes | bytearray, code: int) -> None:
        self._roles = roles
        self._code = bytes([code])
        self._total = roles.count(self._code)
        self._head: list[int] = []  # the first positions, ascending
        self._tail: list[int] = []  # the last positions, descending

    def __len__(self) -> int:
        return self._total

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, index: int) -> int: ...
        @overload
        def __getitem__(self, index: slice) -> Sequence[int]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._total))]
        total = self._total
        if index < 0:
            index += total
        if not 0 <= index < total:
            raise IndexError(index)
        head, tail = self._head, self._tail
        back = total - 1 - index
        if index < len(head):
            return head[index]
        if back < len(tail):
            return tail[back]
        roles, code = self._roles, self._code
        if index - len(head) <= back - len(tail):
            at = head[-1] + 1 if head else 0
            while len(head) <= index:
                at = roles.find(code, at)
                head.append(at)
                at += 1
            return head[index]
        end = tail[-1] if tail else len(roles)
        while len(tail) <= back:
            end = roles.rfind(code, 0, end)
            tail.append(end)
        return tail[back]

    def at_or_before(self, position: int) -> int:
        """How many of the positions are ``position`` or before it."""
        return self._roles.count(self._code, 0, max(0, position + 1))


def _select(
    history: IndexedHistory,
    filters: Filters,
    recent_first: bool,
    candidates: list[int] | None = None,
    candidates_key: Any = None,
) -> Sequence[int]:
    """Branch positions of the filtered items in delivery order (as ``query.select``);
    ``candidates`` (ascending positions, named by ``candidates_key``) narrows the set first,
    as a search does. Each selection is made once per view (``View.memo``)."""
    view = history.view
    if candidates is None and filters == Filters():
        ascending: Sequence[int] = range(len(view.positions))
    elif candidates is None and filters == Filters(role=filters.role):
        code = ROLE_CODES[filters.role] if filters.role is not None else -1
        ascending = view.memoized(("role", code), lambda: _RolePositions(view.roles, code))
    elif candidates is not None and candidates_key is None:
        ascending = _ascending(history, filters, candidates)
    else:
        ascending = view.memoized(
            ("select", filters, candidates_key),
            lambda: _ascending(history, filters, candidates),
        )
    return _Reversed(ascending) if recent_first else ascending


def _ascending(
    history: IndexedHistory, filters: Filters, candidates: list[int] | None
) -> list[int]:
    view = history.view
    everything = range(len(view.positions))
    if filters.window_id is not None:
        ends = view.window_ends()
        chosen = [i for i, w in enumerate(view.windows) if w[0] == filters.window_id]
        if not chosen:
            raise HistoryError(
                f"unknown window_id {filters.window_id!r}; "
                "use one of known_windows (history_windows lists them)",
                window_id=filters.window_id,
                **_known_windows(history),  # type: ignore[arg-type]
            )
        spans = [(view.windows[i][3], ends[i]) for i in chosen]
        if candidates is None:
            positions = [p for start, end in spans for p in range(start, end)]
        else:
            positions = [p for p in candidates if any(s <= p < e for s, e in spans)]
    else:
        positions = list(everything if candidates is None else candidates)
    if filters.role is not None:
        code = ROLE_CODES[filters.role]
        roles = view.roles
        positions = [p for p in positions if roles[p] == code]
    if filters.tool_name is not None or filters.tool_namespace is not None:
        nums = history.index.tool_names(filters.tool_name, filters.tool_namespace)
        items = view.positions
        positions = [p for p in positions if items[p] in nums]
    return positions


def windows_page(history: IndexedHistory, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    paging = parse_paging(args)
    view = history.view
    ends = view.window_ends()
    last = len(view.windows) - 1
    order = list(range(len(view.windows)))
    if paging.recent_first:
        order.reverse()
    rows = []
    for index in order:
        window_id, created_at, _marker, start = view.windows[index]
        rows.append(window_row(window_id, ends[index] - start, created_at, index == last))
    return window_page(rows, paging, order, history.window_ids)


def list_page(history: IndexedHistory, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    paging = parse_paging(args)
    max_chars = parse_max_chars(args)
    positions = _select(history, parse_filters(args), paging.recent_first)
    rendered = Rendered(
        len(positions), lambda i: render_item(history.item_at(positions[i]), max_chars)
    )
    return item_page(rendered, paging, positions, history.count, history.item_id_at)


def search_page(history: IndexedHistory, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    queries = parse_queries(args)
    paging = parse_paging(args)
    max_chars = parse_max_chars(args)
    filters = parse_filters(args)
    _select(history, Filters(window_id=filters.window_id), False, [])  # unknown window first

    def render(_row: int, position: int) -> dict[str, Any]:
        item = history.item_at(position)
        offset = first_match(item.content, queries)
        if offset < 0:
            from .columns import CorruptIndex

            raise CorruptIndex(f"item {item.item_id} does not hold the query the index found")
        return render_item(item, max_chars, offset)

    view = history.view
    if (
        ("found", queries) not in view.memo
        and paging.recent_first
        and paging.limit is not None
        and len(queries) == 1
        and view.ascending
    ):
        return _newest_first(history, queries[0], filters, paging, render)
    found = view.memoized(
        ("found", queries), lambda: history.positions_of(history.index.matches(queries))
    )
    hits = _select(history, filters, paging.recent_first, found, queries)
    rendered = Rendered(len(hits), lambda i: render(i, hits[i]))
    return item_page(rendered, paging, hits, history.count, history.item_id_at)


def read(history: IndexedHistory, args: Mapping[str, Any]) -> Any:
    return read_item(history, args)  # type: ignore[arg-type]


def _newest_first(
    history: IndexedHistory,
    query: str,
    filters: Filters,
    paging: Paging,
    render: Callable[[int, int], dict[str, Any]],
) -> dict[str, JSONValue]:
    """A newest-first search page whose scan stops once the page and its cursor are found
    (the hits past them are never looked for): the same page ``item_page`` makes from every
    hit. A scan from the newest item that reaches the oldest holds every hit: they are kept
    with the view (``found``), as the full search keeps them."""
    view = history.view
    count = len(view.positions)
    assert paging.limit is not None
    cursor = paging.cursor
    if isinstance(cursor, str):
        resume_index(cursor, (), count, history.item_id_at, "item")  # refused as the full path
        parsed = _parse(cursor)
        assert parsed is not None
        top, skip = parsed[0], 0
    else:
        top, skip = count - 1, cursor
    need = skip + paging.limit + 1
    keep = _keeper(history, filters)
    positions = view.positions
    every = count > 0 and positions[0] == 0 and positions[-1] == count - 1
    hits: list[int] = []
    seen: list[int] = []  # every hit on the branch, filtered or not
    complete = True
    last = positions[top] if 0 <= top < count else -1
    for num in history.index.matches_newest(query, last):
        if every:
            pos = num
        else:
            pos = bisect_left(positions, num)
            if pos >= count or positions[pos] != num:
                continue  # on another branch
        seen.append(pos)
        if keep(pos):
            hits.append(pos)
            if len(hits) >= need:
                complete = False
                break
    if complete and top == count - 1:
        view.memoized(("found", (query,)), lambda: seen[::-1])
    rendered = Rendered(len(hits), lambda i: render(i, hits[i]))
    return page(
        rendered,
        skip,
        "items",
        limit=paging.limit,
        shrink=shrink_item,
        cursor_of=lambda i: key_of(hits[i], history.item_id_at(hits[i])),
        cursor_bytes=len(key_of(max(count - 1, 0), "")) + 2,
    )


def _keeper(history: IndexedHistory, filters: Filters) -> Callable[[int], bool]:
    """Whether a branch position passes ``filters`` (the window is known: checked before)."""
    view = history.view
    tests: list[Callable[[int], bool]] = []
    if filters.window_id is not None:
        ends = view.window_ends()
        spans = [(w[3], ends[i]) for i, w in enumerate(view.windows) if w[0] == filters.window_id]
        tests.append(lambda p: any(s <= p < e for s, e in spans))
    if filters.role is not None:
        code, roles = ROLE_CODES[filters.role], view.roles
        tests.append(lambda p: roles[p] == code)
    if filters.tool_name is not None or filters.tool_namespace is not None:
        nums = history.index.tool_names(filters.tool_name, filters.tool_namespace)
        items = view.positions
        tests.append(lambda p: items[p] in nums)
    return lambda p: all(test(p) for test in tests)
