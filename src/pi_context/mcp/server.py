"""An MCP server that serves pi-context's notes and history tools for one Pi session.

Names, JSON Schemas and byte budgets are the shared tool registry's: the server lists each
served tool's declaration as is and answers every call through the shared dispatcher
(``tool_registry.run_tool`` over the served tools, i.e. ``Tool.run``), so an MCP client sees
what our own runtime's model sees. Every error result has one format, a JSON object
``{"error": message, ...}`` with finite numbers (``bindings.error_format``), and an unknown
tool's error names only the tools served here. The runtime tools (``wipe_memory``,
``get_context_remaining``) need a live runtime in the same process and are not served. The
wire is ``transport.stdio_transport``, which answers every line the SDK's own stdio transport
drops.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from anyio import to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from pi_context.bindings.error_format import error_text
from pi_context.bindings.notes import resident as notes_resident
from pi_context.bindings.notes.note_address import ADDRESS_HELP
from pi_context.bindings.runtime.tools import RUNTIME_TOOL_NAMES
from pi_context.bindings.session.dialect import describe_dialects
from pi_context.bindings.session.store import file_dialects
from pi_context.bindings.tool_registry import all_tools, run_tool
from pi_context.bindings.tools import Tool, ToolContext, ToolResult, error_result
from pi_context.mcp.transport import stdio_transport
from pi_context.support import heap
from pi_context.support.version import __version__

SERVER_NAME = "pi-context"
INSTRUCTIONS = (
    "Durable notes (notes_*) and the full history of one Pi session (history_*). Keep a "
    "checkpoint note current; search the history instead of guessing what happened earlier. "
    f"{ADDRESS_HELP}"
)


def served_tools() -> dict[str, Tool]:
    """The tools this server offers: every registered tool but the runtime's own."""
    return {name: tool for name, tool in all_tools().items() if name not in RUNTIME_TOOL_NAMES}


def call(
    name: str, arguments: Mapping[str, Any], context: ToolContext, tools: Mapping[str, Tool]
) -> ToolResult:
    """One tool call as this server answers it (the same in-process, for tests and hosts):
    the shared dispatcher over the served tools, its errors in the one format."""
    if name in RUNTIME_TOOL_NAMES and name not in tools:
        known = ", ".join(sorted(tools)) or "none"
        return error_result(
            {
                "error": f"{name} needs a live pi-context runtime in the same process, which an "
                f"MCP server for a stored session is not; known tools: {known}"
            }
        )
    result = run_tool(name, arguments, context, tools)
    if result.is_error:
        return ToolResult(text=error_text(result.text), details=result.details, is_error=True)
    return result


def session_dialect(context: ToolContext) -> str:
    """The dialect the served session's extension entries are in (``describe_dialects``), or
    ``unknown`` when there is no session file to read."""
    if context.session_path is None:
        return "unknown"
    try:
        return describe_dialects(file_dialects(context.session_path))
    except OSError:
        return "unknown"


def instructions(context: ToolContext) -> str:
    """The server's instructions: what it serves, and which dialect the session is in."""
    return (
        f"{INSTRUCTIONS} The session's context-window entries are in the "
        f"{session_dialect(context)} dialect (notesoup/* from 0.38, pi-context/* before); "
        "both read the same."
    )


def build_server(context: ToolContext) -> Server[Any]:
    tools = served_tools()
    # Mutating tools never overlap (the registry marks them sequential); readers run freely.
    write_lock = anyio.Lock()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=dict(tool.parameters),
                )
                for tool in tools.values()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        arguments: Mapping[str, Any] = params.arguments or {}
        tool = tools.get(name)
        if tool is None:
            result = call(name, arguments, context, tools)  # unknown here: nothing to run
        elif tool.sequential:
            async with write_lock:
                result = await to_thread.run_sync(call, name, arguments, context, tools)
        else:
            result = await to_thread.run_sync(call, name, arguments, context, tools)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            is_error=result.is_error,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=instructions(context),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(context: ToolContext) -> None:
    """Serve until the client closes stdin (answering the requests already read)."""
    server = build_server(context)
    # A long-lived host (the one declaration): the first history call loads what the rest
    # use, and what a load leaves held (a history index, a notes home's whole read and its
    # watches) is frozen, not re-scanned by every full collection.
    heap.long_lived_host()
    # Notes homes are held in memory and kept fresh by change notification (its watcher
    # thread stops with the server).
    notes_resident.enable()
    try:
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        notes_resident.shutdown()
