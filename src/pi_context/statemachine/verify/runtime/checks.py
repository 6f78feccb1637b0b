"""``pi-context verify``'s runtime step for one spec: the conformance run, then the mutants."""

from __future__ import annotations

from typing import Any

from pi_context.spec.model import Spec

from .mutants import MutationResult, kill_mutants
from .run import ConformanceResult, run_conformance

RUNTIME_EXAMPLES = 25
"""Random runs per spec in ``pi-context verify`` (after the named scenarios)."""
MUTANT_EXAMPLES = 10
"""Random runs a mutant gets after the scenarios (most die in a scenario)."""


def runtime_checks(
    spec: Spec,
    failures: list[str],
    *,
    show: bool = True,
    err: Any = None,
    examples: int = RUNTIME_EXAMPLES,
) -> tuple[ConformanceResult | None, MutationResult | None]:
    """``pi-context verify``'s runtime step for one spec: the conformance run, then the
    mutants; problems are appended to ``failures``. Specs the runtime does not run (another
    family, or one without generated code to run) are skipped: (None, None)."""
    import sys

    from pi_context.bindings.runtime.control import bindings

    if spec.id not in bindings():
        return None, None
    out = err or sys.stderr
    if show:
        print(f"  {spec.id} runtime: conformance ...", end="", file=out, flush=True)
    result = run_conformance(spec, examples=examples)
    if show:
        state = "ok" if result.ok else "FAILED"
        print(f" {state} ({result.examples} runs, {result.seconds:.1f}s); mutants ...",
              end="", file=out, flush=True)  # fmt: skip
    if not result.ok:
        failures.append(f"runtime conformance: {result.failure}")
        if show:
            print(file=out)
        return result, None
    mutation = kill_mutants(spec, examples=MUTANT_EXAMPLES)
    if show:
        print(f" {mutation.killed}/{len(mutation.results)} killed ({mutation.seconds:.1f}s)",
              file=out)  # fmt: skip
    for survivor in mutation.survived:
        failures.append(
            f"runtime mutant {survivor.mutant.name} ({survivor.mutant.what}) survived the "
            "runtime conformance"
        )
    for listed in mutation.wrongly_equivalent:
        failures.append(
            f"runtime mutant {listed.mutant.name} is listed as equivalent in {spec.id} but "
            f"was killed ({listed.finding}); remove it from the list"
        )
    return result, mutation
