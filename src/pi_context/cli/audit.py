"""``pi-context audit SESSION``: is the session's record a run of a spec?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="check that a session's resets are ones a spec allows",
        description=(
            "Read a Pi session's lifecycle observations (turn ends and their usage, "
            "wipe_memory results, /wipe-memory warnings, aborts, errors, compactions, reset "
            "markers, boots, continuations) and search for a run of the spec that explains "
            "them, treating what the session does not record as free. Prints the run found "
            "or the first observation no run explains. See docs/audit.md."
        ),
    )
    parser.add_argument("session", type=Path, help="Pi session JSONL file")
    parser.add_argument(
        "--spec",
        default=None,
        help="a spec id or file, or 'auto' for every committed reset-control spec "
        "(default: the newest published generation)",
    )
    parser.add_argument("--leaf", help="entry id to use as the leaf (default: the file's own)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument(
        "--context-window",
        type=int,
        help="the model's context window in tokens (with --reserve: pins the hard-reserve line, "
        "otherwise inferred from the turns)",
    )
    parser.add_argument(
        "--reserve", type=int, help="the hard reserve in tokens (Pi's compaction.reserveTokens)"
    )
    parser.add_argument(
        "--all", action="store_true", help="list every observation, not only those with events"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pi_context.bindings.session import SessionError
    from pi_context.checks.audit.mapping import MappingError
    from pi_context.checks.audit.verdict import (
        audit_observations,
        read_observations,
        render_text,
        to_json,
    )
    from pi_context.spec import SpecError
    from pi_context.statemachine.reset_control import (
        DEFAULT_SPEC,
        committed_specs,
        resolve_spec,
    )

    if (args.context_window is None) != (args.reserve is None):
        print("pi-context audit: give --context-window and --reserve together", file=sys.stderr)
        return 2
    line = args.context_window - args.reserve if args.context_window is not None else None
    try:
        seen = read_observations(args.session, args.leaf)
    except SessionError as err:
        print(f"pi-context audit: {err}", file=sys.stderr)
        return 2
    except KeyError:
        print(f"pi-context audit: no entry {args.leaf!r} in {args.session}", file=sys.stderr)
        return 2
    try:
        if args.spec == "auto":
            specs = [s for s in committed_specs() if s.name == "reset-control"]
        else:
            specs = [resolve_spec(args.spec or DEFAULT_SPEC)]
        verdicts = [audit_observations(spec, seen, line) for spec in specs]
    except (SpecError, MappingError) as err:
        print(f"pi-context audit: {err}", file=sys.stderr)
        return 2
    if args.json:
        payload: Any = (
            [to_json(v) for v in verdicts] if args.spec == "auto" else to_json(verdicts[0])
        )
        if args.spec == "auto":
            payload = {
                "explained_by": [v.spec.id for v in verdicts if v.explained],
                "verdicts": payload,
            }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    elif args.spec == "auto":
        names = [v.spec.id for v in verdicts if v.explained]
        print("explained by: " + (", ".join(names) if names else "no committed spec"))
        for v in verdicts:
            print()
            print(render_text(v, all_rows=args.all))
    else:
        print(render_text(verdicts[0], all_rows=args.all))
    return 0 if any(v.explained for v in verdicts) else 1
