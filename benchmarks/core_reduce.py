"""Steps per second of the generated ``reduce`` and of the ``transitions`` machine over the
exhaustive case set of each spec, against named baselines.

Baselines: ``transitions-flat-trigger`` (the library's own cost for one trigger of a flat
two-state machine with ``auto_transitions=False``, the floor for any machine built on it)
and the targets of the core issue (reduce ≥ 500,000 steps/s; machine ≤ 20 µs/step).

    python benchmarks/core_reduce.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from results import row, write
from transitions import Machine

from pi_context.spec.abstraction import all_events, all_states
from pi_context.statemachine.reset_control import committed_specs, reset_control


def best_of(repeat: int, run: Callable[[], int]) -> float:
    """Best seconds per step over ``repeat`` runs (the least disturbed one)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        steps = run()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def flat_trigger_baseline(repeat: int) -> float:
    class Model:
        state = "a"

    model: Any = Model()
    Machine(
        model=model,
        states=["a", "b"],
        transitions=[{"trigger": "go", "source": "a", "dest": "b"}],
        initial="a",
        auto_transitions=False,
    )

    def run() -> int:
        for _ in range(5_000):
            model.state = "a"
            model.go()
        return 5_000

    return best_of(repeat, run)


def stepping(step: Callable[[Any, Any], Any], cases: list[tuple[Any, Any]]) -> Callable[[], int]:
    def run() -> int:
        for state, event in cases:
            step(state, event)
        return len(cases)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(
        "| spec | cases | reduce steps/s | machine µs/step | flat trigger µs/step "
        "| machine/flat-trigger | reduce vs target 500k |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    reduce_rates: list[float] = []
    machine_us: list[float] = []
    flat_us: list[float] = []
    for spec in committed_specs():
        gen = reset_control(spec)
        machine = gen.machine
        cases = [
            (gen.wire.state_from_wire(s), gen.wire.event_from_wire(e))
            for s in all_states(spec)
            for e in all_events(spec)
        ]
        # Interleave the baseline with the machine so both see the same machine load.
        per_reduce = per_machine = baseline = float("inf")
        for _ in range(args.repeat):
            baseline = min(baseline, flat_trigger_baseline(1))
            per_machine = min(per_machine, best_of(1, stepping(machine.step, cases)))
            per_reduce = min(per_reduce, best_of(1, stepping(gen.reducer.reduce, cases)))
        reduce_rates.append(1 / per_reduce)
        machine_us.append(per_machine * 1e6)
        flat_us.append(baseline * 1e6)
        print(
            f"| {spec.id} | {len(cases)} | {1 / per_reduce:,.0f} | {per_machine * 1e6:.1f} "
            f"| {baseline * 1e6:.1f} | {per_machine / baseline:.2f}x "
            f"| {(1 / per_reduce) / 500_000:.2f}x |"
        )
    print()
    print(
        "baseline transitions-flat-trigger: one trigger of a flat two-state machine, "
        "auto_transitions=False"
    )
    print("targets: reduce >= 500,000 steps/s; machine <= 20 µs/step (flat trigger ~15 µs)")
    specs = len(reduce_rates)
    write(
        __file__,
        [
            row(
                "reduce",
                f"generated typed `reduce`, every committed spec ({specs})",
                f"{min(reduce_rates) / 1e6:.2f}–{max(reduce_rates) / 1e6:.2f}M steps/s",
                target="≥ 500k steps/s",
                met=min(reduce_rates) >= 500_000,
            ),
            row(
                "machine",
                "the `transitions` machine, µs per step",
                f"{min(machine_us):.1f}–{max(machine_us):.1f} µs",
                baseline=f"the library's own flat trigger {min(flat_us):.1f}–{max(flat_us):.1f} µs",
                ratio=f"{min(m / f for m, f in zip(machine_us, flat_us, strict=True)):.2f}–"
                f"{max(m / f for m, f in zip(machine_us, flat_us, strict=True)):.2f}×",
                target="≤ 20 µs",
                met=max(machine_us) <= 20,
            ),
        ],
        note=f"best of {args.repeat} interleaved runs",
    )


if __name__ == "__main__":
    main()
