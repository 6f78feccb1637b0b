"""``pi-context tool NAME``: run a model-facing tool and print exactly what the model receives."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_context.bindings.tools import Tool

# A tool family whose module is known is loaded alone: a model's history call pays for the
# history tools' imports, not the whole registry's (start-up is most of a CLI call).
_FAMILIES = {
    "history_": "pi_context.bindings.history.tools",
    "notes_": "pi_context.bindings.notes.tools",
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tool",
        help="run a model-facing tool against a session file and notes home",
        description="Run one of the model-facing tools and print what the model would receive.",
    )
    parser.add_argument("name", nargs="?", help="tool name (omit with --list)")
    parser.add_argument("--session", type=Path, help="Pi session JSONL file")
    parser.add_argument("--notes-home", type=Path, help="notes root (PI_NOTES_HOME)")
    parser.add_argument("--args", default="{}", help="tool arguments as a JSON object")
    parser.add_argument("--leaf", help="entry id to use as the branch leaf")
    parser.add_argument("--agent", default="pi", help="agent name for the notes homes")
    parser.add_argument("--model", help="model id for the notes homes")
    parser.add_argument("--cwd", type=Path, default=None, help="project root (default: cwd)")
    parser.add_argument("--details", action="store_true", help="also print the details JSON")
    parser.add_argument("--list", action="store_true", help="list the tools and their schemas")
    parser.set_defaults(handler=run)


def _tools(name: str | None) -> dict[str, Tool]:
    for prefix, module_name in _FAMILIES.items():
        if name is not None and name.startswith(prefix):
            module = importlib.import_module(module_name)
            family = {tool.name: tool for tool in module.TOOLS}
            if name in family:
                return family
    from pi_context.bindings.tools import all_tools

    return all_tools()


def run(args: argparse.Namespace) -> int:
    import json

    from pi_context.bindings.tools import ToolContext, ToolError

    tools = _tools(None if args.list else args.name)
    if args.list:
        print(json.dumps([t.schema() for t in tools.values()], indent=2, ensure_ascii=False))
        return 0
    if not args.name:
        print("pi-context tool: a tool name is required (or --list)", file=sys.stderr)
        return 2
    tool = tools.get(args.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        print(f"pi-context tool: unknown tool {args.name!r} (known: {known})", file=sys.stderr)
        return 2
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        print(f"pi-context tool: --args is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("pi-context tool: --args must be a JSON object", file=sys.stderr)
        return 2
    context = ToolContext(
        session_path=args.session,
        notes_home=args.notes_home,
        cwd=args.cwd or Path.cwd(),
        agent_name=args.agent,
        model_id=args.model,
        leaf_id=args.leaf,
    )
    try:
        result = tool.run(context, arguments)
    except ToolError as exc:
        print(str(exc))
        return 1
    print(result.text)
    if args.details and result.details is not None:
        print(json.dumps(result.details, indent=2, ensure_ascii=False))
    return 1 if result.is_error else 0
