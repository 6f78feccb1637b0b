"""The shared tool registry in the shapes function-calling APIs expect, and one dispatcher
that turns every failure into the model-facing error result the registry defines.

Every host (our runtime, the MCP server, the pydantic-ai integration, a host's own loop) goes
through ``run_tool``, so names, schemas, byte budgets and error texts are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pi_context.bindings.session import SessionError
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.tools import JSONValue, ToolContext, ToolError, ToolResult, all_tools

SchemaStyle = Literal["neutral", "openai", "anthropic"]
STYLES: tuple[str, ...] = ("neutral", "openai", "anthropic")


def tool_schemas(style: SchemaStyle = "neutral") -> list[dict[str, Any]]:
    """Declarations of every pi-context tool.

    * ``neutral``:   ``{"name", "description", "parameters"}`` (JSON Schema of the arguments)
    * ``openai``:    ``{"type": "function", "function": {...neutral...}}``
    * ``anthropic``: ``{"name", "description", "input_schema"}``
    """
    if style not in STYLES:
        raise ValueError(f"unknown schema style {style!r}; expected one of {STYLES}")
    out: list[dict[str, Any]] = []
    for tool in all_tools().values():
        schema = tool.schema()
        if style == "openai":
            out.append({"type": "function", "function": schema})
        elif style == "anthropic":
            out.append(
                {
                    "name": schema["name"],
                    "description": schema["description"],
                    "input_schema": schema["parameters"],
                }
            )
        else:
            out.append(schema)
    return out


def _error(message: str) -> ToolResult:
    return ToolResult(text=encode({"error": message}), is_error=True)


def run_tool(
    name: str, arguments: Mapping[str, JSONValue] | None, context: ToolContext
) -> ToolResult:
    """Run one tool; unknown names, bad arguments and storage errors become error results.

    ``wipe_memory`` and ``get_context_remaining`` answer from the live ``Runtime`` of
    ``context.session_path`` and refuse, saying so, when none runs in this process.
    """
    tools = all_tools()
    tool = tools.get(name)
    if tool is None:
        return _error(f"unknown tool {name!r}; known tools: {', '.join(sorted(tools))}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return _error(f"{name} arguments must be a JSON object")
    try:
        return tool.run(context, arguments)
    except ToolError as exc:
        return ToolResult(text=str(exc), is_error=True)
    except SessionError as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"{name}: {exc.strerror or exc} ({exc.filename or 'no file'})")
