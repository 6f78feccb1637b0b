"""Running the runtime conformance for one spec: its generated machine, the named scenarios, then
derandomized hypothesis runs."""

from __future__ import annotations

from pi_context.spec.model import Spec

from .harness import ConformanceResult, run_machine
from .machine import RuntimeConformance
from .scenarios import SCENARIOS

__all__ = ["ConformanceResult", "machine_for", "run_conformance"]


def machine_for(spec: Spec) -> type[RuntimeConformance]:
    """The runtime-conformance state machine generated for ``spec``."""
    return RuntimeConformance.fresh(f"RuntimeConformance_{spec.module_name}", SPEC=spec)


def run_conformance(
    spec: Spec, *, examples: int = 30, steps: int = 25, shrink: bool = True
) -> ConformanceResult:
    """Drive the real runtime for ``spec`` through ``examples`` generated runs of up to
    ``steps`` host operations each (derandomized: the same runs every time)."""
    return run_machine(
        spec.id, machine_for(spec), SCENARIOS, examples=examples, steps=steps, shrink=shrink
    )
