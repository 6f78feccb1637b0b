"""``pi-context demo``: a scripted, deterministic end-to-end agent run over N context windows."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._options import FAILURE, add_quiet, add_spec, fail, path_problem, progress


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run a scripted agent through N context windows and print a table per window",
        description=(
            "Drive the pi-context runtime with a deterministic scripted model (no network): "
            "notes, history tools, reminders and warnings, wipe_memory, the hard reserve, an "
            "overflow recovery, an aborted turn and a queued message. Writes a real Pi session "
            "file and notes, then prints one table row per window."
        ),
    )
    parser.add_argument("--windows", type=int, default=8, help="context windows (default 8)")
    parser.add_argument(
        "--dir", type=Path, default=None, help="empty directory for the run (default: a temp dir)"
    )
    add_spec(
        parser,
        "reset-control spec the runtime runs (default: the newest published generation)",
        metavar="ID",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead")
    add_quiet(parser, "no progress lines on stderr")
    ending = parser.add_mutually_exclusive_group()
    ending.add_argument(
        "--handoff",
        action="store_true",
        help="end the run with /handoff to a fresh session (see docs/handoff.md)",
    )
    ending.add_argument(
        "--auto-handoff",
        action="store_true",
        help="work until the automatic policy hands off by itself, continue in the "
        "destination and print its session panel (see docs/handoff.md)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    bad = _dir_problem(args.dir)
    if bad is not None:
        return fail("demo", bad)
    if args.auto_handoff:
        return run_auto(args)
    from pi_context.demo.scripted import DemoError, format_table, run_demo, summary_json

    if args.windows < 1 or args.windows > 500:
        return fail("demo", f"--windows {args.windows}: must be between 1 and 500")
    say = progress("demo", args.quiet)
    from pi_context.bindings.runtime.control import DEFAULT_SPEC, specs

    spec = args.spec or DEFAULT_SPEC
    if spec not in specs():
        return fail("demo", f"--spec {spec}: unknown spec (known: {', '.join(specs())})")
    from pi_context.bindings.session import SessionError

    # Only a run that starts gets a folder.
    try:
        with _run_folder(args.dir) as directory:
            report = run_demo(args.windows, directory, say, spec)
    except (DemoError, SessionError, OSError) as exc:  # a full disk ends in one line
        return fail("demo", exc, FAILURE)
    if not args.handoff:
        print(summary_json(report) if args.json else format_table(report))
        return 0
    from pi_context.demo.handoff import format_handoff, run_handoff_demo

    say("handing off to a fresh session")
    try:
        handed = run_handoff_demo(report, directory.absolute() / "project")
    except (SessionError, OSError) as exc:
        return fail("demo", f"the handoff could not run: {exc}", FAILURE)
    if args.json:
        import json

        body = json.loads(summary_json(report))
        body["handoff"] = {
            "result": handed.result.outcome,
            "code": handed.result.code,
            "destination": str(handed.result.destination),
            "packet": handed.result.packet,
            "report": handed.report,
        }
        print(json.dumps(body, ensure_ascii=False))
    else:
        print(format_table(report) + format_handoff(handed))
    return 0 if handed.result.ok else 1


def run_auto(args: argparse.Namespace) -> int:
    """``demo --auto-handoff``: see ``pi_context.demo.auto_handoff``."""
    from pi_context.bindings.session import SessionError
    from pi_context.demo.auto_handoff import (
        AutoDemoError,
        format_auto_demo,
        run_auto_handoff_demo,
    )

    try:
        with _run_folder(args.dir) as directory:
            demo = run_auto_handoff_demo(directory.absolute(), progress("demo", args.quiet))
    except (AutoDemoError, SessionError, OSError) as exc:
        return fail("demo", exc, FAILURE)
    if args.json:
        import json

        body = {
            "source": str(demo.source),
            "destination": str(demo.destination) if demo.destination else None,
            "result": demo.result.outcome if demo.result else None,
            "code": demo.result.code if demo.result else None,
            "turns": demo.turns,
            "log_dir": str(demo.log_dir),
            "panel": demo.panel,
        }
        print(json.dumps(body, ensure_ascii=False))
    else:
        print(format_auto_demo(demo), end="")
    return 0 if demo.result is not None and demo.result.ok else 1


def _dir_problem(given: Path | None) -> str | None:
    """Why ``--dir`` cannot hold the run: it must be an empty folder, or a new one whose
    parent exists (nothing else is created)."""
    if given is None:
        return None
    if given.exists():
        if not given.is_dir():
            return f"--dir {given}: not a directory"
        if any(given.iterdir()):
            return f"--dir {given}: not empty"
        return None
    return path_problem("--dir", given, "parent")


@contextlib.contextmanager
def _run_folder(given: Path | None) -> Iterator[Path]:
    """The run's folder: ``--dir``, or a new temporary one, which a run that fails removes."""
    directory = given or Path(tempfile.mkdtemp(prefix="pi-context-demo-"))
    try:
        yield directory
    except BaseException:
        if given is None:
            shutil.rmtree(directory, ignore_errors=True)
        raise
