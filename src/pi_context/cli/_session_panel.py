"""``pi-context session panel FILE [--json]`` and ``pi-context session export FILE --out PATH``.

Added to the ``session`` command's sub-commands by ``cli/session.py`` (the leading underscore
keeps this module out of command discovery). Both read the session file and its operation log
(``--log-dir``, default: the state directory's ``operations``); neither writes the session.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.session import SessionError
from pi_context.bindings.session.jsonl import encode

from ._options import FAILURE, check_paths, fail


def add_panel(sub: Any) -> None:
    panel = sub.add_parser(
        "panel",
        help="the session panel: task notes, context, handoff, automatic handoff, metrics, log",
        description=(
            "Show one view of a session: its saved task notes and their coverage, context "
            "usage (estimated from the file), goals, constraints, open items and approval "
            "hints, the handoff binding's verdict, the automatic-handoff state, the operation "
            "metrics over this session and its handoff parent, the log window and the log "
            "path. Exits 1 when the file is not a readable session, 2 when FILE or --log-dir "
            "does not exist."
        ),
    )
    panel.add_argument("file", type=Path, help="Pi session JSONL file")
    panel.add_argument("--json", action="store_true", help="print the panel as JSON")
    _log_dir(panel)
    panel.set_defaults(handler=run_panel)
    export = sub.add_parser(
        "export",
        help="write the session panel and the task notes as Markdown",
        description="Write the session panel, the task notes, metrics and policy as Markdown.",
    )
    export.add_argument("file", type=Path, help="Pi session JSONL file")
    export.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="PATH",
        help="Markdown file to write (its folder must exist)",
    )
    _log_dir(export)
    export.set_defaults(handler=run_export)


def _log_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the operation logs are (default: $PI_CONTEXT_STATE_DIR/operations)",
    )


def _panel(args: argparse.Namespace, command: str) -> dict[str, Any] | int:
    """The panel's report, or the exit code of the error already said."""
    from pi_context.bindings.handoff.panel import session_panel

    out = ("--out", args.out, "parent") if command == "export" else ("--out", None, "")
    bad = check_paths(
        f"session {command}", ("FILE", args.file, "file"), ("--log-dir", args.log_dir, "dir"), out
    )
    if bad is not None:
        return bad
    try:
        log_dir = args.log_dir.absolute() if args.log_dir is not None else None
        return session_panel(args.file, log_dir=log_dir)
    except SessionError as exc:
        return fail(f"session {command}", exc, FAILURE)


def run_panel(args: argparse.Namespace) -> int:
    from pi_context.bindings.handoff.panel import panel_lines

    report = _panel(args, "panel")
    if isinstance(report, int):
        return report
    if args.json:
        sys.stdout.write(encode(report) + "\n")
    else:
        sys.stdout.write("\n".join(panel_lines(report)) + "\n")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from pi_context.bindings.handoff.panel import write_export

    report = _panel(args, "export")
    if isinstance(report, int):
        return report
    try:
        written = write_export(report, args.out)
    except OSError as exc:
        return fail("session export", f"--out {args.out}: cannot write: {exc.strerror}", FAILURE)
    print(f"wrote {written}")
    return 0
