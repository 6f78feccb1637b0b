"""Literal scenarios for ``reset-control@a508f68``, the reducer of upstream commit ``a508f68``:
without a pending chain only the user's own close-out commits at the settle; the budget's
close-out the model ignored is dropped there, reading only the switch (upstream's "fallback is
normal-stop only"), and a spent chain stays spent. Everything else is 0.34's."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control import close, s26, settle26
from pi_context.checks.scenarios.reset_control_stop import HOOK, KEPT, OWN
from pi_context.checks.scenarios.scenario import Expect, Scenario

SPEC_ID = "reset-control@a508f68"

# What 0.34 decided and a508f68 no longer does: the budget's close-out committing at the settle.
CHANGED = frozenset({"upstream-fallback-forgets-spent-chain"})

BUDGET = close(source="automatic")
DROPPED = ("enabled",)  # the switch is read; the queue and the policy are not

OWN_A508F68: tuple[Scenario, ...] = (
    Scenario(
        "upstream-fallback-is-normal-stop-only",
        "The user's close-out commits at the settle and stops; the budget's close-out the model "
        "ignored is dropped without a wipe, with automatic resets on or off.",
        s26(BUDGET),
        (
            Expect(settle26(), s26(), "none", DROPPED),
            Expect(rc.close_out(source="automatic"), s26(BUDGET), "close-out-armed"),
            Expect(settle26(automaticResetEnabled=False), s26(), "none", DROPPED),
            rc.ARM_MANUAL,
            rc.SETTLE_COMMITS_STOP,
        ),
    ),
    Scenario(
        "budget-close-out-dropped-even-with-queued-work",
        "Queued work no longer keeps the budget's close-out for a later settle: it is dropped "
        "and the queue is not probed.",
        s26(BUDGET),
        (Expect(settle26(queued=True), s26(), "none", DROPPED),),
    ),
    Scenario(
        "dropped-budget-close-out-keeps-a-spent-chain",
        "Dropping the budget's close-out starts no fresh window, so a spent chain stays spent "
        "(0.34's committed fallback reset it to idle).",
        s26(BUDGET, "spent"),
        (Expect(settle26(), s26(None, "spent"), "none", DROPPED),),
    ),
    Scenario(
        "disabled-settle-drops-the-budget-close-out-reading-the-switch",
        "With pi-context off the budget's close-out is dropped as before, reading only the switch.",
        s26(BUDGET),
        (Expect(settle26(enabled=False), s26(), "none", DROPPED),),
    ),
)

SCENARIOS = (
    rc.WINDOW_CASES
    + tuple(
        s for s in rc.UPSTREAM_KEPT_IN_027 if s.id not in rc.CHANGED_IN_034 and s.id not in CHANGED
    )
    + rc.MANUAL_STOP_CASES
    + rc.SINCE_033_CASES
    + OWN
    + KEPT
    + HOOK
    + OWN_A508F68
)
