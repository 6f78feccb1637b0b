"""``pi-context verify``: check every spec (or the given ones) and print a summary table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._options import add_quiet, add_spec, fail, progress, resolve_specs, spec_exit


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="verify the specs: exhaustive agreement, model checking, coverage, hypothesis",
        description=(
            "For each spec: run every (state, event) of the finite abstraction through the "
            "generated reducer, the transitions machine and the spec interpreter; model-check "
            "every invariant with shortest counterexamples; report coverage; run the "
            "hypothesis state machine generated from the spec; and drive the real runtime "
            "against the spec (runtime conformance) and against its mutants."
        ),
    )
    add_spec(
        parser,
        "a spec id (reset-control@0.26) or a spec file; repeatable (default: all committed)",
        many=True,
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        help="hypothesis examples per spec (default 100; 0 skips the hypothesis run)",
    )
    parser.add_argument("--seed", type=int, help="hypothesis seed (default: derandomized)")
    parser.add_argument("--no-hypothesis", action="store_true", help="skip the hypothesis run")
    parser.add_argument(
        "--no-runtime",
        action="store_true",
        help="skip the runtime conformance and its mutants",
    )
    parser.add_argument(
        "--lassos",
        metavar="DIR",
        type=Path,
        help="write each violated progress property's lasso as ITF JSON and Mermaid into DIR",
    )
    add_quiet(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.examples is not None and args.no_hypothesis:
        return fail("verify", "--examples and --no-hypothesis exclude each other")
    if args.examples is None:
        args.examples = 100
    from ._extras import missing

    absent = missing("verify")
    if absent is not None:
        return absent
    if args.examples < 0:
        return fail("verify", f"--examples {args.examples}: must be >= 0")
    # imported here so other commands start without loading hypothesis
    from pi_context.checks.suite import (
        progress_lines,
        summary_table,
        verify_spec,
        write_lassos,
    )
    from pi_context.statemachine.reset_control import committed_specs

    if args.spec:
        say = progress("verify", args.quiet)
        for ref in args.spec:
            say(f"loading {ref}")
        resolved = resolve_specs("verify", args.spec)
        if resolved is None:
            return spec_exit(args.spec)
        specs = resolved
    else:
        specs = committed_specs()
    from pi_context.checks.hypothesis_home import keep_out_of_cwd

    keep_out_of_cwd([Path(spec.path) for spec in specs])
    reports = [
        verify_spec(
            spec,
            examples=args.examples,
            seed=args.seed,
            hypothesis=not args.no_hypothesis and args.examples > 0,
            runtime=not args.no_runtime,
            show=not args.quiet,
        )
        for spec in specs
    ]
    print()
    print(summary_table(reports))
    print()
    print(progress_lines(reports))
    if args.lassos is not None:
        for path in write_lassos(reports, args.lassos):
            print(f"wrote {path}")
    failed = [r for r in reports if not r.ok]
    for r in failed:
        print(f"\n{r.spec.id}: FAILED")
        for failure in r.failures:
            print(failure)
    if failed:
        return 1
    print(f"\nall {len(reports)} spec(s) verified")
    return 0
