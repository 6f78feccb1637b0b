"""Runtime conformance: the real Runtime, driven as a host drives it, agrees with every spec;
and the check is sharp: runtime mutants (an abort check dropped, the cause table shifted, a gate
removed, ...) are caught, except the ones listed as equivalent for a spec, with the reason."""

from __future__ import annotations

import pytest

from pi_context import spec_ids
from pi_context.checks.runtime import (
    SCENARIOS,
    kill_mutants,
    mutants,
    run_conformance,
)
from pi_context.spec import load, spec_path

SPECS = spec_ids()


@pytest.mark.parametrize("spec_id", SPECS)
def test_the_runtime_conforms_to_its_spec(spec_id: str) -> None:
    spec = load(spec_path(spec_id))
    result = run_conformance(spec, examples=60)
    assert result.ok, result.failure
    assert result.examples > len(SCENARIOS)
    assert result.stale > 0, "some boundary builds were interrupted and came back stale"
    # The host-level runs reach every row of the table but the ones no host operation can
    # lead to, each named with the reason.
    missing = {r.id for r in spec.rows} - result.rows
    assert missing <= set(HOST_UNREACHED), sorted(missing - set(HOST_UNREACHED))


HOST_UNREACHED = {
    "close_out.duplicate-tool": "a tool request never outlives the turn it was made in (its "
    "turn end commits or drops it), so no close-out meets one",
    "close_out.manual-over-tool": "as close_out.duplicate-tool: no close-out meets a tool request",
    "close_out.replace-stale": "needs a request of another window to survive into a close-out, "
    "which no host operation leaves behind",
    "before_settle.stale": "needs a request of another window to survive into a settle",
    "turn_end.manual-overflow-disabled": "pi-context off clears the user's close-out, so no "
    "disabled turn meets one",
    "before_settle.disarm-keeps-request": "under 0.34 the only request an overflow turn keeps is "
    "the user's close-out, which an enabled settle commits first; off clears it",
}
"""Rows no sequence of host operations reaches, and why (the exhaustive checks cover them)."""


@pytest.mark.parametrize("spec_id", SPECS)
def test_a_dropped_abort_check_and_a_shifted_cause_table_are_caught(spec_id: str) -> None:
    spec = load(spec_path(spec_id))
    found = kill_mutants(spec, examples=5, only=("abort-check-dropped", "cause-table-shifted"))
    by_name = {r.mutant.name: r for r in found.results}
    assert by_name["abort-check-dropped"].killed
    assert "boundary build" in by_name["abort-check-dropped"].finding
    assert by_name["cause-table-shifted"].killed
    assert "cause" in by_name["cause-table-shifted"].finding


@pytest.mark.parametrize("spec_id", SPECS)
def test_every_mutant_is_killed_or_listed_as_equivalent(spec_id: str) -> None:
    spec = load(spec_path(spec_id))
    found = kill_mutants(spec, examples=10)
    assert len(found.results) == len(mutants())
    assert found.survived == [], [r.mutant.name for r in found.survived]
    assert found.wrongly_equivalent == [], [r.mutant.name for r in found.wrongly_equivalent]
    for result in found.equivalent:
        assert len(result.mutant.equivalent[spec_id]) > 40, "each says why it is equivalent"
    assert found.rate == 1.0


def test_equivalents_are_claimed_for_committed_specs_only() -> None:
    for mutant in mutants():
        assert set(mutant.equivalent) <= set(SPECS), mutant.name
