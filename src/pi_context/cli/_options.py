"""What several commands share, said once: the ``--spec`` option and the specs it names, the
``--json FILE`` report, ``--quiet`` and progress lines, ``--notes-home``, the checks of the
paths a command line names, and the one line a command fails with.

The rule every command follows:

- **exit 2, a usage error**: the command line cannot be used as given — an unknown option or
  name, a value out of range or malformed, options that exclude each other, or a path it
  names that does not exist or is not the kind it must be (checked before any work starts,
  so nothing is created or changed);
- **exit 1, a failure**: the command started and could not finish, or found what it checks
  to be wrong — an unreadable or invalid file, the disk, a refused handoff, a failed check;
- either way stderr's error line starts with ``pi-context <command>:`` (the full command,
  ``pi-context session export:``) and names the option, argument or path that was wrong.

One command keeps the convention of its namesake: ``pi-context diff``, like diff(1), exits 1
when the specs differ (its answer, not a failure) and 2 whenever they cannot be compared.

Not a command (the leading underscore keeps it out of command discovery); it imports nothing
beyond the standard library until a command calls it, so start-up does not pay for it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import argparse

    from pi_context.spec.model import Spec


USAGE = 2
"""Exit code of a command line that cannot be used as given."""
FAILURE = 1
"""Exit code of a command that started and could not finish (or whose check failed)."""


def fail(command: str, message: object, code: int = USAGE) -> int:
    """Say on stderr why ``pi-context COMMAND`` cannot go on; the exit code ``code``."""
    print(f"pi-context {command}: {message}", file=sys.stderr)
    return code


def command_name(args: object) -> str:
    """The full command an argparse namespace ran: ``session export``, ``notes homes``."""
    words = [getattr(args, "command", None) or "tool"]
    for dest in ("session_command", "notes_command", "cache_command"):
        word = getattr(args, dest, None)
        if isinstance(word, str):
            words.append(word)
    return " ".join(words)


def path_problem(option: str, path: Path | None, kind: str = "file") -> str | None:
    """Why ``path``, given as ``option`` (``--session``, or ``FILE`` for a positional), cannot
    be used, or ``None``: ``kind`` is ``file`` (an existing regular file), ``dir`` (an
    existing folder) or ``parent`` (a new file whose folder must already exist: nothing
    is created that the user did not ask for)."""
    if path is None:
        return None
    shown = f"{option} {path}" if option.startswith("-") else str(path)
    if kind == "parent":
        folder = path.absolute().parent
        if folder.exists() and not folder.is_dir():
            return f"{shown}: {folder} is not a directory"
        if not folder.is_dir():
            return f"{shown}: no such folder {folder} (it is not created)"
        if path.is_dir():
            return f"{shown}: is a directory"
        return None
    if not path.exists():
        return f"{shown}: no such {'folder' if kind == 'dir' else 'file'}"
    if kind == "dir" and not path.is_dir():
        return f"{shown}: not a directory"
    if kind == "file" and path.is_dir():
        return f"{shown}: is a directory, not a file"
    return None


def check_paths(command: str, *checks: tuple[str, Path | None, str]) -> int | None:
    """The usage error (exit 2) for the first of ``(option, path, kind)`` that cannot be
    used (see ``path_problem``), said on stderr; ``None`` when all can."""
    for option, path, kind in checks:
        problem = path_problem(option, path, kind)
        if problem is not None:
            return fail(command, problem)
    return None


def add_notes_home(parser: argparse.ArgumentParser) -> None:
    """``--notes-home DIR``: the notes root, with the fallback it has when omitted."""
    parser.add_argument(
        "--notes-home",
        type=Path,
        metavar="DIR",
        help="notes root (default: $PI_NOTES_HOME, else ~/.agents/notes)",
    )


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


def resolve_specs(command: str, refs: Sequence[str], option: str = "--spec") -> list[Spec] | None:
    """The specs ``refs`` name (ids or files); None, said on one line, when one cannot be used."""
    from pi_context.spec import SpecError
    from pi_context.statemachine.reset_control import resolve_spec

    specs = []
    for ref in refs:
        try:
            specs.append(resolve_spec(ref))
        except SpecError as err:
            # an unknown id or a missing file: the argument; an existing file: its content
            fail(command, f"{option} {ref}: {err}" if option else err)
            return None
    return specs


def spec_exit(refs: Sequence[str]) -> int:
    """The exit code after ``resolve_specs`` failed on ``refs``: 1 when the spec that could
    not be used is an existing file (its content is wrong), else 2 (the argument is)."""
    return FAILURE if any(Path(ref).is_file() for ref in refs) else USAGE


def add_quiet(parser: argparse.ArgumentParser, help: str = "no progress display") -> None:
    """``--quiet``: no progress display (or no ``progress`` lines, as ``help`` says)."""
    parser.add_argument("--quiet", action="store_true", help=help)


def add_json_report(parser: argparse.ArgumentParser, help: str) -> None:
    """``--json FILE``: where the report is also written as JSON."""
    parser.add_argument("--json", type=Path, metavar="FILE", help=help)
