"""The model-facing notes tools: ``notes_write``, ``notes_edit``, ``notes_read``,
``notes_list`` and ``notes_search``.

Each is a plain function from (context, arguments) to a ``ToolResult`` plus a JSON Schema.
A note is named by its address (``note_address``: ``checkpoint.md``, ``@project/plan.md``…)
in the ``path`` argument; ``scope`` stays as an alias that must agree with it. Every result
and listing row carries the note's ``address``, which the tools take back verbatim.
A malformed argument raises ``ToolError`` with a ``{"error", <argument>}`` payload (the
toolkit's dispatcher, ``Tool.run``, delivers it and checks the argument names for every
tool); a well-formed request that cannot be served (``note not found``, an offset past the
end, a legacy note…) returns the same envelope as an error result. Every response fits
``TOOL_OUTPUT_MAX_BYTES``.

This module is their registry: the JSON Schemas and ``TOOLS``. What each tool does is in
``tool_calls.py``; how they read their arguments and reach the store, in ``tool_args.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pi_context.bindings.notes import tool_args as ta
from pi_context.bindings.notes.frontmatter import ORIGINS
from pi_context.bindings.notes.homes import (
    SCOPES,
)
from pi_context.bindings.notes.note_address import (
    ADDRESS_HELP,
)
from pi_context.bindings.notes.records import NOTE_MAX_BYTES
from pi_context.bindings.notes.store import (
    NoteError,
)
from pi_context.bindings.notes.tool_args import Args, address_in, homes_for, store_for
from pi_context.bindings.notes.tool_calls import (
    notes_edit,
    notes_list,
    notes_read,
    notes_search,
    notes_update,
    notes_write,
)
from pi_context.bindings.tool_output import (
    READ_LIMIT_CHARS_MAX,
)
from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolResult

__all__ = [
    "TOOLS",
    "address_in",
    "homes_for",
    "notes_edit",
    "notes_list",
    "notes_read",
    "notes_search",
    "notes_update",
    "notes_write",
    "store_for",
]

# --- registry -------------------------------------------------------------------------------

_SCOPE = {"type": "string", "enum": list(SCOPES)}
_SCOPE_ALIAS = {
    **_SCOPE,
    "description": (
        "Alias kept for older callers: the home of a bare path. With an @ address it must "
        "name the same home."
    ),
}
_PATH = {
    "type": "string",
    "description": (
        "The note's address: checkpoint/progress.md (this session), @project/<path>, "
        "@human/<path>, @self/<path>, @model/<path>, or an address exactly as a listing "
        "shows it."
    ),
}
_ADDRESS = {
    **_PATH,
    "description": str(_PATH["description"]) + " (path is the older name of this argument)",
}
_PATTERN = {
    "type": "string",
    "description": (
        "Glob over note paths: * and ? stay within one segment, ** crosses folders. Start it "
        "with a home (@project/**, @self/plans/*, @agents/*/MAP.md) to list only that home."
    ),
}
_CURSOR = {
    "type": "integer",
    "minimum": 0,
    "description": "Resume from the previous page's next_cursor. Defaults to 0.",
}
_LIST_CURSOR = {
    "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}],
    "description": "Resume from the previous page's next_cursor, passed exactly as given: it "
    "names where the walk stands, so notes written or edited between pages are neither "
    "skipped nor repeated. Defaults to 0 (the start).",
}


def with_address(name: str, args: Args) -> Args:
    """The arguments with the note named in ``path``: the newest contract calls it ``address``,
    the earlier one ``path``; either is accepted, both only when they agree."""
    if "address" not in args:
        if "path" not in args:
            raise ta._fail(
                f"{name} needs address, the note's address (path is its older name)",
                "invalid_address",
            )
        return args
    address = args["address"]
    if "path" in args and args["path"] != address:
        raise ta._fail(
            f"{name}: address and path name different notes; pass one of them",
            "invalid_address",
            address=address,
            path=args["path"],
        )
    return {**{k: v for k, v in args.items() if k != "address"}, "path": address}


def _guarded(
    run: Callable[[ToolContext, Args], ToolResult], addressed: str | None = None
) -> Callable[[ToolContext, Args], ToolResult]:
    """Any filesystem failure the store did not name still reaches the model as a named error.
    ``addressed`` names a tool that takes one note's address (``with_address``)."""

    def guarded(ctx: ToolContext, args: Args) -> ToolResult:
        if addressed is not None:
            args = with_address(addressed, args)
        echo = ta._echo(args, ("path", "scope"))
        try:
            return run(ctx, args)
        except NoteError as exc:
            return ta._error_result(exc.message, exc.fields, echo, exc.code)
        except OSError as exc:
            message = f"notes filesystem error: {exc.strerror or exc}"
            return ta._error_result(message, {}, echo, "io_error")

    guarded.__name__ = run.__name__
    guarded.__doc__ = run.__doc__
    return guarded


_ORIGIN = {
    "type": "string",
    "enum": list(ORIGINS),
    "description": (
        "Where the note's content came from: user (written or dictated by the human), self "
        "(written by you; the default) or external (third-party text, tool output, fetched "
        "material)."
    ),
}
_CRUMPLED = {
    "type": "boolean",
    "description": (
        "true crumples the note: it leaves the boot index, notes_list and notes_search, stays "
        "readable by address and is listed with wastebasket: true. false smooths it back."
    ),
}
_WASTEBASKET = {
    "type": "boolean",
    "description": "true lists only crumpled notes instead of live ones.",
}
_REPLACE_ALL = {
    "type": "boolean",
    "description": "Replace every occurrence of each oldText (it must still occur at least once).",
}
_RENAME_TO = {
    "type": "string",
    "description": (
        "Move the note to this address (same rules as address), keeping createdAt and every "
        "other metadata key. Used alone, never with edits, origin, crumpled or replace_all. A "
        "live note at the target refuses; a crumpled one is replaced. An empty rename_to is "
        "ignored."
    ),
}
_EDITS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "oldText": {"type": "string", "minLength": 1},
            "newText": {"type": "string"},
        },
        "required": ["oldText", "newText"],
        "additionalProperties": False,
    },
    "description": "Exact-text replacements; optional for metadata-only updates.",
}
_UPDATE_DESCRIPTION = (
    "Update one note: exact-text body edits (each oldText must occur exactly once unless "
    "replace_all is set), a metadata-only change (origin, crumpled), or, alone, a move to "
    "rename_to. Edits apply in order, all or nothing. Reports how many edits changed the text "
    f"and the change kind (none, body, metadata, file). {ADDRESS_HELP}"
)


def _update_parameters() -> dict[str, JSONValue]:
    return _schema(
        {
            "address": _ADDRESS,
            "path": _PATH,
            "edits": _EDITS,
            "origin": _ORIGIN,
            "crumpled": _CRUMPLED,
            "replace_all": _REPLACE_ALL,
            "rename_to": _RENAME_TO,
            "stale": {"type": "boolean", "description": "Set or clear the stale flag (earlier)."},
            "scope": _SCOPE_ALIAS,
        },
        (),
    )


def _count(what: str, maximum: int, default: int) -> dict[str, JSONValue]:
    """A whole number from 1 to ``maximum``, ``default`` when left out."""
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "description": f"{what}. Defaults to {default}.",
    }


def _schema(properties: dict[str, JSONValue], required: Sequence[str]) -> dict[str, JSONValue]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="notes_write",
        description=(
            "Create or replace a note with exactly this content. Notes are Markdown files that "
            f"persist across context windows and sessions. {ADDRESS_HELP} A write always leaves "
            "the note uncrumpled and reports its outcome (created, overwrote, uncrumpled). "
            "stale: true closes the note (it leaves the boot index but stays readable); writing "
            f"without stale reopens it. Content is limited to {NOTE_MAX_BYTES} UTF-8 bytes."
        ),
        parameters=_schema(
            {
                "address": _ADDRESS,
                "path": _PATH,
                "content": {"type": "string", "description": "The complete new note body."},
                "origin": _ORIGIN,
                "scope": _SCOPE_ALIAS,
                "stale": {"type": "boolean", "description": "Close the note. Defaults to false."},
            },
            ("content",),
        ),
        handler=_guarded(notes_write, "notes_write"),
        sequential=True,
        envelope=True,
    ),
    Tool(
        name="notes_update",
        description=_UPDATE_DESCRIPTION,
        parameters=_update_parameters(),
        handler=_guarded(notes_update, "notes_update"),
        sequential=True,
        envelope=True,
    ),
    Tool(
        name="notes_edit",
        description="The earlier name of notes_update, with the same arguments. "
        + _UPDATE_DESCRIPTION,
        parameters=_update_parameters(),
        handler=_guarded(notes_edit, "notes_edit"),
        sequential=True,
        envelope=True,
    ),
    Tool(
        name="notes_read",
        description=(
            "Read a character window of a note file, metadata block first. The first line is a "
            "bracketed header naming the delivered range, the total length and where to "
            "continue; the window follows verbatim. A negative offset_chars counts back from "
            f"the end, so -200 reads the last 200 characters. {ADDRESS_HELP}"
        ),
        parameters=_schema(
            {
                "address": _ADDRESS,
                "path": _PATH,
                "scope": _SCOPE_ALIAS,
                "offset_chars": {
                    "type": "integer",
                    "description": "Window start; negative counts from the end. Defaults to 0.",
                },
                "limit_chars": _count(
                    "Most characters returned", READ_LIMIT_CHARS_MAX, READ_LIMIT_CHARS_MAX
                ),
            },
            (),
        ),
        handler=_guarded(notes_read, "notes_read"),
        envelope=True,
    ),
    Tool(
        name="notes_list",
        description=(
            "List notes across the homes (or one home), most recently updated first, each with "
            "its address (pass it back as given), stale flag, size and timestamps; crumpled notes "
            "are hidden (counted in crumpled_excluded) unless wastebasket lists only them. "
            "Page with cursor."
        ),
        parameters=_schema(
            {
                "pattern": _PATTERN,
                "scope": {**_SCOPE, "description": "Only this home (an alias of an @ pattern)."},
                "max_results": _count("Page size", ta.LIST_MAX, ta.LIST_DEFAULT),
                "limit": _count("Page size (max_results)", ta.LIST_MAX, ta.LIST_DEFAULT),
                "wastebasket": _WASTEBASKET,
                "cursor": _LIST_CURSOR,
            },
            (),
        ),
        handler=_guarded(notes_list),
        envelope=True,
    ),
    Tool(
        name="notes_search",
        description=(
            "Case-sensitive literal search of note bodies, line by line. query is a string or "
            "an array of strings matched as OR. Files come in path order; each match names its "
            "line, its offset_chars in the body and read_offset_chars to pass to notes_read "
            "with the file's address. Page with cursor."
        ),
        parameters=_schema(
            {
                "query": {
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1},
                            "minItems": 1,
                        },
                    ],
                    "description": "Literal text, or several literals of which any may match.",
                },
                "pattern": _PATTERN,
                "scope": {**_SCOPE, "description": "Only this home (an alias of an @ pattern)."},
                "max_matches_per_file": _count(
                    "Matches shown per file", ta.MATCHES_MAX, ta.MATCHES_DEFAULT
                ),
                "max_files": _count("Files per page", ta.FILES_MAX, ta.FILES_DEFAULT),
                "limit": _count("Files per page (max_files)", ta.FILES_MAX, ta.FILES_DEFAULT),
                "wastebasket": _WASTEBASKET,
                "max_chars_per_match": _count(
                    "Characters shown per matching line", ta.MATCH_CHARS_MAX, ta.MATCH_CHARS_DEFAULT
                ),
                "cursor": _CURSOR,
            },
            ("query",),
        ),
        handler=_guarded(notes_search),
        envelope=True,
    ),
)
