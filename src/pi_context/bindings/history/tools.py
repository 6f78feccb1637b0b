"""The four read-only history tools: schemas, descriptions and adapters onto ``query``.

Each call answers from the selected branch (``ctx.leaf_id`` or the file's leaf) only, through
the history index (``index.py``), which checks itself against the file on every call, or, when
the index cannot answer, by opening and projecting the file afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pi_context.bindings.tool_output import (
    READ_LIMIT_CHARS_MAX,
    BudgetError,
    JSONValue,
    fit_json,
    middle_truncate,
)
from pi_context.bindings.tools import Tool, ToolContext, ToolError, ToolResult
from pi_context.support.gc_pause import gc_paused
from pi_context.support.sqlite import sqlite3

from . import indexed
from .columns import CorruptIndex
from .format import Unindexable
from .index import index_enabled
from .indexed import IndexedHistory
from .items import ROLES, History, project_history
from .query import (
    MAX_CHARS_PER_ITEM_MAX,
    HistoryError,
    list_page,
    read_item,
    search_page,
    windows_page,
)
from .resident import build_later, first_answer_due, held_index

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    Answer = Callable[[Any, Mapping[str, Any]], Any]


def load_history(ctx: ToolContext) -> History:
    """Project the selected branch of ``ctx.session_path`` from the file (no index)."""
    from pi_context.bindings.session.errors import SessionError
    from pi_context.bindings.session.session import Session

    if ctx.session_path is None:
        raise ToolError("history tools need a session file (pass --session FILE)")
    try:
        session = Session.open(ctx.session_path, readonly=True)
        branch = session.branch(ctx.leaf_id)
    except SessionError as exc:
        raise ToolError(f"history: cannot read the session: {exc}") from None
    return project_history(branch, session.session_id)


def answer(ctx: ToolContext, plain: Answer, indexed: Answer, args: Mapping[str, Any]) -> Any:
    """``indexed`` over the history index when it can answer, else ``plain`` over the file.

    Both give the same bytes; the index only makes it fast. Any doubt about the index (a file
    it does not model, a torn line the loader would keep, a cache that disagrees with the
    file) sends the call down the unindexed path, and a corrupt cache is thrown away.
    """
    if ctx.session_path is not None and index_enabled():
        try:
            with held_index(ctx.session_path) as index:
                try:
                    view = index.open_view(ctx.leaf_id)
                    return indexed(IndexedHistory(index, view), args)
                except (CorruptIndex, sqlite3.DatabaseError, OSError):
                    index.discard()
        except Unindexable:
            pass
        except OSError:
            pass
    return plain(load_history(ctx), args)


def _json_result(value: JSONValue) -> ToolResult:
    return ToolResult(text=fit_json(value), details=None)


def _error(exc: HistoryError) -> ToolResult:
    try:
        text = fit_json(exc.payload)
    except BudgetError:  # an echo too fragmented to cut: the message alone still helps
        text = fit_json({"error": middle_truncate(str(exc), 4_000)})
    return ToolResult(text=text, details=None, is_error=True)


def _paged(
    plain: Answer, indexed: Answer, first: bool = False
) -> Callable[[ToolContext, Mapping[str, Any]], ToolResult]:
    """A paged tool; with ``first``, a long-lived host's first call on a large session with
    no index yet is answered from the file, and the index built after (``first.py``)."""

    def execute(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
        with gc_paused():
            try:
                path = ctx.session_path
                if first and path is not None and index_enabled() and first_answer_due(path):
                    from .first import first_search  # only here: it loads the session

                    found = first_search(path, ctx.leaf_id, args)
                    if found is not None:
                        result = _json_result(found)
                        build_later(path)
                        return result
                return _json_result(answer(ctx, plain, indexed, args))
            except HistoryError as exc:
                return _error(exc)

    return execute


def _read(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    with gc_paused():
        try:
            window, details = answer(ctx, read_item, read_item, args)
        except HistoryError as exc:
            return _error(exc)
        return ToolResult(text=window.text, details=details)


# --- schemas -------------------------------------------------------------------------------------

_RECENT_FIRST = {
    "type": "boolean",
    "description": "Newest first unless explicitly false (false lists oldest first). "
    "Defaults to true.",
}
_LIMIT = {
    "type": "integer",
    "minimum": 1,
    "description": "Most entries on this page (the page may hold fewer to stay within the "
    "output budget). It caps the page, not the set: follow next_cursor for the rest.",
}
_CURSOR = {
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}],
    "description": "Where to resume: pass the previous page's next_cursor exactly (an "
    "offset oldest first, a key that does not move as the session grows newest first). "
    "next_cursor is null only at the true end.",
}
# Optional filters that also take null (as the published extension's Union with Null): one
# single-type anyOf branch each, never a ``type`` array, so single-type schema dialects (the
# OpenAPI subset of Gemini's function declarations) accept them.
_OR_NULL = {"type": "null"}
_WINDOW_ID = {
    "anyOf": [{"type": "string"}, _OR_NULL],
    "description": "Only items of this context window (ids from history_windows).",
}
_ROLE = {
    "anyOf": [{"type": "string", "enum": list(ROLES)}, _OR_NULL],
    "description": "Only items of this role: user, assistant (visible text of a turn), "
    "tool_call (one per call, JSON arguments as content), tool (results and bash runs), "
    "system (native compaction and branch summaries), developer (pi-context's own entries).",
}
_TOOL_NAME = {
    "anyOf": [{"type": "string"}, _OR_NULL],
    "description": "Only tool_call/tool items of this exact tool name.",
}
_TOOL_NAMESPACE = {
    "anyOf": [{"type": "string"}, _OR_NULL],
    "description": "Only tool_call/tool items whose tool name starts with this family and "
    "an underscore (notes matches notes_read).",
}
_MAX_CHARS = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_CHARS_PER_ITEM_MAX,
    "description": "Characters of each item's content to include (a plain prefix; "
    "truncated and total_chars say what was left out). Defaults to 1200.",
}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


_FILTERS = {
    "window_id": _WINDOW_ID,
    "role": _ROLE,
    "tool_name": _TOOL_NAME,
    "tool_namespace": _TOOL_NAMESPACE,
    "limit": _LIMIT,
    "cursor": _CURSOR,
    "recent_first": _RECENT_FIRST,
    "max_chars_per_item": _MAX_CHARS,
}

HISTORY_WINDOWS = Tool(
    name="history_windows",
    description="List the context windows of this session's durable history with their item "
    "counts; the current window is marked. Earlier windows stay readable after a reset.",
    parameters=_object({"limit": _LIMIT, "cursor": _CURSOR, "recent_first": _RECENT_FIRST}),
    handler=_paged(windows_page, indexed.windows_page),
)

HISTORY_LIST = Tool(
    name="history_list",
    description="List durable session-history items (every window, including those before a "
    "reset) with their window and item ids and a content prefix. Filter by window, role or "
    "tool; page with limit and next_cursor; read an item in full with history_read.",
    parameters=_object(_FILTERS),
    handler=_paged(list_page, indexed.list_page),
)

HISTORY_SEARCH = Tool(
    name="history_search",
    description="Case-sensitive literal substring search over durable session history (no "
    "regex, no semantic matching). query is a string or an array of strings; an item matching "
    "any of them is returned once, with match_offset_chars for history_read. Takes the same "
    "filters and paging as history_list.",
    parameters=_object(
        {
            "query": {
                "description": "A literal, or a non-empty array of literals (OR).",
                "anyOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
                ],
            },
            **_FILTERS,
        },
        required=("query",),
    ),
    handler=_paged(search_page, indexed.search_page, first=True),
)

HISTORY_READ = Tool(
    name="history_read",
    description="Read one history item's full content as a character window. The first line "
    "is a bracketed header with the item, 'chars A-B of T' and either 'end' or 'continue at "
    "offset_chars=N'; the rest is the content verbatim. Follow offset_chars=N to read on.",
    parameters=_object(
        {
            "window_id": {
                "anyOf": [{"type": "string"}, _OR_NULL],
                "description": "The item's window (optional; checked when given).",
            },
            "item_id": {
                "type": "string",
                "description": "An item id from history_list or history_search.",
            },
            "offset_chars": {
                "type": "integer",
                "description": "First character to read; negative counts back from the end "
                "(-200 reads the last 200). Defaults to 0.",
            },
            "limit_chars": {
                "type": "integer",
                "minimum": 1,
                "maximum": READ_LIMIT_CHARS_MAX,
                "description": "Most characters to read (the output budget may deliver fewer; "
                "the header says where to continue).",
            },
        },
        required=("item_id",),
    ),
    handler=_read,
)

TOOLS: tuple[Tool, ...] = (HISTORY_WINDOWS, HISTORY_LIST, HISTORY_SEARCH, HISTORY_READ)
