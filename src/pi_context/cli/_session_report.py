"""``pi-context session report FILE [--json]``: memory status, handoff binding, quality.

Added to the ``session`` command's sub-commands by ``cli/session.py`` (the leading underscore
keeps this module out of command discovery).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.session import SessionError
from pi_context.bindings.session.jsonl import encode
from pi_context.support.surrogates import escape

from ._options import FAILURE, check_paths, fail


def add_report(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="memory status, handoff binding verdict and quality counts of a session",
        description=(
            "Report a session's saved task notes and their coverage, whether its handoff "
            "binding to the source session verifies end to end, and quality counts. Exits 1 "
            "when a handoff binding is refused or the file is not a readable session, 2 when "
            "FILE does not exist."
        ),
    )
    report.add_argument("file", type=Path, help="Pi session JSONL file")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(handler=run_report)


def run_report(args: argparse.Namespace) -> int:
    from pi_context.bindings.handoff.report import render_report, report_exit_code, session_report

    bad = check_paths("session report", ("FILE", args.file, "file"))
    if bad is not None:
        return bad
    try:
        report = session_report(args.file)
    except SessionError as exc:
        return fail("session report", exc, FAILURE)
    # Text from the file may hold lone surrogates (half an emoji, as Node writes it): escaped,
    # since no UTF-8 output can carry them (the JSON encoder escapes them itself).
    sys.stdout.write(encode(report) + "\n" if args.json else escape(render_report(report)))
    return report_exit_code(report)
