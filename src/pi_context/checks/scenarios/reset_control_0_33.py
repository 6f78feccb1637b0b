"""Literal scenarios for ``reset-control@0.33``, the reducer of pi-context 0.33.1 (upstream
``eb997c0f``): a manual close-out always reaches the settle (the model's call during one is
only acknowledged, and /wipe-memory takes over the model's pending request of its window),
and a tool request remembers only whether it upgraded the budget's close-out of its own
window."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc

SPEC_ID = "reset-control@0.33"

# Where 0.33 decides otherwise than 0.27 (the family's SINCE_033_CASES, which 0.34 keeps):
# the user's /wipe-memory outranks the model's pending request of its window, and the model's
# call during /wipe-memory is only acknowledged.

SCENARIOS = (
    rc.WINDOW_CASES
    + rc.UPSTREAM_KEPT_IN_027
    + rc.MANUAL_STOP_CASES
    + (rc.HARD_RESERVE_OVER_MANUAL,)
    + rc.SINCE_033_CASES
)
