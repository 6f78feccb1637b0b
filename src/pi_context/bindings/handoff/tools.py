"""``context_history_search`` / ``context_history_read``: the model reads the records notes
cite — of the current branch (``scope="session"``) or, in a handoff destination, of the
source's verified branch (``scope="handoff"``).

The handoff scope re-verifies the binding on every call (receipt, parent path, offer, source
branch digest), so a source that changed after the handoff is never read. Limits are the
seed's: literal queries of 1–256 characters, 1–20 results, UTF-16 offsets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_context.bindings.addresses import address_problem
from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, fit_json, json_bytes
from pi_context.bindings.tools import Tool, ToolContext, ToolError, ToolResult

from .errors import HandoffError
from .held import held_records
from .history import HistoryRecord, RecordSearch, SearchPage, extract_records
from .relay import inherited_records

SCOPES = ("session", "handoff")
READ_BUDGET_BYTES = 8_192
"""Bytes of record text one read returns (well inside the tool output ceiling)."""
assert READ_BUDGET_BYTES < TOOL_OUTPUT_MAX_BYTES


def _records(ctx: ToolContext, scope: Any) -> list[HistoryRecord]:
    if scope not in SCOPES:
        raise HandoffError("invalid_query", f"scope must be one of {', '.join(SCOPES)}")
    if ctx.session_path is None:
        raise ToolError("context history needs a session file")
    try:
        session = Session.open(ctx.session_path, readonly=True)
    except SessionError as exc:
        raise ToolError(f"cannot read the session: {exc}") from None
    if scope == "handoff":
        return inherited_records(session)
    return extract_records(session.branch(ctx.leaf_id))


def _searchable(ctx: ToolContext, scope: Any) -> RecordSearch:
    """The records of ``scope`` ready to search. The session's own branch is kept between
    calls while the file's ``stat`` vouches that it is unchanged (``held_records``); the
    handoff scope re-verifies its binding every call."""
    if scope == "session" and ctx.session_path is not None:
        path = ctx.session_path
        return held_records(path, ctx.leaf_id, lambda: RecordSearch(_records(ctx, scope)))
    return RecordSearch(_records(ctx, scope))


def _error(exc: HandoffError) -> ToolResult:
    # the one error format: the message under "error" (a string, as every tool's), the
    # handoff's error code beside it
    payload = {"error": exc.message, "code": exc.code}
    return ToolResult(text=fit_json(payload), details=payload, is_error=True)


def _search_json(page: SearchPage) -> dict[str, Any]:
    """The page as delivered: every id whole (or null with its reason), never cut to fit.

    Trailing matches that do not fit are left to the next page (``nextOffset`` counts only
    what is shown); one match alone always fits once its excerpt and timestamp give way.
    """
    items: list[dict[str, Any]] = []
    for record in page.items:
        item = record.to_json()
        problem = address_problem(record.id, "record id")
        if problem is not None:
            item["id"] = None
            item["unaddressable"] = f"{problem}: context_history_read cannot fetch it"
        items.append(item)
    start = page.next_offset - len(items)
    shown = {"items": items, "nextOffset": page.next_offset, "hasMore": page.has_more}
    while len(items) > 1 and json_bytes(shown) > TOOL_OUTPUT_MAX_BYTES:
        items.pop()
        shown = {"items": items, "nextOffset": start + len(items), "hasMore": True}
    return shown


def _search(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    try:
        index = _searchable(ctx, args.get("scope", "session"))
        page = index.search(args.get("query"), args.get("offset", 0), args.get("limit", 10))
    except HandoffError as exc:
        return _error(exc)
    return ToolResult(text=fit_json(_search_json(page)), details=None)


def _read(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    try:
        record_id = args.get("id")
        problem = address_problem(record_id, "id") if isinstance(record_id, str) else None
        if problem is not None:
            # No search ever delivers such an id; refusing keeps the two tools consistent.
            raise HandoffError("source_not_found", f"{problem}; use an id a search returned")
        index = _searchable(ctx, args.get("scope", "session"))
        page = index.read(args.get("id"), args.get("offset", 0), READ_BUDGET_BYTES)
    except HandoffError as exc:
        return _error(exc)
    return ToolResult(text=fit_json(page.to_json()), details=None)


_SCOPE = {
    "type": "string",
    "enum": list(SCOPES),
    "description": 'Whose history: "session" (this branch, the default) or "handoff" (the '
    "source session this one was handed off from, read only while the relay still verifies).",
}
_OFFSET = {"type": "integer", "minimum": 0}

CONTEXT_HISTORY_SEARCH = Tool(
    name="context_history_search",
    description=(
        "Find records (user, assistant, tool results, bash runs, summaries, extension messages) "
        "containing a literal string. Returns each match's id, role, timestamp and an excerpt "
        "starting up to 60 characters before the match (startOffset). Task notes cite these "
        "ids."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 256},
            "offset": {**_OFFSET, "description": "Matches to skip (the previous nextOffset)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            "scope": _SCOPE,
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    handler=_search,
)
CONTEXT_HISTORY_READ = Tool(
    name="context_history_read",
    description=(
        "Read one record by id from an offset (UTF-16 units, e.g. a search's startOffset or "
        "the previous nextOffset); hasMore says whether to continue."
    ),
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "offset": _OFFSET,
            "scope": _SCOPE,
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    handler=_read,
)

TOOLS = (CONTEXT_HISTORY_SEARCH, CONTEXT_HISTORY_READ)
