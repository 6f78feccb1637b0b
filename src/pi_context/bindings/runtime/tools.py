"""The runtime's model-facing tools: the reset tool (``wipe_memory``, ``clear_memory`` from
a508f68 on) and ``get_context_remaining``.

Both answer from a live runtime (the reset request lives in its reducer, the countdown in
its budget). The host passes that runtime in the ``ToolContext`` (``Runtime.tool_context()``
does); a context without one (the CLI, the MCP server) gets a clear refusal.
"""

from __future__ import annotations

from collections.abc import Mapping

from pi_context.bindings.tools import (
    JSONValue,
    LiveRuntime,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
)


def _live(name: str, ctx: ToolContext) -> LiveRuntime:
    runtime = ctx.runtime
    if runtime is None:
        where = ctx.session_path or "this host (no session file)"
        raise ToolError(
            f"{name} needs a running pi-context runtime for {where}; it is served by "
            "pi_context.bindings.runtime.Runtime (through Runtime.tool_context()), not by "
            "a stored file"
        )
    return runtime


def wipe_memory(ctx: ToolContext, args: Mapping[str, JSONValue]) -> ToolResult:
    return _live("wipe_memory", ctx).wipe_memory()


def clear_memory(ctx: ToolContext, args: Mapping[str, JSONValue]) -> ToolResult:
    return _live("clear_memory", ctx).wipe_memory()


def get_context_remaining(ctx: ToolContext, args: Mapping[str, JSONValue]) -> ToolResult:
    return _live("get_context_remaining", ctx).get_context_remaining()


_NO_ARGUMENTS: dict[str, JSONValue] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

_RESET_DESCRIPTION = (
    "End this context window and continue in a fresh one. Call it after your checkpoint "
    "note is up to date: the reset happens once the current tool batch completes, and "
    "the new window starts with your notes index and the session history available. "
    "Calling it again in the same window changes nothing."
)

# The reset tool under each generation's name (the running spec's trigger decides which one
# a runtime offers; RESET_TOOL_NAMES lists them all).
TOOLS: tuple[Tool, ...] = (
    Tool(
        name="wipe_memory",
        description=_RESET_DESCRIPTION,
        parameters=_NO_ARGUMENTS,
        handler=wipe_memory,
        sequential=True,
    ),
    Tool(
        name="clear_memory",
        description=_RESET_DESCRIPTION,
        parameters=_NO_ARGUMENTS,
        handler=clear_memory,
        sequential=True,
    ),
    Tool(
        name="get_context_remaining",
        description=(
            "How many tokens you can still use before the final close-out warning "
            "(remaining_tokens; 0 once it is reached, null when usage is unknown)."
        ),
        parameters=_NO_ARGUMENTS,
        handler=get_context_remaining,
    ),
)
RESET_TOOL_NAMES: tuple[str, ...] = ("wipe_memory", "clear_memory")
"""The reset tool's name in every generation (up to 0.34, and from a508f68 on)."""

RUNTIME_TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in TOOLS)
"""Tools that need a live runtime (a host without one, such as the MCP server, omits them)."""
