"""Literal scenarios for ``reset-control@a508f68``, the reducer of upstream commit ``a508f68``:
without a pending chain only the user's own close-out commits at the settle; the budget's
close-out the model ignored is dropped there, reading only the switch (upstream's "fallback is
normal-stop only"), and a spent chain stays spent. Everything else is 0.34's."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control_stop import (
    CHANGED_IN_A508F68,
    HOOK,
    KEPT,
    OWN,
    SINCE_A508F68,
)

SPEC_ID = "reset-control@a508f68"

# Its own cases (the settle that drops the budget's close-out) are shared with its successor:
# reset_control_stop.SINCE_A508F68.
SCENARIOS = (
    rc.WINDOW_CASES
    + tuple(
        s
        for s in rc.UPSTREAM_KEPT_IN_027
        if s.id not in rc.CHANGED_IN_034 and s.id not in CHANGED_IN_A508F68
    )
    + rc.MANUAL_STOP_CASES
    + rc.SINCE_033_CASES
    + OWN
    + KEPT
    + HOOK
    + SINCE_A508F68
)
