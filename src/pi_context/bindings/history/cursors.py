"""Newest-first history cursors: a key that does not move while the session grows.

A newest-first page's ``next_cursor`` names the next row to deliver by its branch position
(counted from the oldest item or window, so appends never move it) and a checksum of that
row's id: ``"p<position>.<crc32 hex>"``. Resuming delivers the rows at or before that
position, so a walk over a live session (where every call appends its own call and result)
lists every row present at its start exactly once and ends. A cursor whose row is no longer
at its position (the branch changed under it) is refused with an error saying to start again.

Oldest-first pages keep the published integer offsets: appends land after them, so an offset
from the oldest row never moves. An integer cursor on a newest-first page keeps its published
meaning (an offset from the newest row) and the page answers with a key from then on.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence

from pi_context.bindings.tool_output import JSONValue, page

from .errors import HistoryError, Paging, _echo

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

Shrink = Callable[[JSONValue, Callable[[JSONValue], bool]], JSONValue]

PREFIX = "p"


def checksum(row_id: str) -> int:
    return zlib.crc32(row_id.encode("utf-8", "surrogatepass"))


def key_of(position: int, row_id: str) -> str:
    """The cursor naming the row at branch ``position`` whose id is ``row_id``."""
    return f"{PREFIX}{position}.{checksum(row_id):08x}"


def _parse(cursor: str) -> tuple[int, int] | None:
    if not cursor.startswith(PREFIX):
        return None
    position, dot, check = cursor[len(PREFIX) :].partition(".")
    if not dot or not position.isdigit() or len(check) != 8 or len(position) > 18:
        return None
    try:
        return int(position), int(check, 16)
    except ValueError:
        return None


def resume_index(
    cursor: str, order: Sequence[int], count: int, id_at: Callable[[int], str], what: str
) -> int:
    """Where a newest-first key resumes in ``order`` (positions, descending): the first row
    at or before the key's position, after checking the key still names the same row."""
    parsed = _parse(cursor)
    if parsed is None:
        raise HistoryError(
            "cursor must be 0, or a next_cursor exactly as a newest-first page returned it",
            cursor=_echo(cursor),
        )
    position, check = parsed
    if position >= count or checksum(id_at(position)) != check:
        raise HistoryError(
            f"cursor no longer names the {what} it was issued for (the selected branch "
            "changed); start again without a cursor",
            cursor=_echo(cursor),
        )
    locate = getattr(order, "first_at_or_before", None)
    if locate is not None:  # an order that can answer without probing its entries
        found: int = locate(position)
        return found
    lo, hi = 0, len(order)  # order descends: find the first entry <= position
    while lo < hi:
        mid = (lo + hi) // 2
        if order[mid] > position:
            lo = mid + 1
        else:
            hi = mid
    return lo


def keyed_page(
    rows: Sequence[JSONValue],
    order: Sequence[int],
    paging: Paging,
    key: str,
    *,
    count: int,
    id_at: Callable[[int], str],
    what: str,
    shrink: Shrink,
    extra: Mapping[str, JSONValue] | None = None,
) -> dict[str, JSONValue]:
    """A page of ``rows`` (``order[i]`` is row ``i``'s branch position, ``count`` the branch's
    size): integer offsets oldest first, keys that do not move newest first."""
    cursor: Any = paging.cursor
    if not paging.recent_first:
        if isinstance(cursor, str):
            raise HistoryError(
                "this cursor came from a newest-first page; pass recent_first true with it, "
                "or start again without a cursor",
                cursor=_echo(cursor),
            )
        return page(rows, cursor, key, limit=paging.limit, extra=extra, shrink=shrink)
    start = cursor if isinstance(cursor, int) else resume_index(cursor, order, count, id_at, what)
    return page(
        rows,
        start,
        key,
        limit=paging.limit,
        extra=extra,
        shrink=shrink,
        cursor_of=lambda index: key_of(order[index], id_at(order[index])),
        cursor_bytes=len(key_of(max(count - 1, 0), "")) + 2,
    )
