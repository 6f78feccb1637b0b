"""The behaviours the seeds (and, where they are silent, the published sources) assert, as
literal scenarios: one module per spec family and version.

These are written independently of the spec files, so they catch a wrong spec, which checks
generated from the spec cannot; `pi-context mutate` uses them to kill table mutants, and the
pytest suite runs each one by name against the generated reducer, the ``transitions``
machine, the interpreter and the TypeScript binding.

* ``scenario``            what a scenario is, and ``run_scenario``
* ``reset_control``       wire builders and the cases several reset-control versions share
* ``reset_control_0_25``, ``reset_control_0_26``, ``reset_control_0_26_proposal``,
  ``reset_control_0_27``, ``reset_control_0_33``, ``reset_control_0_34``,
  ``reset_control_a508f68``, ``reset_control_6bcd8b5``, ``handoff_0_6``,
  ``handoff_0_6_auto``   each version's
  scenarios (``SPEC_ID``, ``SCENARIOS``)
* ``reset_control_stop``  the cases of the generations from 0.34 on, shared by them

Version modules import only ``scenario`` and their family's module, never each other.
"""

from __future__ import annotations

from importlib import import_module

from pi_context.checks.scenarios.scenario import Expect, Scenario, Stepper, Wire, run_scenario

# The version modules (each a spec's ``SPEC_ID`` and ``SCENARIOS``), imported by name.
_VERSIONS = (
    "reset_control_0_25",
    "reset_control_0_26",
    "reset_control_0_26_proposal",
    "reset_control_0_27",
    "reset_control_0_33",
    "reset_control_0_34",
    "reset_control_a508f68",
    "reset_control_6bcd8b5",
    "handoff_0_6",
    "handoff_0_6_auto",
)

# Spec id -> its scenarios, in the order a mutation report names the first to fail.
SCENARIOS: dict[str, tuple[Scenario, ...]] = {
    module.SPEC_ID: module.SCENARIOS
    for module in (import_module(f"{__name__}.{name}") for name in _VERSIONS)
}

__all__ = ["SCENARIOS", "Expect", "Scenario", "Stepper", "Wire", "run_scenario"]
