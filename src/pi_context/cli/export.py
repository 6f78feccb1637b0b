"""``pi-context export quint``: a spec's Quint module, for a reviewer's second opinion."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._options import add_spec, check_paths, fail, resolve_specs, spec_exit


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export specs to another checker's language (quint)",
        description=(
            "Write one readable Quint module per spec (default: every committed spec) into "
            "DIR: its types, one state variable per axis, one action per event, every "
            "invariant as a val and the spec's why texts as comments (docs/quint.md). With "
            "--check, the pinned Quint CLI (installed into .cache/quint of a source "
            "checkout) type-checks each module, simulates it over every invariant, and every "
            "simulated trace is replayed through our generated reducer. Exit status: 0 when "
            "all is well, 1 when Quint or the replay disagrees, 2 on bad input."
        ),
    )
    parser.add_argument("target", choices=["quint"], help="the language to export to")
    add_spec(
        parser, "a spec id or spec file (repeatable; default: every committed spec)", many=True
    )
    parser.add_argument(
        "--out", type=Path, default=Path("."), metavar="DIR", help="where to write (default: .)"
    )
    parser.add_argument(
        "--check", action="store_true", help="type-check, simulate and replay with Quint"
    )
    parser.add_argument(
        "--samples", type=int, default=None, metavar="N", help="traces per spec with --check (1000)"
    )
    parser.add_argument(
        "--steps", type=int, default=None, metavar="N", help="steps per trace with --check (20)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pi_context.codegen.quint import quint_module
    from pi_context.codegen.quint_names import ExportError
    from pi_context.statemachine.reset_control import committed_specs

    for option, value in (("--samples", args.samples), ("--steps", args.steps)):
        if value is not None and not args.check:
            return fail("export", f"{option} sets the --check run: it needs --check")
        if value is not None and value < 1:
            return fail("export", f"{option} {value}: must be at least 1")
    args.samples = 1000 if args.samples is None else args.samples
    args.steps = 20 if args.steps is None else args.steps
    # --out DIR is made when missing, inside a folder that exists (no other folder is made)
    kind = "dir" if args.out.exists() else "parent"
    bad = check_paths("export", ("--out", args.out, kind))
    if bad is not None:
        return bad
    specs = resolve_specs("export", args.spec) if args.spec else committed_specs()
    if specs is None:
        return spec_exit(args.spec)
    try:
        modules = {spec.module_name: quint_module(spec) for spec in specs}
    except ExportError as err:
        return fail("export", err)
    try:
        args.out.mkdir(exist_ok=True)
        for name, text in modules.items():
            path = args.out / f"{name}.qnt"
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    except OSError as err:
        return fail("export", f"{args.out}: {err.strerror or err}")
    if not args.check:
        return 0
    from pi_context.checks import quintcheck

    failed = 0
    for spec in specs:
        result = quintcheck.check_spec(spec, samples=args.samples, steps=args.steps)
        print(quintcheck.summary(result), flush=True)
        for line in result.problems + result.disagreements[:5]:
            print(f"  {line}")
        failed += not result.ok
    return 1 if failed else 0
