"""The handoff runtime against the spec: the named scenarios (every failure and cancel point
of both triggers, the automatic rules), the generated runs, every row fired, and the mutants
each killed."""

from __future__ import annotations

import pytest

from pi_context.checks import handoff_runtime as conformance


def test_the_runtime_conforms_to_the_spec() -> None:
    result = conformance.run_conformance(examples=40, steps=16)
    assert result.ok, result.failure
    assert conformance.unfired_rows(result.rows) == []


@pytest.mark.parametrize("mutant", conformance.mutants(), ids=lambda m: m.name)
def test_the_check_kills_each_runtime_mutant(mutant: conformance.Mutant) -> None:
    with mutant.apply():
        result = conformance.run_conformance(examples=5, steps=14, shrink=False)
    assert not result.ok, f"{mutant.name} ({mutant.what}) survived"


def test_a_scenario_failure_is_named() -> None:
    """Break it: a scenario that disagrees with the mirror is reported by its name."""
    with conformance.mutants()[0].apply():
        failure = conformance.run_scenarios()
    assert failure is not None and failure.startswith("scenario 'manual, fail at validating'")
