"""``pi-context generate`` / ``pi-context docs``: regenerate (or ``--check``) everything the
specs produce."""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from pi_context.codegen import outputs
from pi_context.spec import SpecError, load, spec_paths

from ._options import add_quiet, progress


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
    add_quiet(gen, "no progress lines on stderr")
    gen.set_defaults(handler=run)
    docs = subparsers.add_parser(
        "docs",
        help="regenerate docs/reset-control/<version>.md from the specs",
        description="Regenerate the reference pages from the specs (same as --target docs).",
    )
    docs.add_argument("--check", action="store_true", help="fail if the docs are stale")
    add_quiet(docs, "no progress lines on stderr")
    docs.set_defaults(handler=run, target=["docs"])


def run(args: argparse.Namespace) -> int:
    names = args.target or sorted(outputs.targets())
    if not (outputs.SOURCE_ROOT / "pyproject.toml").is_file():
        print(
            "pi-context generate works in a source checkout (pyproject.toml not found)",
            file=sys.stderr,
        )
        return 2
    say = progress(args.command, args.quiet)  # a line per step: loading a spec, each target
    try:
        specs = []
        for path in spec_paths():
            say(f"loading {path.stem}")
            specs.append(load(path))
        files: dict[str, str] = {}
        for name in names:
            started = time.monotonic()
            say(f"generating {name} for {len(specs)} specs")
            with _ticking(say, name, args.quiet):
                files.update(outputs.render_outputs(specs, [name]))
            say(f"generated {name} in {time.monotonic() - started:.1f}s")
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


@contextlib.contextmanager
def _ticking(say: Callable[[str], None], name: str, quiet: bool) -> Iterator[None]:
    """While a target renders, a line every ``TICK`` seconds saying it still does."""
    stop = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not stop.wait(TICK):
            say(f"still generating {name} ({time.monotonic() - started:.0f}s)")

    ticker = threading.Thread(target=tick, daemon=True)
    if not quiet:
        ticker.start()
    try:
        yield
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join()


TICK = 3.0
