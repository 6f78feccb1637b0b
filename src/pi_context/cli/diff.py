"""``pi-context diff A B``: every case two specs decide differently, grouped by rows."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._options import fail, resolve_specs


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="where two specs disagree, grouped by the rows that fire, with shortest traces",
        description=(
            "Compare two specs (ids or files) on every case of their shared finite "
            "abstraction: next state, effect and lazy facts consulted. Differences are grouped "
            "by (row in A, row in B), each with its count, an example and a shortest trace "
            "from the initial state. A spec that declares `refines` the other is compared "
            "through its projection. Exit status: 0 when they agree, 1 when they differ, "
            "2 when they cannot be compared."
        ),
    )
    parser.add_argument("a", metavar="A", help="spec id (reset-control@0.26) or spec file")
    parser.add_argument("b", metavar="B", help="spec id or spec file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pi_context.spec import SpecError
    from pi_context.spec.diff import DiffError, diff_specs, render_markdown, to_json

    # like diff(1), 1 means "they differ", so every error here is 2: cannot be compared
    specs = resolve_specs("diff", [args.a, args.b], option="")
    if specs is None:
        return 2
    try:
        result = diff_specs(*specs)
    except SpecError as err:
        return fail("diff", err)
    except DiffError as err:
        return fail("diff", err)
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        print(render_markdown(result), end="")
    return 0 if result.same else 1
