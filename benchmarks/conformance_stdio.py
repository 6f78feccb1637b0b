"""Conformance throughput over stdio: the exhaustive sets of every committed spec, pipelined.

Starts the implementation once (default: the reference server, ``pi-context serve``),
handshakes, then runs the runner's exhaustive stage for every committed spec (every case of
each spec's finite abstraction): the plan (request lines and the spec's answers), sending,
the implementation's work, and judging every reply. The spec's answers are kept in the cache
after the first run (``checks/conformance/answers.py``); this script gives the run a cache
of its own, so its first run works them out (reported as the cold run) and the others read
them (the best of those is the figure). Prints steps/s and the ratio of the time taken to the
target (2 s for all exhaustive sets; below 1.00 is better). Process start-up is reported
separately and not counted; ``benchmarks/cli_wall.py`` times a whole default run.

    python benchmarks/conformance_stdio.py [--impl CMD] [--repeat K] [--target SECONDS]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time

from results import row, write

from pi_context.checks.conformance.cases import run_exhaustive
from pi_context.checks.conformance.protocol import encode, hello_request, parse_hello_reply
from pi_context.checks.conformance.results import SpecResult
from pi_context.checks.conformance.stateful import Budget
from pi_context.checks.conformance.transport import Implementation
from pi_context.statemachine.reset_control import committed_specs, reset_control


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = f"{shlex.quote(sys.executable)} -m pi_context serve"
    parser.add_argument("--impl", default=default, help=f"implementation (default: {default})")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs after the first (cold) one; the best counts"
    )
    parser.add_argument("--target", type=float, default=2.0, help="target seconds (default 2)")
    args = parser.parse_args()

    cache = tempfile.TemporaryDirectory(prefix="conformance-stdio-")
    os.environ["PI_CONTEXT_CACHE_DIR"] = cache.name  # answers worked out in run 1, then read
    gens = [reset_control(spec) for spec in committed_specs()]
    started = time.perf_counter()
    impl = Implementation(args.impl, timeout=30.0)
    hello = parse_hello_reply(impl.request(encode(hello_request()), "hello"))
    startup = time.perf_counter() - started
    print(f"implementation: {args.impl}")
    print(f"start-up and handshake: {startup:.2f}s ({hello})")
    best = cold = float("inf")
    steps = 0
    try:
        for run in range(1, args.repeat + 2):
            steps = 0
            t0 = time.perf_counter()
            for gen in gens:
                result = SpecResult(gen.spec)
                run_exhaustive(impl, gen, result, Budget(0), show=False)
                failed = sum(t.failed for t in result.rows.values())
                if failed or result.problems:
                    print(f"{gen.spec.id}: {failed} failing cases; not a valid benchmark run")
                    return 1
                steps += result.exhaustive_checked
            elapsed = time.perf_counter() - t0
            if run == 1:
                cold = elapsed
            else:
                best = min(best, elapsed)
            kind = "cold: answers worked out" if run == 1 else "answers read"
            print(f"run {run} ({kind}): {steps} steps in {elapsed:.2f}s")
    finally:
        impl.close()
        cache.cleanup()
    print(
        f"best: {steps} steps in {best:.2f}s = {steps / best:,.0f} steps/s; "
        f"ratio to the {args.target:g}s target: {best / args.target:.2f}"
        + ("  (meets the target)" if best <= args.target else "  (SLOWER than the target)")
    )
    label = "the reference server" if args.impl == default else f"`{args.impl}`"
    write(
        __file__,
        [
            row(
                "exhaustive" if args.impl == default else "exhaustive-other",
                f"exhaustive sets of every committed spec over stdio, {label}",
                f"{best:.2f} s ({steps:,} steps, {steps / best:,.0f} steps/s)",
                target=f"≤ {args.target:g} s",
                met=best <= args.target,
            ),
            row(
                "exhaustive-cold" if args.impl == default else "exhaustive-other-cold",
                f"the same, the first run: the spec's answers worked out (then kept), {label}",
                f"{cold:.2f} s ({steps / cold:,.0f} steps/s)",
            ),
        ],
        note=f"best of {args.repeat} runs after the first; start-up and handshake "
        f"{startup:.2f} s, not counted",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
