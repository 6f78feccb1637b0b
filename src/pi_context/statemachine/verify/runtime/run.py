"""Running the runtime conformance for one spec: its generated machine, the named scenarios, then
derandomized hypothesis runs."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from pi_context.spec.model import Spec

from .machine import RuntimeConformance
from .scenarios import run_scenarios


def machine_for(spec: Spec) -> type[RuntimeConformance]:
    """The runtime-conformance state machine generated for ``spec``."""
    name = f"RuntimeConformance_{spec.module_name}"
    machine: type[RuntimeConformance] = type(
        name, (RuntimeConformance,), {"SPEC": spec, "rows": set(), "stale": 0, "examples": 0}
    )
    return machine


@dataclass
class ConformanceResult:
    spec_id: str
    examples: int
    failure: str | None = None
    seconds: float = 0.0
    rows: frozenset[str] = frozenset()
    """Rows of the spec the runtime fired during the run."""
    stale: int = 0
    """Boundary builds that an interruption made stale (and that committed nothing)."""

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_conformance(
    spec: Spec, *, examples: int = 30, steps: int = 25, shrink: bool = True
) -> ConformanceResult:
    """Drive the real runtime for ``spec`` through ``examples`` generated runs of up to
    ``steps`` host operations each (derandomized: the same runs every time)."""
    machine = machine_for(spec)
    phases = (Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ()))
    config = settings(
        max_examples=max(1, examples),
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    started = time.perf_counter()
    failure = run_scenarios(machine)
    if failure is None and examples > 0:
        try:
            run_state_machine_as_test(machine, settings=config)
        except Exception as exc:  # a mismatch, or the runtime itself failing: both are findings
            failure = f"{type(exc).__name__}: {exc}"
    return ConformanceResult(
        spec.id,
        machine.examples,
        failure,
        time.perf_counter() - started,
        frozenset(machine.rows),
        machine.stale,
    )
