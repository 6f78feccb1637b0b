"""Wall time of two commands a user runs, in fresh processes, start-up included.

- ``pi-context --help`` against the bare interpreter start-up with argparse imported (the
  floor for any Python command line); target 0.1 s.
- a default conformance run, ``pi-context conformance --impl "pi-context serve"`` (both
  specs: exhaustive sets and 100 random traces each), against the reference server's own
  start-up and handshake; target 3 s.

Each side runs ``--repeat`` times, interleaved with its baseline; the best run counts.

    python benchmarks/cli_wall.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
PI = str(BIN / "pi-context")


def wall(args: list[str], stdin: str | None = None, cwd: str | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(
        args,
        input=stdin,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        cwd=cwd,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    serve = f"{PI} serve"
    pairs = {
        "pi-context --help": (
            [PI, "--help"],
            [sys.executable, "-c", "import argparse"],
            "python -c 'import argparse'",
            0.1,
        ),
        "conformance default run": (
            [PI, "conformance", "--impl", serve, "--quiet"],
            [PI, "serve"],
            "pi-context serve start-up + hello",
            3.0,
        ),
    }
    best: dict[str, tuple[float, float]] = {k: (float("inf"), float("inf")) for k in pairs}
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(args.repeat):
            for name, (ours, base, _label, _target) in pairs.items():
                hello = '{"op":"hello"}\n' if base[-1] == "serve" else None
                o = wall(ours, cwd=cwd)
                b = wall(base, hello, cwd=cwd)
                best[name] = (min(best[name][0], o), min(best[name][1], b))
    print(f"best of {args.repeat} interleaved runs, fresh processes")
    print("| command | ours (s) | baseline | baseline (s) | target (s) | ours/target |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, (_o, _b, label, target) in pairs.items():
        o, b = best[name]
        print(f"| {name} | {o:.3f} | {label} | {b:.3f} | {target:g} | {o / target:.2f} |")


if __name__ == "__main__":
    main()
