"""The runtime's two model-facing tools: ``wipe_memory`` and ``get_context_remaining``.

Both answer from a live ``Runtime`` (the reset request lives in its reducer, the countdown in
its budget). A runtime registers itself under its session file while it runs, so any host
that dispatches through the shared registry (``pi_context.bindings.tools.all_tools``) reaches
it with an ordinary ``ToolContext``. Without a live runtime for that session the tools refuse
with a clear message instead of guessing.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from .runtime import Runtime

RUNTIME_TOOL_NAMES = ("wipe_memory", "get_context_remaining")

_live: weakref.WeakValueDictionary[str, Runtime] = weakref.WeakValueDictionary()


def _key(path: Path | None) -> str | None:
    return os.path.abspath(path) if path is not None else None


def register_live(runtime: Runtime) -> None:
    key = _key(runtime.session.path)
    if key is not None:
        _live[key] = runtime


def unregister_live(runtime: Runtime) -> None:
    key = _key(runtime.session.path)
    if key is not None and _live.get(key) is runtime:
        del _live[key]


def live_runtime(ctx: ToolContext) -> Runtime | None:
    key = _key(ctx.session_path)
    return _live.get(key) if key is not None else None


def check_no_arguments(name: str, args: Mapping[str, JSONValue]) -> None:
    if args:
        keys = ", ".join(repr(k) for k in args)
        raise ToolError(encode({"error": f"{name} takes no arguments; got {keys}"}))


def _runtime_for(name: str, ctx: ToolContext) -> Runtime:
    runtime = live_runtime(ctx)
    if runtime is None:
        where = ctx.session_path or "this host (no session file)"
        raise ToolError(
            encode(
                {
                    "error": f"{name} needs a running pi-context runtime for {where}; "
                    "it is served by pi_context.bindings.runtime.Runtime, not by a stored file"
                }
            )
        )
    return runtime


def wipe_memory(ctx: ToolContext, args: Mapping[str, JSONValue]) -> ToolResult:
    check_no_arguments("wipe_memory", args)
    return _runtime_for("wipe_memory", ctx).wipe_memory()


def get_context_remaining(ctx: ToolContext, args: Mapping[str, JSONValue]) -> ToolResult:
    check_no_arguments("get_context_remaining", args)
    return _runtime_for("get_context_remaining", ctx).get_context_remaining()


_NO_ARGUMENTS: dict[str, JSONValue] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

TOOLS: tuple[Tool, ...] = (
    Tool(
        name="wipe_memory",
        description=(
            "End this context window and continue in a fresh one. Call it after your checkpoint "
            "note is up to date: the reset happens once the current tool batch completes, and "
            "the new window starts with your notes index and the session history available. "
            "Calling it again in the same window changes nothing."
        ),
        parameters=_NO_ARGUMENTS,
        run=wipe_memory,
        sequential=True,
    ),
    Tool(
        name="get_context_remaining",
        description=(
            "How many tokens you can still use before the final close-out warning "
            "(remaining_tokens; 0 once it is reached, null when usage is unknown)."
        ),
        parameters=_NO_ARGUMENTS,
        run=get_context_remaining,
    ),
)
