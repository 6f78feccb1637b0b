"""``pi-context tool NAME``: run a model-facing tool and print exactly what the model receives."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any


_VALUED = ("--session", "--notes-home", "--args", "--leaf", "--agent", "--model", "--cwd")
_FLAGS = ("--details", "--list")
_PATHS = ("--session", "--notes-home", "--cwd")


class ToolArgs:
    """The parsed command line (the same attributes as argparse's namespace)."""

    __slots__ = (
        "name", "session", "notes_home", "args", "leaf", "agent", "model", "cwd", "details", "list"
    )  # fmt: skip

    def __init__(self) -> None:
        self.name: str | None = None
        self.session: Path | None = None
        self.notes_home: Path | None = None
        self.args = "{}"
        self.leaf: str | None = None
        self.agent = "pi"
        self.model: str | None = None
        self.cwd: Path | None = None
        self.details = False
        self.list = False


def quick_args(argv: list[str]) -> ToolArgs | None:
    """``argv`` (after ``tool``) read as argparse would read it, or ``None`` when it is not
    plainly well-formed (help, an unknown or abbreviated option, a missing value, a value
    that looks like an option): argparse then reads it and reports any error."""
    parsed = ToolArgs()
    values: dict[str, str] = {}
    position = 0
    while position < len(argv):
        word = argv[position]
        position += 1
        if not word.startswith("-"):
            if parsed.name is not None:
                return None  # a second positional is an error argparse reports
            parsed.name = word
            continue
        option, equals, value = word.partition("=")
        if option in _FLAGS and not equals:
            setattr(parsed, option[2:], True)
        elif option in _VALUED:
            if not equals:
                if position == len(argv) or argv[position].startswith("-"):
                    return None
                value = argv[position]
                position += 1
            values[option] = value
        else:
            return None
    if values.keys() & _PATHS:
        from pathlib import Path

        for option in _PATHS:
            if option in values:
                setattr(parsed, option[2:].replace("-", "_"), Path(values.pop(option)))
    for option, value in values.items():
        setattr(parsed, option[2:].replace("-", "_"), value)
    return parsed


def register(subparsers: Any) -> None:
    from pathlib import Path

    parser = subparsers.add_parser(
        "tool",
        help="run a model-facing tool against a session file and notes home",
        description="Run one of the model-facing tools and print what the model would receive.",
    )
    parser.add_argument("name", nargs="?", help="tool name (omit with --list)")
    parser.add_argument(
        "--session",
        type=Path,
        metavar="FILE",
        help="Pi session JSONL file: required by the history tools and wipe_memory, and for "
        "the session's notes home (notes tools without it see no session home)",
    )
    parser.add_argument(
        "--notes-home",
        type=Path,
        metavar="DIR",
        help="notes root (default: $PI_NOTES_HOME, else ~/.agents/notes)",
    )
    parser.add_argument("--args", default="{}", help="tool arguments as a JSON object")
    parser.add_argument("--leaf", help="entry id to use as the branch leaf")
    parser.add_argument("--agent", default="pi", help="agent name for the notes homes")
    parser.add_argument("--model", help="model id for the notes homes")
    parser.add_argument("--cwd", type=Path, default=None, help="project root (default: cwd)")
    parser.add_argument("--details", action="store_true", help="also print the details JSON")
    parser.add_argument("--list", action="store_true", help="list the tools and their schemas")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace | ToolArgs) -> int:
    import json

    # A tool family whose name is known is loaded alone (the registry's find_tool): a model's
    # history call pays for the history tools' imports, not the whole registry's.
    from pi_context.bindings.tool_registry import all_tools, find_tool
    from pi_context.bindings.tools import ToolContext
    from pi_context.cli._options import check_paths, fail

    if args.list and args.name:
        return fail("tool", f"--list lists every tool: it takes no tool name ({args.name!r})")
    if args.list:
        tools = all_tools()
        print(json.dumps([t.schema() for t in tools.values()], indent=2, ensure_ascii=False))
        return 0
    if not args.name:
        print("pi-context tool: a tool name is required (or --list)", file=sys.stderr)
        return 2
    tool = find_tool(args.name)
    if tool is None:
        known = ", ".join(sorted(all_tools())) or "none"
        print(f"pi-context tool: unknown tool {args.name!r} (known: {known})", file=sys.stderr)
        return 2
    from pi_context.support.jsonlimits import JSONLimitError, check_depth, too_deep_message

    try:
        check_depth(args.args)  # before the parser, which recurses once per level
        arguments = json.loads(args.args)
    except JSONLimitError as exc:
        print(f"pi-context tool: --args {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"pi-context tool: --args {too_deep_message()}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as exc:
        print(f"pi-context tool: --args is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("pi-context tool: --args must be a JSON object", file=sys.stderr)
        return 2
    notes_home = args.notes_home
    if notes_home is not None and notes_home.exists() and not notes_home.is_dir():
        print(f"pi-context tool: --notes-home {notes_home}: not a directory", file=sys.stderr)
        return 2
    bad = check_paths("tool", ("--session", args.session, "file"), ("--cwd", args.cwd, "dir"))
    if bad is not None:
        return bad
    cwd = args.cwd
    if cwd is None:
        from pathlib import Path

        cwd = Path.cwd()
    context = ToolContext(
        session_path=args.session,
        notes_home=args.notes_home,
        cwd=cwd,
        agent_name=args.agent,
        model_id=args.model,
        leaf_id=args.leaf,
    )
    result = tool.run(context, arguments)  # the shared dispatcher: never raises a named error
    if result.is_error:
        from pi_context.bindings.error_format import error_text

        print(error_text(result.text))  # the one error format
    else:
        print(result.text)
    if args.details and result.details is not None:
        print(json.dumps(result.details, indent=2, ensure_ascii=False))
    return 1 if result.is_error else 0
