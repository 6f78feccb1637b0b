"""Running the handoff runtime conformance: the named scenarios, then derandomized hypothesis
runs; and ``pi-context verify``'s extra check that every row but the strays fired."""

from __future__ import annotations

from pi_context.checks.runtime.harness import ConformanceResult, run_machine

from .host import SPEC_ID, UNREACHABLE, handoff_spec
from .machine import HandoffConformance
from .scenarios import SCENARIOS

RUNTIME_EXAMPLES = 25
"""Random runs in ``pi-context verify`` (after the named scenarios)."""
MUTANT_EXAMPLES = 5
"""Random runs a mutant gets after the scenarios (most die in a scenario)."""


def run_conformance(
    *, examples: int = 25, steps: int = 14, shrink: bool = True, scenarios: bool = True
) -> ConformanceResult:
    """The named scenarios, then ``examples`` generated runs of up to ``steps`` host
    operations each (derandomized: the same runs every time)."""
    machine = HandoffConformance.fresh("HandoffConformanceRun")
    named = SCENARIOS if scenarios else ()
    return run_machine(SPEC_ID, machine, named, examples=examples, steps=steps, shrink=shrink)


def unfired_rows(rows: frozenset[str]) -> list[str]:
    """Rows of the spec no run fired, but the strays (reports for another stage, which a
    runtime that steps through the spec never makes)."""
    return [
        r.id
        for r in handoff_spec().rows
        if r.id not in rows and not r.id.endswith(".stray") and r.id not in UNREACHABLE
    ]


def unfired_failures(result: ConformanceResult) -> list[str]:
    """``pi-context verify``'s extra check: every row but the strays fired."""
    unfired = unfired_rows(result.rows)
    return [f"handoff runtime conformance never fired: {', '.join(unfired)}"] if unfired else []
