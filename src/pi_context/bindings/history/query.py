"""Arguments, filters, literal search, paging and reads over a projected ``History``.

Every function returns a JSON-ready value that already fits the output budget, or raises
``HistoryError`` whose payload is the JSON error the model receives: a message naming the
rule, plus the offending argument echoed back (and, where it helps, the valid choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pi_context.bindings.addresses import ADDRESS_MAX_CHARS, address_problem, described
from pi_context.bindings.tool_output import (
    READ_LIMIT_CHARS_MAX,
    BudgetError,
    JSONValue,
    ReadRangeError,
    ReadWindow,
    json_bytes,
    read_window,
    shrink_to_fit,
)
from pi_context.support.frozen import frozen

from .cursors import keyed_page
from .errors import ECHO_MAX_CHARS, HistoryError, Paging, _echo
from .items import ROLES, TOOL_ROLES, History, Item

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeGuard, TypeVar, overload

    T = TypeVar("T")

__all__ = ["ECHO_MAX_CHARS", "HistoryError", "Paging"]

DEFAULT_MAX_CHARS_PER_ITEM = 1_200
MAX_CHARS_PER_ITEM_MAX = 50_000

# Keys a budget truncation leaves alone while anything else can give.
PROTECTED = frozenset({"window_id", "item_id", "role", "created_at"})
# Keys it never touches: the addresses the model passes back. Each is at most
# ADDRESS_MAX_CHARS (longer ids are delivered as null with a reason), so a row holding them
# whole and every other string cut to a marker always fits.
ADDRESS_KEYS = frozenset({"window_id", "item_id"})


def _echo_address(value: object) -> JSONValue:
    """An address argument echoed back: whole up to the address limit (a shortened id would
    look like a real one); anything longer is not an address and is cut visibly."""
    if isinstance(value, str) and len(value) <= ADDRESS_MAX_CHARS:
        return value
    return _echo(value)


KNOWN_WINDOWS_MAX = 50
KNOWN_WINDOWS_MAX_BYTES = 12_000  # with two echoed addresses, an error always fits the budget


def _known_windows(history: History) -> dict[str, JSONValue]:
    """The addressable window ids an error offers, whole and newest last, as many as fit."""
    ids = history.window_ids
    usable = [w for w in ids if address_problem(w) is None]
    chosen: list[str] = []
    used = 2
    for window_id in reversed(usable[-KNOWN_WINDOWS_MAX:]):
        used += json_bytes(window_id) + 1
        if used > KNOWN_WINDOWS_MAX_BYTES:
            break
        chosen.append(window_id)
    shown: dict[str, JSONValue] = {"known_windows": chosen[::-1]}
    if len(chosen) < len(ids):
        shown["known_windows_total"] = len(ids)
    if len(usable) < len(ids):
        shown["unaddressable_windows"] = len(ids) - len(usable)
    return shown


def _address_arg(name: str, value: str) -> str:
    """Refuse an address argument no tool could have delivered (over-long, control chars)."""
    problem = address_problem(value, name)
    if problem is not None:
        raise HistoryError(
            f"{problem}; {name} takes an id exactly as a history tool delivered it "
            f"(at most {ADDRESS_MAX_CHARS} characters)",
            **{name: _echo_address(value)},
        )
    return value


def window_row(
    window_id: str, item_count: int, created_at: str | None, current: bool
) -> dict[str, Any]:
    """One ``history_windows`` row: the id whole, or null with the reason it cannot be used."""
    problem = address_problem(window_id, "window id")
    row: dict[str, Any] = {
        "window_id": window_id if problem is None else None,
        "item_count": item_count,
        "created_at": created_at,
    }
    if problem is not None:
        row["unaddressable"] = f"{problem}; its items are listed with window_id null"
    if current:
        row["current"] = True
    return row


# --- argument parsing -------------------------------------------------------------------------


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str(value: object) -> TypeGuard[str]:
    return isinstance(value, str)


def _is_bool(value: object) -> TypeGuard[bool]:
    return isinstance(value, bool)


def _arg(
    args: Mapping[str, Any], name: str, valid: Callable[[object], TypeGuard[T]], wants: str
) -> T | None:
    """``args[name]``, ``None`` when absent or null; a value ``valid`` refuses is an error
    saying the argument must be ``wants``."""
    value: object = args.get(name)
    if value is None:
        return None
    if not valid(value):
        raise HistoryError(f"{name} must be {wants}", **{name: _echo(value)})
    return value


def _int_arg(
    args: Mapping[str, Any], name: str, *, minimum: int, maximum: int | None
) -> int | None:
    value = _arg(args, name, _is_int, "an integer")
    if value is not None and (value < minimum or (maximum is not None and value > maximum)):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise HistoryError(f"{name} must be {bound}, got {value}", **{name: value})
    return value


def _str_arg(args: Mapping[str, Any], name: str) -> str | None:
    return _arg(args, name, _is_str, "a string or null")


def _bool_arg(args: Mapping[str, Any], name: str, default: bool) -> bool:
    value = _arg(args, name, _is_bool, "true or false")
    return default if value is None else value


def parse_paging(args: Mapping[str, Any]) -> Paging:
    raw = args.get("cursor")
    cursor: int | str
    if isinstance(raw, str):
        cursor = raw
    else:
        try:
            cursor = _int_arg(args, "cursor", minimum=0, maximum=None) or 0
        except HistoryError:
            if isinstance(raw, int) and not isinstance(raw, bool):
                raise
            raise HistoryError(
                "cursor must be a next_cursor exactly as a page returned it (or 0 to start)",
                cursor=_echo(raw),
            ) from None
    return Paging(
        cursor=cursor,
        limit=_int_arg(args, "limit", minimum=1, maximum=None),
        recent_first=_bool_arg(args, "recent_first", True),
    )


def parse_max_chars(args: Mapping[str, Any]) -> int:
    value = _int_arg(args, "max_chars_per_item", minimum=1, maximum=MAX_CHARS_PER_ITEM_MAX)
    return DEFAULT_MAX_CHARS_PER_ITEM if value is None else value


@frozen
class Filters:
    window_id: str | None = None
    role: str | None = None
    tool_name: str | None = None
    tool_namespace: str | None = None

    def accepts(self) -> Callable[[Item], bool]:
        role, name, namespace = self.role, self.tool_name, self.tool_namespace
        return lambda item: (
            (role is None or item.role == role)
            and (name is None or item.tool_name == name)
            and (namespace is None or item.tool_namespace == namespace)
        )


def parse_filters(args: Mapping[str, Any]) -> Filters:
    window_id = _str_arg(args, "window_id")
    filters = Filters(
        window_id=None if window_id is None else _address_arg("window_id", window_id),
        role=_str_arg(args, "role"),
        tool_name=_str_arg(args, "tool_name"),
        tool_namespace=_str_arg(args, "tool_namespace"),
    )
    if filters.role is not None and filters.role not in ROLES:
        raise HistoryError(
            f"unknown role {_echo(filters.role)!r}; roles are {', '.join(ROLES)}",
            role=_echo(filters.role),
            known_roles=list(ROLES),
        )
    tool_filter = "tool_name" if filters.tool_name is not None else None
    if tool_filter is None and filters.tool_namespace is not None:
        tool_filter = "tool_namespace"
    if filters.role is not None and filters.role not in TOOL_ROLES and tool_filter is not None:
        # A role that never carries a tool identity would silently match nothing.
        raise HistoryError(
            f'{tool_filter} is only set on "tool_call" and "tool" items; role '
            f'"{filters.role}" never carries one, so this filter can never match. Drop '
            f"{tool_filter} or use role tool_call (the calls) or tool (their results)",
            role=filters.role,
            **{tool_filter: _echo(getattr(filters, tool_filter))},
        )
    return filters


def parse_queries(args: Mapping[str, Any]) -> tuple[str, ...]:
    """``query`` as a deduplicated tuple of literals (a bare string is a one-element list)."""
    if "query" not in args or args["query"] is None:
        raise HistoryError("query is required: a string or a non-empty array of strings")
    raw = args["query"]
    if isinstance(raw, str):
        values: list[object] = [raw]
    elif isinstance(raw, list):
        if not raw:
            raise HistoryError("query must be a string or a non-empty array of strings", query=[])
        values = list(raw)
    else:
        raise HistoryError(
            "query must be a string or a non-empty array of strings", query=_echo(raw)
        )
    queries: list[str] = []
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise HistoryError(
                f"query array elements must be strings; element {index} is {_echo(value)!r}",
                query=_echo(raw),
            )
        if value == "":
            raise HistoryError(
                "an empty query matches everything; use history_list to enumerate, "
                "or give a non-empty literal",
                query=_echo(raw),
            )
        if value not in queries:
            queries.append(value)
    return tuple(queries)


# --- selection ----------------------------------------------------------------------------------


def select(history: History, filters: Filters, recent_first: bool) -> list[Item]:
    """The filtered items in delivery order (newest first unless ``recent_first`` is false)."""
    flat, positions = select_positions(history, filters, recent_first)
    return [flat[p] for p in positions]


def select_positions(
    history: History, filters: Filters, recent_first: bool
) -> tuple[list[Item], list[int]]:
    """Every item of the branch oldest first, and the branch positions of the filtered ones
    in delivery order (newest first unless ``recent_first`` is false)."""
    windows = history.windows
    if filters.window_id is not None:
        windows = tuple(w for w in windows if w.window_id == filters.window_id)
        if not windows:
            raise HistoryError(
                f"unknown window_id {filters.window_id!r}; "
                "use one of known_windows (history_windows lists them)",
                window_id=filters.window_id,
                **_known_windows(history),
            )
    accepts = filters.accepts()
    flat = list(history.items())
    if filters.window_id is None:
        positions = [p for p, item in enumerate(flat) if accepts(item)]
    else:
        chosen = {id(w) for w in windows}
        positions, start = [], 0
        for window in history.windows:
            end = start + len(window.items)
            if id(window) in chosen:
                positions.extend(p for p in range(start, end) if accepts(flat[p]))
            start = end
    if recent_first:
        positions.reverse()
    return flat, positions


def first_match(content: str, queries: tuple[str, ...]) -> int:
    """Code-point offset of the earliest occurrence of any query, or -1."""
    best = -1
    for query in queries:
        found = content.find(query, 0, best + len(query) - 1 if best >= 0 else len(content))
        if found >= 0 and (best < 0 or found < best):
            best = found
    return best


# --- rendering ------------------------------------------------------------------------------------


def render_item(item: Item, max_chars: int, match_offset: int | None = None) -> dict[str, Any]:
    """An item as delivered: metadata, honest truncation, then the content prefix."""
    total = len(item.content)
    window_problem = address_problem(item.window_id, "window id")
    item_problem = address_problem(item.item_id, "item id")
    rendered: dict[str, Any] = {
        "window_id": item.window_id if window_problem is None else None,
        "item_id": item.item_id if item_problem is None else None,
        "role": item.role,
        "tool_name": item.tool_name,
        "created_at": item.created_at,
    }
    if window_problem is not None or item_problem is not None:
        rendered["unaddressable"] = _unaddressable_note(window_problem, item_problem)
    if match_offset is not None:
        rendered["match_offset_chars"] = match_offset
    if item.tool_error:
        rendered["tool_error"] = True
    if item.output_truncated:
        rendered["output_truncated"] = True
    if item.full_output_path is not None:
        rendered["full_output_path"] = item.full_output_path
    rendered["total_chars"] = total
    rendered["truncated"] = total > max_chars
    rendered["truncated_content"] = item.content[:max_chars]
    return rendered


def _unaddressable_note(window_problem: str | None, item_problem: str | None) -> str:
    notes = []
    if item_problem is not None:
        notes.append(f"{item_problem}: history_read cannot fetch it; this preview is all")
    if window_problem is not None:
        notes.append(f"{window_problem}: window_id cannot select it")
    return "; ".join(notes)


def shrink_keeping_addresses(value: JSONValue, fits: Callable[[JSONValue], bool]) -> JSONValue:
    """Budget-shrink one row: other strings first, then role/created_at, never an address."""
    try:
        return shrink_to_fit(value, fits, protect=PROTECTED)
    except BudgetError:
        return shrink_to_fit(value, fits, protect=ADDRESS_KEYS)


def shrink_item(item: JSONValue, fits: Callable[[JSONValue], bool]) -> JSONValue:
    """Budget-shrink one oversized item, keeping its address and its ``truncated`` flag honest."""
    shrunk = shrink_keeping_addresses(item, fits)
    if shrunk["truncated_content"] != item["truncated_content"] and not shrunk["truncated"]:
        shrunk = {**shrunk, "truncated": True}  # "true" is shorter than "false": still fits
    return shrunk


def item_page(
    rendered: Sequence[dict[str, Any]],
    paging: Paging,
    order: Sequence[int],
    count: int,
    id_at: Callable[[int], str],
) -> dict[str, JSONValue]:
    """A page of items; ``order[i]`` is rendered row ``i``'s branch position (of ``count``)."""
    return keyed_page(
        rendered, order, paging, "items", count=count, id_at=id_at, what="item", shrink=shrink_item
    )


# --- the four operations -----------------------------------------------------------------------


def windows_page(history: History, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    paging = parse_paging(args)
    windows = list(history.windows)
    current = windows[-1]  # the window the leaf is in
    order = list(range(len(windows)))
    if paging.recent_first:
        order.reverse()
    rows = [
        window_row(
            windows[i].window_id,
            len(windows[i].items),
            windows[i].created_at,
            windows[i] is current,
        )
        for i in order
    ]
    return window_page(rows, paging, order, [w.window_id for w in windows])


def window_page(
    rows: Sequence[JSONValue], paging: Paging, order: Sequence[int], ids: Sequence[str]
) -> dict[str, JSONValue]:
    """A page of window rows; ``order[i]`` is row ``i``'s window index in ``ids``."""
    return keyed_page(
        rows,
        order,
        paging,
        "windows",
        count=len(ids),
        id_at=ids.__getitem__,
        what="window",
        shrink=shrink_keeping_addresses,
    )


class Rendered(Sequence["dict[str, Any]"]):  # quoted: typing is not imported at run time
    """Items rendered on first access: a page inspects only its own neighbourhood."""

    def __init__(self, count: int, render: Callable[[int], dict[str, Any]]) -> None:
        self._count = count
        self._render = render

    def __len__(self) -> int:
        return self._count

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, index: int) -> dict[str, Any]: ...
        @overload
        def __getitem__(self, index: slice) -> Sequence[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._render(i) for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return self._render(index % self._count)


def list_page(history: History, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    paging = parse_paging(args)
    max_chars = parse_max_chars(args)
    flat, order = select_positions(history, parse_filters(args), paging.recent_first)
    rendered = Rendered(len(order), lambda i: render_item(flat[order[i]], max_chars))
    return item_page(rendered, paging, order, len(flat), lambda p: flat[p].item_id)


def search_page(history: History, args: Mapping[str, Any]) -> dict[str, JSONValue]:
    queries = parse_queries(args)
    paging = parse_paging(args)
    max_chars = parse_max_chars(args)
    flat, order = select_positions(history, parse_filters(args), paging.recent_first)
    hits: list[tuple[Item, int]] = []
    positions: list[int] = []
    for position in order:
        item = flat[position]
        offset = first_match(item.content, queries)
        if offset >= 0:
            hits.append((item, offset))
            positions.append(position)
    rendered = Rendered(len(hits), lambda i: render_item(hits[i][0], max_chars, hits[i][1]))
    return item_page(rendered, paging, positions, len(flat), lambda p: flat[p].item_id)


def read_item(history: History, args: Mapping[str, Any]) -> tuple[ReadWindow, dict[str, Any]]:
    """The delivered read of one item plus its slim details (window metadata, no payload)."""
    item_id = args.get("item_id")
    if not isinstance(item_id, str) or not item_id:
        raise HistoryError(
            "item_id is required: an item id from history_list or history_search",
            item_id=_echo(item_id),
        )
    _address_arg("item_id", item_id)
    window_id = _str_arg(args, "window_id")
    if window_id is not None:
        _address_arg("window_id", window_id)
    item = history.find(item_id)
    if item is None or (window_id is not None and item.window_id != window_id):
        message = "unknown item_id or window_id"
        echo: dict[str, JSONValue] = {"window_id": window_id, "item_id": item_id}
        if item is not None:
            message += (
                f": item {item.item_id} is in window {described(item.window_id, 'window id')}"
            )
        elif window_id is not None and window_id not in history.window_ids:
            echo.update(_known_windows(history))
        raise HistoryError(message, **echo)
    for name in ("offset_chars", "limit_chars"):
        value = args.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise HistoryError(f"{name} must be an integer", **{name: _echo(value)})
    limit = args.get("limit_chars")
    if limit is not None and not 1 <= limit <= READ_LIMIT_CHARS_MAX:
        raise HistoryError(
            f"limit_chars must be between 1 and {READ_LIMIT_CHARS_MAX}, got {limit}",
            limit_chars=limit,
        )
    shown_window = described(item.window_id, "window id")
    suffix = [f"window {shown_window}", item.role]
    if item.tool_name is not None:
        suffix.append(f"tool {item.tool_name}")
    try:
        window = read_window(
            item.content,
            name=item.item_id,
            offset_chars=args.get("offset_chars"),
            limit_chars=limit,
            suffix=suffix,
        )
    except ReadRangeError as exc:
        raise HistoryError(
            f"offset_chars {exc.offset_chars} is past the end of item {item.item_id}, which "
            f"has {exc.total_chars} chars (offset_chars={exc.total_chars} is the empty end-read)",
            window_id=item.window_id if address_problem(item.window_id) is None else None,
            item_id=item.item_id,
            offset_chars=exc.offset_chars,
            total_chars=exc.total_chars,
        ) from None
    details = {
        "window_id": item.window_id if address_problem(item.window_id) is None else None,
        "item_id": item.item_id,
        "offset_chars": window.offset_chars,
        "total_chars": window.total_chars,
        "next_offset_chars": window.next_offset_chars,
        "limit_chars": window.limit_chars,
    }
    return window, details
