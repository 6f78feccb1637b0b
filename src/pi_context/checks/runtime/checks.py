"""``pi-context verify``'s runtime step for one spec: the conformance run, then the mutants."""

from __future__ import annotations

from collections.abc import Callable
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
    mutants; problems are appended to ``failures``. A reset-control spec runs this package's
    harness, the automatic handoff spec ``verify.handoff_runtime``'s; specs the runtime does
    not run (or without generated code to run) are skipped: (None, None)."""
    from pi_context.bindings.runtime.control import bindings
    from pi_context.checks import handoff_runtime as handoff

    if spec.id in bindings():
        return run_checks(
            spec.id,
            lambda: run_conformance(spec, examples=examples),
            lambda: kill_mutants(spec, examples=MUTANT_EXAMPLES),
            failures,
            show=show,
            err=err,
        )
    if spec.id == handoff.SPEC_ID:
        return run_checks(
            spec.id,
            lambda: handoff.run_conformance(examples=handoff.RUNTIME_EXAMPLES),
            lambda: handoff.kill_mutants(examples=handoff.MUTANT_EXAMPLES),
            failures,
            show=show,
            err=err,
            gaps=handoff.unfired_failures,
        )
    return None, None


def run_checks(
    spec_id: str,
    conformance: Callable[[], ConformanceResult],
    mutation: Callable[[], MutationResult],
    failures: list[str],
    *,
    show: bool = True,
    err: Any = None,
    gaps: Callable[[ConformanceResult], list[str]] | None = None,
) -> tuple[ConformanceResult, MutationResult | None]:
    """Run ``conformance``, then (when it passed) ``mutation``, showing progress; every
    problem (a mismatch, a gap ``gaps`` names, a surviving or wrongly listed mutant) is
    appended to ``failures``."""
    import sys

    out = err or sys.stderr
    if show:
        print(f"  {spec_id} runtime: conformance ...", end="", file=out, flush=True)
    result = conformance()
    if show:
        state = "ok" if result.ok else "FAILED"
        print(f" {state} ({result.examples} runs, {result.seconds:.1f}s); mutants ...",
              end="", file=out, flush=True)  # fmt: skip
    if not result.ok:
        failures.append(f"runtime conformance: {result.failure}")
        if show:
            print(file=out)
        return result, None
    if gaps is not None:
        failures.extend(gaps(result))
    killed = mutation()
    if show:
        print(f" {killed.killed}/{len(killed.results)} killed ({killed.seconds:.1f}s)",
              file=out)  # fmt: skip
    for survivor in killed.survived:
        failures.append(
            f"runtime mutant {survivor.mutant.name} ({survivor.mutant.what}) survived the "
            "runtime conformance"
        )
    for listed in killed.wrongly_equivalent:
        failures.append(
            f"runtime mutant {listed.mutant.name} is listed as equivalent in {spec_id} but "
            f"was killed ({listed.finding}); remove it from the list"
        )
    return result, killed
