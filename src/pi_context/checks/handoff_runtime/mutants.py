"""Handoff runtime mutants: the runtime broken one way each (a guard dropped, the cooldown or
the attempt limit ignored, a record unwritten, ...), and the conformance run against each."""

from __future__ import annotations

from functools import cache
from typing import Any

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff import outcomes
from pi_context.checks.runtime.mutants import (
    Mutant,
    MutationResult,
    becomes,
    kill,
    mutant_table,
    returning,
)

from .host import SPEC_ID
from .run import run_conformance

BREAKS = {
    "validation-unguarded": "the destination's switch runs outside the stage's guard",
    "cooldown-ignored": "pressure reads the cooldown as always over",
    "attempts-unlimited": "pressure reads attempts as always left",
    "attempt-not-taken": "an automatic handoff takes no attempt",
    "stamp-dropped": "the verified destination's stamp is not kept in memory",
    "records-unwritten": "attempt, pause and command records are not written",
    "code-from-stage": "the result code is the end stage's name",
    "cancel-ignored": "the host's cancel is never polled",
    "ready-ignored": "assertReady is never asked",
    "replay-unpaused": "a replay ignores the record's pause",
    "destination-left": "an unfinished or unverified destination is not removed",
    "no-return": "a failed or cancelled validation does not switch back to the source",
}
"""Every handoff runtime mutant, by name: what it breaks (in the order they run)."""


def _mutants() -> tuple[Mutant, ...]:
    from pi_context.bindings.handoff import controller, run

    original_verify = run.HandoffRun.verify_destination
    real_restore = auto.restore_facts

    async def unguarded_switch(self: Any) -> Any:
        await self._switch(self.destination, "new")  # the validation's switch, unguarded
        return await original_verify(self)

    def no_record(self: Any, session: Any, failure: Any) -> None:
        self.owner.failure = failure

    def no_stamp(self: Any, now: int) -> None:
        self.failure = None

    def unpaused(record: Any, policy: Any, now: int) -> auto.RestoreFacts:
        facts = real_restore(record, policy, now)
        return auto.RestoreFacts(facts.enabled, False, facts.cooling, facts.attempts_left)

    async def no_return(self: Any) -> None:
        self.result.returned = None

    always = property(lambda self: True)

    def stage_code(stage: str, code: str | None, error: BaseException | None) -> str | None:
        return None if stage == outcomes.DONE else stage

    return mutant_table(
        BREAKS,
        {
            "validation-unguarded": (
                run.HandoffRun,
                "verify_destination",
                becomes(unguarded_switch),
            ),
            "cooldown-ignored": (controller._Pressure, "cooled", becomes(always)),
            "attempts-unlimited": (controller._Pressure, "attempts_left", becomes(always)),
            "attempt-not-taken": (controller.Handoffs, "take_attempt", returning(None)),
            "stamp-dropped": (controller.Handoffs, "stamp", becomes(no_stamp)),
            "records-unwritten": (run.HandoffRun, "_record_on", becomes(no_record)),
            "code-from-stage": (outcomes, "result_code", becomes(stage_code)),
            "cancel-ignored": (run.HandoffRun, "check_cancel", returning(None)),
            "ready-ignored": (run._Ready, "ready", becomes(always)),
            "replay-unpaused": (auto, "restore_facts", becomes(unpaused)),
            "destination-left": (run.HandoffRun, "_remove_created", returning(None)),
            "no-return": (run.HandoffRun, "_return", becomes(no_return)),
        },
    )


@cache
def mutants() -> tuple[Mutant, ...]:
    """Every handoff runtime mutant (built on first use: building them imports the runtime)."""
    return _mutants()


def kill_mutants(
    *, examples: int = 10, steps: int = 14, only: tuple[str, ...] = ()
) -> MutationResult:
    """Run the conformance check against each handoff runtime mutant (no shrinking: the
    first mismatch kills it)."""
    return kill(
        SPEC_ID,
        mutants(),
        lambda: run_conformance(examples=examples, steps=steps, shrink=False),
        only=only,
    )
