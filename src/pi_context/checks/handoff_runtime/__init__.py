"""Runtime conformance of the handoff: the real runtime driven against a mirror of the spec.

A hypothesis stateful test drives a real ``Runtime`` (real session files, a real Git work
tree, real destination files) through host-level operations — a manual handoff that succeeds,
fails at any stage or is cancelled at any stage; context pressure with the automatic policy
(an automatic handoff that succeeds, fails, is cancelled or finds its host not ready); the
user's ``/handoff auto on|off|pause|resume``; time passing; the host restarting on the open
session (a replay of its record) — while a mirror, the spec interpreter over
``handoff@0.6-auto``, is fed the facts a host would report. After every operation:

- the rows the runtime fired are the rows the mirror fires, and its state is the mirror's;
- the result's outcome and code are the mirror's end stage and code (a reported code is the
  one the injected failure names);
- every session file holds, as its last automatic-handoff record, exactly the record the
  mirror's effects wrote there (the attempts, the stamp, the failure, paused and enabled);
- the source never gains anything but whole offers and records; a destination file exists
  only for a handoff that reached its continuation, and the runtime is on it exactly then.

The same shape as the reset-control runtime conformance (operations, mirror, per-step checks,
mutants): ``MUTANTS`` are small breaks of the runtime, each of which this check must catch.
"""

from __future__ import annotations

from pi_context.checks.runtime.harness import ConformanceResult
from pi_context.checks.runtime.mutants import Mutant, MutationResult

from .host import (
    FAILURE,
    MODEL,
    NOT_READY,
    PLANS,
    POLICY,
    REPORTED,
    RESTORE_FACTS,
    SPEC_ID,
    STAGE_MS,
    SUCCESS,
    UNREACHABLE,
    UNVERIFIED,
    WINDOW,
    Mirror,
    Plan,
    effective,
    expected_events,
    reported_code,
)
from .machine import HandoffConformance
from .mutants import kill_mutants, mutants
from .run import (
    MUTANT_EXAMPLES,
    RUNTIME_EXAMPLES,
    run_conformance,
    unfired_failures,
    unfired_rows,
)
from .scenarios import SCENARIOS, run_scenarios
from .world import World

__all__ = [
    "FAILURE",
    "MODEL",
    "MUTANT_EXAMPLES",
    "NOT_READY",
    "PLANS",
    "POLICY",
    "REPORTED",
    "RESTORE_FACTS",
    "RUNTIME_EXAMPLES",
    "SCENARIOS",
    "SPEC_ID",
    "STAGE_MS",
    "SUCCESS",
    "UNREACHABLE",
    "UNVERIFIED",
    "WINDOW",
    "ConformanceResult",
    "HandoffConformance",
    "Mirror",
    "Mutant",
    "MutationResult",
    "Plan",
    "World",
    "effective",
    "expected_events",
    "kill_mutants",
    "mutants",
    "reported_code",
    "run_conformance",
    "run_scenarios",
    "unfired_failures",
    "unfired_rows",
]
