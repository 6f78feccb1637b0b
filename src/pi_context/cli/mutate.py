"""``pi-context mutate``: mutation adequacy of a spec's table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ._options import (
    add_json_report,
    add_quiet,
    add_spec,
    check_paths,
    fail,
    resolve_specs,
    spec_exit,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mutate",
        help="mutation adequacy: which table cells nothing independent pins down",
        description=(
            "Generate every single-cell mutant of a spec's table (effects, next values per "
            "axis, guard conjuncts dropped or negated), check each with the loader, the seed "
            "scenarios, the invariants and the model checker, and report killed, surviving "
            "and equivalent mutants."
        ),
    )
    add_spec(parser, "spec id or spec file", required=True)
    parser.add_argument(
        "--docs",
        action="store_true",
        help="write docs/reset-control/mutation-<version>.md and relink the reference page",
    )
    parser.add_argument(
        "--root",
        type=Path,
        metavar="DIR",
        help="the pi-context checkout whose docs/ --docs writes (default: the checkout this "
        "package runs from, else the one containing the current directory)",
    )
    add_json_report(parser, "write the report as JSON")
    parser.add_argument(
        "--min-rate",
        type=float,
        metavar="R",
        help="exit 1 when the kill rate is below R (e.g. 0.95)",
    )
    add_quiet(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ._extras import missing

    absent = missing("mutate")
    if absent is not None:
        return absent
    from pi_context.checks.mutate import mutation_report
    from pi_context.checks.mutation_docs import docs_path, render_markdown, to_json
    from pi_context.codegen import outputs
    from pi_context.statemachine.reset_control import committed_specs

    if args.min_rate is not None and not 0 <= args.min_rate <= 1:
        return fail("mutate", f"--min-rate {args.min_rate}: must be between 0 and 1")
    if args.root is not None and not args.docs:
        return fail("mutate", "--root is the checkout --docs writes into: it needs --docs")
    bad = check_paths("mutate", ("--json", args.json, "parent"), ("--root", args.root, "dir"))
    if bad is not None:
        return bad
    specs = resolve_specs("mutate", [args.spec])
    if specs is None:
        return spec_exit([args.spec])
    spec = specs[0]
    root: Path | None = None
    if args.docs:
        root = docs_root(args.root, outputs.SOURCE_ROOT, Path.cwd())
        if root is None:
            found = f"{args.root} is not one" if args.root else "none was found"
            return fail(
                "mutate",
                f"--docs writes into a pi-context checkout's docs/, and {found} (a checkout has "
                "pyproject.toml, src/pi_context/ and docs/reset-control/); run it inside a "
                "checkout or pass --root DIR",
            )
        committed = {s.id: s for s in committed_specs()}
        if committed.get(spec.id) is None or committed[spec.id].sha256 != spec.sha256:
            return fail(
                "mutate",
                f"--docs documents committed specs only; {args.spec} is not one (or differs "
                "from it)",
            )
    report = mutation_report(spec, show=not args.quiet)
    total = len(report.outcomes)
    print(
        f"{spec.id}: {total} mutants, {report.count('equivalent')} equivalent, "
        f"{report.count('killed')} killed, {report.count('survived')} survived; "
        f"kill rate {100 * report.rate:.1f}%"
    )
    for outcome in report.outcomes:
        if outcome.status == "survived":
            m = outcome.mutant
            print(f"  survived {m.id} {m.row}: {m.change}\n    {outcome.witness}")
    if args.json:
        args.json.write_text(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n")
    if args.docs:
        assert root is not None
        rel = docs_path(spec.version, spec.name)
        page = root / rel
        changed = outputs.write({str(rel): render_markdown(report)}, root)
        # the reference page links the mutation report when it exists
        changed += outputs.write(outputs.render_outputs(list(committed.values()), ["docs"]), root)
        print(f"wrote {page}" if changed else f"{page} is up to date")
    if args.min_rate is not None and report.rate < args.min_rate:
        print(
            f"kill rate {100 * report.rate:.1f}% is below the required {100 * args.min_rate:.1f}%",
            file=sys.stderr,
        )
        return 1
    return 0


def is_checkout(path: Path) -> bool:
    return (
        (path / "pyproject.toml").is_file()
        and (path / "src" / "pi_context").is_dir()
        and (path / "docs" / "reset-control").is_dir()
    )


def docs_root(given: Path | None, installed: Path, cwd: Path) -> Path | None:
    """Where ``--docs`` writes: the checkout given, the one this package runs from (an
    editable install), or the one containing ``cwd``; None when there is none — never the
    folder a non-editable install lives in."""
    if given is not None:
        return given if is_checkout(given) else None
    if is_checkout(installed):
        return installed
    for candidate in (cwd, *cwd.parents):
        if is_checkout(candidate):
            return candidate
    return None
