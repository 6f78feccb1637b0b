"""The hypothesis state machine generated from each spec, run by pytest."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from pi_context.checks.stateful import build_state_machine
from pi_context.statemachine.reset_control import committed_specs, reset_control

_SETTINGS = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)

_by_id = {spec.id: spec for spec in committed_specs()}

TestResetControl025 = build_state_machine(reset_control(_by_id["reset-control@0.25"])).TestCase
TestResetControl025.settings = _SETTINGS
TestResetControl026 = build_state_machine(reset_control(_by_id["reset-control@0.26"])).TestCase
TestResetControl026.settings = _SETTINGS
