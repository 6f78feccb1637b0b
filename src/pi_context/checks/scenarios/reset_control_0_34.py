"""Literal scenarios for ``reset-control@0.34``, the reducer of pi-context 0.34.0 (upstream
``249d30eb``): the user's stop intent survives the hard-reserve safety reset across windows
(the stop-pending phase and the plain ``stop`` effect); a manual close-out survives an
overflow turn and, behind a pending chain, commits and stops instead of recovering; and the
extension's provider-context decision cancels the empty follow-up after a committed stop."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control_stop import HOOK, KEPT, OWN

SPEC_ID = "reset-control@0.34"

SCENARIOS = (
    rc.WINDOW_CASES
    + tuple(s for s in rc.UPSTREAM_KEPT_IN_027 if s.id not in rc.CHANGED_IN_034)
    + rc.MANUAL_STOP_CASES
    + rc.SINCE_033_CASES
    + OWN
    + KEPT
    + HOOK
)
