"""``pi-context serve``: the reference reducers over the conformance protocol on stdio."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pi_context.checks.conformance.server import Server
from pi_context.spec import SpecError

from ._options import add_spec, fail, resolve_specs, spec_exit


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the reference reducers over the conformance protocol (stdio)",
        description=(
            "Answer conformance-protocol requests (newline-delimited JSON) on stdin/stdout with "
            "the generated reducers until end of input. See docs/conformance-protocol.md."
        ),
    )
    add_spec(
        parser,
        "a spec id or spec file to serve; repeatable (default: every committed spec)",
        many=True,
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.spec:
            specs = resolve_specs("serve", args.spec)
            if specs is None:
                return spec_exit(args.spec)
            server = Server(specs)
        else:
            # committed specs are analysed by `pi-context verify` in CI, and their committed
            # code is theirs when its recorded digest is the file's: no spec is parsed here,
            # which makes the server start (and restart) fast
            server = Server.committed()
    except (SpecError, ValueError) as err:
        return fail("serve", err)
    server.serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0
