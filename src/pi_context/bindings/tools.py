"""The registry of model-facing tools, shared by every binding and by ``pi-context tool``.

A tool is framework-neutral: a name, a description, a JSON Schema for its arguments and a
plain function from (context, arguments) to a result. Hosts translate these into their own
function-calling shapes; nothing here knows about an agent framework.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path

from pi_context.frozen import field, frozen

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)
if TYPE_CHECKING:
    from typing import Any

    JSONValue = Any  # JSON-ready value: dict/list/str/int/float/bool/None
else:
    JSONValue = object  # only annotations use it

# Modules that contribute tools. Each exposes ``TOOLS: tuple[Tool, ...]``; a module that
# is not present yet is skipped, so features can land independently.
TOOL_MODULES: tuple[str, ...] = (
    "pi_context.bindings.history.tools",
    "pi_context.bindings.notes.tools",
    "pi_context.bindings.runtime.tools",
    "pi_context.bindings.handoff.tools",
)


@frozen
class ToolContext:
    """What a tool may know about its host: the session, the notes root and the identity."""

    session_path: Path | None = None
    notes_home: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    session_id: str | None = None
    agent_name: str = "pi"
    model_id: str | None = None
    leaf_id: str | None = None


@frozen
class ToolResult:
    """What the model receives (``text``) plus structured details for the host."""

    text: str
    details: JSONValue = None
    is_error: bool = False
    # The tool ends the model's tool loop (wipe_memory): no follow-up request this turn.
    terminate: bool = False


class ToolError(Exception):
    """A named, model-facing error: the message is what the model sees."""


@frozen
class Tool:
    """A model-facing tool: name, description, JSON Schema of its arguments, and its code."""

    name: str
    description: str
    parameters: Mapping[str, JSONValue]
    run: Callable[[ToolContext, Mapping[str, JSONValue]], ToolResult]
    # Tools that mutate storage must not run in parallel with each other.
    sequential: bool = False

    def schema(self) -> dict[str, JSONValue]:
        """The function-calling declaration a host exports for this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }


def all_tools() -> dict[str, Tool]:
    """Every registered tool by name (history, notes and runtime tools)."""
    tools: dict[str, Tool] = {}
    for module_name in TOOL_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module_name.startswith(exc.name):
                continue
            raise
        for tool in getattr(module, "TOOLS", ()):
            if tool.name in tools:
                raise RuntimeError(f"tool {tool.name!r} registered twice ({module_name})")
            tools[tool.name] = tool
    return tools
