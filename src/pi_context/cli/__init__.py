"""The ``pi-context`` command.

Each subcommand lives in its own module in this package and exposes
``register(subparsers) -> None``; modules are discovered, so features add commands without
editing a shared list.

Discovery is cheap: a module is imported only when its command runs (or when its name and
help cannot be read from its source). For the others the name and one-line help are read
from the literal ``subparsers.add_parser("name", help="...")`` calls in the module's source,
so ``pi-context --help`` does not load what every command needs.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up is the cost)
if TYPE_CHECKING:
    import argparse
    from typing import Any

_STRING = r"""(?:"[^"\\\n]*"|'[^'\\\n]*')"""
_REGISTER = r"^def register\(\s*(\w+)"
_HELP = r"\bhelp\s*=\s*(\(?(?:\s*" + _STRING + r")+\s*\)?)"


def _literal(text: str) -> str:
    """The value of adjacent plain string literals (no escapes: the patterns exclude them)."""
    import re

    return "".join(piece[1:-1] for piece in re.findall(_STRING, text))


def _declared(path: str) -> list[tuple[str, str]] | None:
    """(command, help) of each ``<subparsers>.add_parser("name", help="...")`` that the
    module's ``register(<subparsers>)`` makes, read from its source with literal strings;
    None when the source does not say (the module is then imported). Regular expressions,
    not a parse: reading ten small files must stay a millisecond."""
    import re

    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, ValueError):
        return None
    register = re.search(_REGISTER, text, re.MULTILINE)
    if register is None:
        return None
    call = re.compile(r"\b" + register.group(1) + r"\.add_parser\(\s*(" + _STRING + r")")
    found: list[tuple[str, str]] = []
    for name in call.finditer(text, register.end()):
        # the help keyword of that same call: before its first add_argument or the next def
        rest = text[name.end() :]
        stops = (rest.find("add_argument"), rest.find("add_parser"), rest.find("\ndef "))
        stop = min((i for i in stops if i >= 0), default=len(rest))
        help_text = re.compile(_HELP).search(rest, 0, stop)
        if help_text is None:
            return None
        found.append((_literal(name.group(1)), _literal(help_text.group(1))))
    return found or None


def _modules() -> list[str]:
    """The command modules: every ``*.py`` in this package not starting with ``_``."""
    found = {
        name[:-3]
        for folder in __path__
        for name in (os.listdir(folder) if os.path.isdir(folder) else ())
        if name.endswith(".py") and not name.startswith("_")
    }
    return sorted(found)


def _register(subparsers: Any, module: str) -> None:
    loaded = importlib.import_module(f"{__name__}.{module}")
    register = getattr(loaded, "register", None)
    if callable(register):
        register(subparsers)


def build_parser(
    argv: Sequence[str] | None = None, *, lazy: bool = False
) -> argparse.ArgumentParser:
    """The full parser; with ``lazy``, only the command named in ``argv`` is imported and the
    others are listed by name and help."""
    import argparse

    from pi_context.support.version import __version__

    parser = argparse.ArgumentParser(
        prog="pi-context",
        description="Verified reset-control core for LLM context windows.",
    )
    parser.add_argument(
        "--version", action="version", version=f"pi-context {__version__}", help="print the version"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    wanted = next((a for a in argv or () if not a.startswith("-")), None)
    for module in _modules():
        declared = _declared(os.path.join(__path__[0], f"{module}.py")) if lazy else None
        if declared is None or any(command == wanted for command, _ in declared):
            _register(subparsers, module)
        else:
            for command, help_text in declared:
                subparsers.add_parser(command, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["tool"]:
        # A model's tool call through the CLI: a well-formed command line is read without
        # building the parser (argparse and its help machinery are a fifth of the call's
        # start-up); anything else, --help and every error included, goes through argparse.
        from pi_context.cli import tool

        quick = tool.quick_args(args_in[1:])
        if quick is not None:
            return _handled(tool.run, quick)
    parser = build_parser(args_in, lazy=True)
    args, extra = parser.parse_known_args(args_in)
    if extra:  # said by the (sub)command's own parser: "pi-context cache info: error: ..."
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return _handled(args.handler, args)


def _innermost(parser: argparse.ArgumentParser, args: Any) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` ran (``pi-context session export``'s own)."""
    import argparse

    from pi_context.cli._options import command_name

    for word in command_name(args).split():
        choices = next(
            (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
            None,
        )
        if not isinstance(choices, dict) or word not in choices:
            break
        parser = choices[word]
    return parser


LONG_LIVED = frozenset({"mcp", "serve"})
"""Commands that serve until their input ends: nothing they load is frozen (``gc_pause``)."""


def console() -> None:
    """The ``pi-context`` executable (and ``python -m pi_context``): ``main``, then exit.

    A command is a one-off process whose whole time its caller waits for. What it loads is
    frozen rather than scanned by the collector (``gc_pause.one_shot``; not for the servers,
    ``LONG_LIVED``), and tearing the interpreter down (freeing a loaded session object by
    object, a last garbage collection: ~0.5 s after a 100k-entry load, ~2 s at 400k) is
    skipped: once the exit handlers have run and the output is flushed, the process exits
    at once with the command's code. Every write a command makes is finished (synced and
    renamed in place) before it returns. A command that leaves another thread running exits
    normally, which waits for it.
    """
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if command not in LONG_LIVED:
        from pi_context.support.gc_pause import one_shot

        one_shot()
    try:
        code = main()
    except SystemExit as exc:  # argparse's usage errors and --help, sys.exit in a handler
        code = _exit_code(exc.code)
    _exit_now(code)


def _exit_code(code: object) -> int:
    """The process status ``raise SystemExit(code)`` would give (a message goes to stderr)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _exit_now(code: int) -> None:
    """Exit with ``code`` without the interpreter's teardown: exit handlers first (``atexit``:
    the conformance transport stops its children there), then the output flushed."""
    import atexit
    import contextlib

    threading = sys.modules.get("threading")  # never imported: no other thread was started
    if threading is not None and threading.active_count() > 1:
        raise SystemExit(code)  # the normal exit waits for the other threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        # the reader left (or the stream was closed): the answer was given all the same
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)


def _handled(handler: Any, args: Any) -> int:
    try:
        code = handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a named failure is one line; a bug keeps its traceback
        from pi_context.cli._failures import describe
        from pi_context.cli._options import FAILURE, command_name

        line = describe(exc)
        if line is None:
            raise
        print(f"pi-context {command_name(args)}: {line}", file=sys.stderr)
        return FAILURE
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
