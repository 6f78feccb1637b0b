"""What several commands share, said once: the ``--spec`` option and the specs it names, the
``--json FILE`` report, ``--quiet`` and progress lines, and the one line a command fails with.

Not a command (the leading underscore keeps it out of command discovery); it imports nothing
beyond the standard library until a command calls it, so start-up does not pay for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from pi_context.spec.model import Spec


def fail(command: str, message: object, code: int = 2) -> int:
    """Say on stderr why ``pi-context COMMAND`` cannot go on; the exit code ``code``."""
    print(f"pi-context {command}: {message}", file=sys.stderr)
    return code


def progress(command: str, quiet: bool) -> Callable[[str], None]:
    """A progress line on stderr, ``pi-context COMMAND: line``, unless ``quiet``."""

    def say(line: str) -> None:
        if not quiet:
            print(f"pi-context {command}: {line}", file=sys.stderr, flush=True)

    return say


def add_spec(
    parser: argparse.ArgumentParser,
    help: str,
    *,
    many: bool = False,
    required: bool = False,
    metavar: str = "ID|FILE",
) -> None:
    """``--spec``: a spec id or spec file (``many``: repeatable, a list)."""
    parser.add_argument(
        "--spec",
        action="append" if many else "store",
        required=required,
        metavar=metavar,
        help=help,
    )


def resolve_specs(command: str, refs: Sequence[str]) -> list[Spec] | None:
    """The specs ``refs`` name (ids or files); None, said on one line, when one cannot be used."""
    from pi_context.spec import SpecError
    from pi_context.statemachine.reset_control import resolve_spec

    try:
        return [resolve_spec(ref) for ref in refs]
    except SpecError as err:
        fail(command, err)
        return None


def add_quiet(parser: argparse.ArgumentParser, help: str = "no progress display") -> None:
    """``--quiet``: no progress display (or no ``progress`` lines, as ``help`` says)."""
    parser.add_argument("--quiet", action="store_true", help=help)


def add_json_report(parser: argparse.ArgumentParser, help: str) -> None:
    """``--json FILE``: where the report is also written as JSON."""
    parser.add_argument("--json", type=Path, metavar="FILE", help=help)
