"""``pi-context serve``: the reference reducers over the conformance protocol on stdio."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pi_context.conformance.server import Server
from pi_context.spec import SpecError, load, spec_paths
from pi_context.statemachine.reset_control import resolve_spec


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the reference reducers over the conformance protocol (stdio)",
        description=(
            "Answer conformance-protocol requests (newline-delimited JSON) on stdin/stdout with "
            "the generated reducers until end of input. See docs/conformance-protocol.md."
        ),
    )
    parser.add_argument(
        "--spec",
        action="append",
        metavar="ID|FILE",
        help="a spec id or spec file to serve; repeatable (default: every committed spec)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.spec:
            specs = [resolve_spec(ref) for ref in args.spec]
        else:
            # committed specs are analysed by `pi-context verify` in CI; skipping the table
            # analysis here makes the server start (and restart) fast
            specs = [load(path, analyse=False) for path in spec_paths()]
        server = Server(specs)
    except (SpecError, ValueError) as err:
        print(f"pi-context serve: {err}", file=sys.stderr)
        return 2
    server.serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0
