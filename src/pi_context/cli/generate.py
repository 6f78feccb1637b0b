"""``pi-context generate`` / ``pi-context docs``: regenerate (or ``--check``) everything the
specs produce."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pi_context.spec import SpecError
from pi_context.statemachine.codegen import outputs
from pi_context.statemachine.reset_control import committed_specs


def register(subparsers: Any) -> None:
    gen = subparsers.add_parser(
        "generate",
        help="regenerate code and docs from the specs",
        description="Regenerate code and docs from the committed specs.",
    )
    gen.add_argument(
        "--target",
        action="append",
        choices=sorted(outputs.targets()),
        help="what to generate (repeatable; default: everything)",
    )
    gen.add_argument("--check", action="store_true", help="fail if committed files are stale")
    gen.set_defaults(handler=run)
    docs = subparsers.add_parser(
        "docs",
        help="regenerate docs/reset-control/<version>.md from the specs",
        description="Regenerate the reference pages from the specs (same as --target docs).",
    )
    docs.add_argument("--check", action="store_true", help="fail if the docs are stale")
    docs.set_defaults(handler=run, target=["docs"])


def run(args: argparse.Namespace) -> int:
    names = args.target or sorted(outputs.targets())
    if not (outputs.SOURCE_ROOT / "pyproject.toml").is_file():
        print(
            "pi-context generate works in a source checkout (pyproject.toml not found)",
            file=sys.stderr,
        )
        return 2
    try:
        specs = committed_specs()
        files = outputs.render_outputs(specs, names)
    except SpecError as err:
        print(err, file=sys.stderr)
        return 1
    if args.check:
        bad = outputs.drifted(files) + [
            f"{p} (no spec produces it)" for p in outputs.stale(files, names)
        ]
        if bad:
            print("generated files are out of date with the specs:", file=sys.stderr)
            for rel in bad:
                print(f"  {rel}", file=sys.stderr)
            print("run `pi-context generate` and commit the result", file=sys.stderr)
            return 1
        print(f"generated files are up to date ({len(files)} files, targets: {', '.join(names)})")
        return 0
    changed = outputs.write(files)
    for rel in outputs.stale(files, names):
        (outputs.SOURCE_ROOT / rel).unlink()
        changed.append(f"{rel} (removed)")
    for rel in changed:
        print(f"wrote {rel}")
    print(f"{len(changed)} of {len(files)} files changed")
    return 0
