"""Steps per second of the JSON/wire reducer path against a hand-written dict reducer.

Ours: ``reduce_wire`` of the generated reset-control@0.26-proposal package — the direct
dict-in/dict-out reducer ``pi-context serve`` and any JSON host run per step (it checks its
input fully; bad input gets the located WireError). For reference, the typed round trip
``state_from_wire`` → ``event_from_wire`` → ``reduce`` → ``state_to_wire``. Baseline
``dict-reducer-checked`` (benchmarks/dict_reducer.py): the same table written by hand over
JSON dicts, validating its input as a JSON host must; ``dict-reducer-bare`` is the same
without validation, shown for reference. ``reduce_wire through step_wire`` is the alternative
to the generated ``reduce_wire``'s own copy of the input checks (one more call per step): the
row that shows whether keeping the copy pays. (0.26-proposal is the table dict_reducer.py
implements; the published 0.26 differs in its settle rows.) Inputs: the exhaustive case set
(9,212 cases), replayed; every side is checked against the spec before it is timed, and the
sides are interleaved so they see the same machine load; the best of ``--repeat`` runs counts.
Target: ours >= 500,000 steps/s and >= the checked baseline.

    python benchmarks/wire_reduce.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import dict_reducer  # noqa: E402
from results import row, write  # noqa: E402

from pi_context.spec import interpret  # noqa: E402
from pi_context.spec.abstraction import all_events, all_states  # noqa: E402
from pi_context.statemachine.reset_control import (  # noqa: E402
    committed_specs,
    reset_control,
    resolve_spec,
)

SPEC = "reset-control@0.26-proposal"  # the table dict_reducer.py implements by hand
OURS = "ours: reduce_wire (direct wire path)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    spec = resolve_spec(SPEC)
    wire = reset_control(spec).wire
    reducer = reset_control(spec).reducer
    cases = [(s, e) for s in all_states(spec) for e in all_events(spec)]

    def typed(state: Any, event: Any) -> tuple[Any, str]:
        next_state, effect = reducer.reduce(
            wire.state_from_wire(state), wire.event_from_wire(event)
        )
        return wire.state_to_wire(next_state), effect

    step_wire = wire.step_wire

    def through_step_wire(state: Any, event: Any) -> tuple[Any, str]:
        next_state, effect, _row = step_wire(state, event)
        return next_state, effect

    sides: dict[str, Callable[[Any, Any], tuple[Any, str]]] = {
        OURS: wire.reduce_wire,
        "reduce_wire through step_wire (shared checks, one more call)": through_step_wire,
        "typed round trip (from_wire, reduce, to_wire)": typed,
        "dict-reducer-checked": dict_reducer.reduce_checked,
        "dict-reducer-bare": dict_reducer.reduce,
    }
    for name, step in sides.items():
        wrong = sum(
            step(s, e) != ((w := interpret.step(spec, s, e)).state, w.effect) for s, e in cases
        )
        if wrong:
            raise SystemExit(f"{name} disagrees with {SPEC} on {wrong} cases")
    best = dict.fromkeys(sides, float("inf"))
    for _ in range(args.repeat):
        for name, step in sides.items():
            start = time.perf_counter()
            for s, e in cases:
                step(s, e)
            best[name] = min(best[name], (time.perf_counter() - start) / len(cases))
    baseline = best["dict-reducer-checked"]
    print(f"{SPEC}, {len(cases)} cases, best of {args.repeat} interleaved runs")
    print("| path | steps/s | µs/step | vs dict-reducer-checked |")
    print("| --- | --- | --- | --- |")
    for name, per in best.items():
        print(f"| {name} | {1 / per:,.0f} | {per * 1e6:.2f} | {baseline / per:.2f}x |")
    print()
    print(
        f"target: ours >= 500,000 steps/s ({1 / best[OURS] / 500_000:.2f}x) "
        "and >= dict-reducer-checked"
    )
    ours, base = 1 / best[OURS], 1 / baseline
    write(
        __file__,
        [
            row(
                "reduce-wire",
                f"`reduce_wire` (JSON values in and out), {SPEC}, {len(cases):,} cases",
                f"{ours / 1e6:.2f}M steps/s",
                baseline=f"hand-written dict reducer (`dict_reducer.py`) {base / 1e6:.2f}M",
                ratio=f"{ours / base:.2f}× as fast",
                target="≥ 500k steps/s and ≥ 1.0× the dict reducer",
                met=ours >= 500_000 and ours >= base,
            )
        ],
        note=f"best of {args.repeat} interleaved runs",
    )
    every_spec(args.repeat)


def every_spec(repeat: int) -> None:
    """reduce_wire and the typed round trip on each committed spec's exhaustive set (no
    hand-written baseline exists for the other tables)."""
    print()
    print(f"every committed spec, exhaustive sets, best of {repeat} interleaved runs")
    print("| spec | cases | reduce_wire steps/s | typed round trip steps/s | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for spec in committed_specs():
        wire, reducer = reset_control(spec).wire, reset_control(spec).reducer
        cases = [(s, e) for s in all_states(spec) for e in all_events(spec)]

        def typed(state: Any, event: Any, wire: Any = wire, reducer: Any = reducer) -> Any:
            next_state, effect = reducer.reduce(
                wire.state_from_wire(state), wire.event_from_wire(event)
            )
            return wire.state_to_wire(next_state), effect

        best = {"direct": float("inf"), "typed": float("inf")}
        for _ in range(repeat):
            for name, step in (("direct", wire.reduce_wire), ("typed", typed)):
                start = time.perf_counter()
                for s, e in cases:
                    step(s, e)
                best[name] = min(best[name], (time.perf_counter() - start) / len(cases))
        print(
            f"| {spec.id} | {len(cases)} | {1 / best['direct']:,.0f} | "
            f"{1 / best['typed']:,.0f} | {best['typed'] / best['direct']:.2f}x |"
        )


if __name__ == "__main__":
    main()
