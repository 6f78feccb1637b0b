"""The static registry of model-facing tools: every family's tools by name, the schema
shapes function-calling APIs expect, and ``run_tool`` (look a tool up, then dispatch it
through ``Tool.run``). Every host goes through here, so names, schemas, byte budgets and
error texts are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping

from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolResult, error_result

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)
if TYPE_CHECKING:
    from typing import Literal

    SchemaStyle = Literal["neutral", "openai", "anthropic"]
else:
    SchemaStyle = str

STYLES: tuple[str, ...] = ("neutral", "openai", "anthropic")

FAMILIES: tuple[tuple[str, str], ...] = (
    ("history_", "history"),
    ("notes_", "notes"),
    ("context_history_", "handoff"),
)
"""Tool-name prefix -> family, so a host that knows a tool's name loads only its family
(the runtime family's names share no prefix; they are found in the whole registry)."""


def family_tools(family: str) -> tuple[Tool, ...]:
    """The tools of one family (``history``, ``notes``, ``handoff``, ``runtime``)."""
    if family == "history":
        from pi_context.bindings.history.tools import TOOLS as history

        return history
    if family == "notes":
        from pi_context.bindings.notes.tools import TOOLS as notes

        return notes
    if family == "handoff":
        from pi_context.bindings.handoff.tools import TOOLS as handoff

        return handoff
    if family == "runtime":
        from pi_context.bindings.runtime.tools import TOOLS as runtime

        return runtime
    raise ValueError(f"unknown tool family {family!r}")


def all_tools() -> dict[str, Tool]:
    """Every registered tool by name (history, notes, runtime and handoff tools)."""
    tools: dict[str, Tool] = {}
    for family in ("history", "notes", "runtime", "handoff"):
        for tool in family_tools(family):
            if tool.name in tools:
                raise RuntimeError(f"tool {tool.name!r} registered twice ({family})")
            tools[tool.name] = tool
    return tools


def find_tool(name: str) -> Tool | None:
    """The tool called ``name``, loading only the family its name belongs to when it can."""
    for prefix, family in FAMILIES:
        if name.startswith(prefix):
            found = next((tool for tool in family_tools(family) if tool.name == name), None)
            if found is not None:
                return found
    return all_tools().get(name)


def run_tool(
    name: str,
    arguments: object,
    context: ToolContext,
    tools: Mapping[str, Tool] | None = None,
) -> ToolResult:
    """Run tool ``name`` among ``tools`` (default: every registered tool); an unknown name,
    bad arguments and storage errors become error results."""
    tool = find_tool(name) if tools is None else tools.get(name)
    if tool is None:
        known = ", ".join(sorted(all_tools() if tools is None else tools)) or "none"
        return error_result({"error": f"unknown tool {name!r}; known tools: {known}"})
    return tool.run(context, arguments)


def tool_schemas(
    style: SchemaStyle = "neutral", tools: Mapping[str, Tool] | None = None
) -> list[dict[str, JSONValue]]:
    """Declarations of ``tools`` (default: every registered tool).

    * ``neutral``:   ``{"name", "description", "parameters"}`` (JSON Schema of the arguments)
    * ``openai``:    ``{"type": "function", "function": {...neutral...}}``
    * ``anthropic``: ``{"name", "description", "input_schema"}``
    """
    if style not in STYLES:
        raise ValueError(f"unknown schema style {style!r}; expected one of {STYLES}")
    out: list[dict[str, JSONValue]] = []
    for tool in (all_tools() if tools is None else tools).values():
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
