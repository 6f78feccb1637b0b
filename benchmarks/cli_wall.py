"""Wall time of two commands a user runs, in fresh processes, start-up included.

- ``pi-context --help`` against the bare interpreter start-up with argparse imported (the
  floor for any Python command line); target 0.1 s.
- a default conformance run, ``pi-context conformance --impl "pi-context serve"`` (every
  committed spec: exhaustive sets and 100 random traces each), against the reference
  server's own start-up and handshake; target 3 s.
- the same run against the TypeScript adapter (``node bindings-ts/adapter.mjs``, built by
  ``python -m pi_context.codegen.tsbuild``), when it is built, against the adapter's
  start-up and handshake; target 3 s.

Each side runs ``--repeat`` times, interleaved with its baseline; the best run counts. The
CPU seconds (user + system, all processes) of our best-CPU run and the load average are
printed too: on a busy machine the wall time says more about the neighbours than about us.

The package's bytecode is compiled first (``compileall``), as an installed package has it:
with ``PYTHONDONTWRITEBYTECODE`` set, every fresh process would otherwise compile each module
it imports from source again. The runs get a cache directory of their own: the first
conformance run works out the specs' answers to their exhaustive sets and keeps them there
(reported as the cold run, without a target), the timed runs read them, as a user's second
and later runs do.

    python benchmarks/cli_wall.py [--repeat N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import row, write

BIN = Path(sys.executable).parent
PI = str(BIN / "pi-context")
ROOT = Path(__file__).resolve().parents[1]


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


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
    hello = '{"op":"hello"}\n'
    pairs: dict[str, tuple[list[str], list[str], str | None, str, float]] = {
        "pi-context --help": (
            [PI, "--help"],
            [sys.executable, "-c", "import argparse"],
            None,
            "python -c 'import argparse'",
            0.1,
        ),
        "conformance default run": (
            [PI, "conformance", "--impl", serve, "--quiet"],
            [PI, "serve"],
            hello,
            "pi-context serve start-up + hello",
            3.0,
        ),
    }
    ids = {"pi-context --help": "help", "conformance default run": "conformance"}
    adapter = ROOT / "bindings-ts" / "adapter.mjs"
    if (ROOT / "bindings-ts" / "dist").is_dir():
        pairs["conformance default run, TS adapter"] = (
            [PI, "conformance", "--impl", f"node {adapter}", "--quiet"],
            ["node", str(adapter)],
            hello,
            "adapter start-up + hello",
            3.0,
        )
        ids["conformance default run, TS adapter"] = "conformance-ts"
    else:
        print("(TS adapter not built: python -m pi_context.codegen.tsbuild)")
    import pi_context

    compileall.compile_dir(Path(pi_context.__file__).parent, quiet=1)
    best = {k: (float("inf"), float("inf"), float("inf")) for k in pairs}
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as cache:
        os.environ["PI_CONTEXT_CACHE_DIR"] = cache
        before = cpu()
        cold = wall(pairs["conformance default run"][0], cwd=cwd)
        cold_cpu = cpu() - before
        for _ in range(args.repeat):
            for name, (ours, base, stdin, _label, _target) in pairs.items():
                before = cpu()
                o = wall(ours, cwd=cwd)
                c = cpu() - before
                b = wall(base, stdin, cwd=cwd)
                o_best, b_best, c_best = best[name]
                best[name] = (min(o_best, o), min(b_best, b), min(c_best, c))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"best of {args.repeat} interleaved runs, fresh processes; load average {load}")
    print(
        "| command | ours (s) | ours CPU (s) | baseline | baseline (s) | target (s) | ours/target |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, (_o, _b, _stdin, label, target) in pairs.items():
        o, b, c = best[name]
        print(f"| {name} | {o:.3f} | {c:.2f} | {label} | {b:.3f} | {target:g} | {o / target:.2f} |")
    rows = []
    for name, (_o, _b, _stdin, label, target) in pairs.items():
        o, b, c = best[name]
        shown = f"`{name}`" if name.startswith("pi-context") else name
        rows.append(
            row(
                ids[name],
                f"{shown}, fresh process, start-up included",
                f"{o:.3f} s ({c:.2f} s CPU)",
                baseline=f"{label}: {b:.3f} s",
                ratio=f"{o / b:.1f}×",
                target=f"≤ {target:g} s",
                met=o <= target,
            )
        )
    rows.append(
        row(
            "conformance-cold",
            "conformance default run, the first one: the specs' answers worked out (then kept)",
            f"{cold:.3f} s ({cold_cpu:.2f} s CPU)",
        )
    )
    write(
        __file__,
        rows,
        note=f"best of {args.repeat} interleaved runs; package bytecode compiled first",
    )


if __name__ == "__main__":
    main()
