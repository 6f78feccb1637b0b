"""``pi-context demo``: a scripted, deterministic end-to-end agent run over N context windows."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any


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
    parser.add_argument(
        "--spec",
        default=None,
        metavar="ID",
        help="reset-control spec the runtime runs (default: the newest published generation)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--handoff",
        action="store_true",
        help="end the run with /handoff to a fresh session (see docs/handoff.md)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pi_context.demo.scripted import DemoError, format_table, run_demo, summary_json

    if args.windows < 1 or args.windows > 500:
        print("pi-context demo: --windows must be between 1 and 500", file=sys.stderr)
        return 2

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"pi-context demo: {line}", file=sys.stderr, flush=True)

    from pi_context.bindings.runtime.control import DEFAULT_SPEC, specs

    spec = args.spec or DEFAULT_SPEC
    if spec not in specs():
        print(
            f"pi-context demo: unknown spec {spec!r} (known: {', '.join(specs())})", file=sys.stderr
        )
        return 2
    # Only a run that starts gets a folder; one it made for a run that fails is removed.
    temporary = args.dir is None
    directory = args.dir or Path(tempfile.mkdtemp(prefix="pi-context-demo-"))
    try:
        report = run_demo(args.windows, directory, progress, spec)
    except DemoError as exc:
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)
        print(f"pi-context demo: {exc}", file=sys.stderr)
        return 1
    except BaseException:
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    if not args.handoff:
        print(summary_json(report) if args.json else format_table(report))
        return 0
    from pi_context.demo.handoff import format_handoff, run_handoff_demo

    progress("handing off to a fresh session")
    handed = run_handoff_demo(report, directory.absolute() / "project")
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
