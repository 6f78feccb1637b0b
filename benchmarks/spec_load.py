"""Spec loading time as the table grows: near-linear, not quadratic.

Loads copies of ``reset-control@0.26`` with N extra rows that earlier rows shadow (each one is
analysed and reported), each size in a fresh process, sizes interleaved over ``--repeat``
rounds; the best run counts. Baseline ``linear-from-smallest``: the smallest size's time scaled
by the row ratio — a quadratic analysis would exceed it by the row ratio again (the issue
measured 34 s at 16,000 rows and 19 minutes at 50,000 before the analysis was made linear).

    python benchmarks/spec_load.py [--rows 4000,16000,50000] [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import row, write

from pi_context.spec import SPECS_DIR

LOAD = (
    "import sys\n"
    "from pi_context.spec import SpecError, load\n"
    "try:\n"
    "    load(sys.argv[1])\n"
    "except SpecError as error:\n"
    "    print(len(error.diagnostics))\n"
)


def spec_with_rows(n: int) -> str:
    base = (SPECS_DIR / "reset-control@0.26.yaml").read_text(encoding="utf-8")
    first = "  - id: clear.clear\n"
    end = base.index("\n", base.index("why:", base.index(first))) + 1
    rows = "".join(
        f"  - id: clear.extra{i}\n    on: clear\n    when: 'true'\n    effect: none\n"
        f"    why: shadowed.\n"
        for i in range(n)
    )
    return base[:end] + rows + base[end:]


def timed_load(path: Path, expected: int) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, check=True
    )
    seconds = time.perf_counter() - start
    if done.stdout.strip() != str(expected):
        raise SystemExit(f"{path}: expected {expected} diagnostics, got {done.stdout!r}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="4000,16000,50000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    best = {n: float("inf") for n in sizes}
    with tempfile.TemporaryDirectory(prefix="pi-context-spec-load-") as folder:
        paths = {}
        for n in sizes:
            paths[n] = Path(folder) / f"rows-{n}.yaml"
            paths[n].write_text(spec_with_rows(n), encoding="utf-8")
        for round_ in range(args.repeat):
            for n in sizes:
                best[n] = min(best[n], timed_load(paths[n], n))
                print(
                    f"round {round_ + 1}/{args.repeat}: {n} rows {best[n]:.2f} s", file=sys.stderr
                )
    smallest = sizes[0]
    print("| rows | load (fresh process) | linear-from-smallest | ratio |")
    print("| ---: | ---: | ---: | ---: |")
    for n in sizes:
        linear = best[smallest] * n / smallest
        print(f"| {n:,} | {best[n]:.2f} s | {linear:.2f} s | {best[n] / linear:.2f}x |")
    largest = sizes[-1]
    linear = best[smallest] * largest / smallest
    # near-linear: within 1.5x of the smallest size scaled (a quadratic analysis would be
    # the row ratio again above it)
    write(
        __file__,
        [
            row(
                "shadowed-rows",
                f"loading a spec with {largest:,} shadowed rows, fresh process",
                f"{best[largest]:.2f} s",
                baseline=f"the {smallest:,}-row time scaled linearly: {linear:.2f} s",
                ratio=f"{best[largest] / linear:.2f}×",
                target="linear (≤ 1.5× the scaled time)",
                met=best[largest] <= 1.5 * linear,
            )
        ],
        note=f"sizes {args.rows}, best of {args.repeat} interleaved rounds",
    )


if __name__ == "__main__":
    main()
