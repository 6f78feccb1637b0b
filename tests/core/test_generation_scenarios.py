"""Every class of case where a published generation decides something its predecessor did
not has a named scenario of its own.

``pi-context diff`` groups the differing cases of two consecutive generations by the pair of
rows that fired; each group reachable from the initial state (it has a shortest trace) is a
class of case a design review must see pinned by a literal expectation. A scenario step
covers a group when, compared the way the diff compares it, it differs and fires that pair
of rows.
"""

from __future__ import annotations

import pytest

from pi_context.checks.scenarios import SCENARIOS, Scenario
from pi_context.spec.diff import Case, case_comparer, diff_specs
from pi_context.spec.model import Spec

# Consecutive published generations whose later spec refines the earlier by projection
# (0.26 reads 0.25 through an embedding, so its cases are written in 0.25's terms instead).
PAIRS = [
    ("reset-control@0.26", "reset-control@0.27"),
    ("reset-control@0.27", "reset-control@0.33"),
    ("reset-control@0.33", "reset-control@0.34"),
    ("reset-control@0.34", "reset-control@a508f68"),
    ("reset-control@a508f68", "reset-control@6bcd8b5"),
]


def covered(base: Spec, spec: Spec, scenarios: tuple[Scenario, ...]) -> dict[tuple[str, str], str]:
    """(row in base, row in spec) -> the first scenario whose step differs there."""
    fine, compare = case_comparer(base, spec)
    # the scenarios are written in the later spec's states (the same as the earlier one's
    # when the refinement maps nothing)
    assert fine is spec or (
        spec.refines is not None and not spec.refines.map and not spec.refines.drop
    )
    out: dict[tuple[str, str], str] = {}
    for scenario in scenarios:
        state = scenario.start
        for expect in scenario.steps:
            if base.event(str(expect.event["type"])) is None:
                # an event only the later generation's extension decides: not compared
                state = expect.state
                continue
            c: Case = compare(state, expect.event)
            if c.differs_in:
                out.setdefault((c.a.row, c.b.row), scenario.id)
            state = expect.state
    return out


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_each_new_decision_has_a_named_scenario(specs: dict[str, Spec], old: str, new: str) -> None:
    base, spec = specs[old], specs[new]
    assert spec.refines is not None and spec.refines.spec == old
    d = diff_specs(base, spec)
    reachable = [(g.row_a, g.row_b) for g in d.groups if g.trace is not None]
    assert reachable, f"{old} -> {new}: no reachable difference (the pair list is stale)"
    have = covered(base, spec, SCENARIOS[new])
    missing = [pair for pair in reachable if pair not in have]
    assert not missing, f"{new}: no scenario for these classes of {old} -> {new}: {missing}"


def test_a_step_is_classified_by_the_rows_both_generations_fire(specs: dict[str, Spec]) -> None:
    """The check sees a difference only where the two generations decide differently: the
    safety reset over a manual close-out is one class; a case both decide alike is none."""
    base, spec = specs["reset-control@0.33"], specs["reset-control@0.34"]
    by_id = {s.id: s for s in SCENARIOS[spec.id]}
    stop = covered(base, spec, (by_id["upstream-manual-stop-survives-safety-reset"],))
    assert stop["turn_end.hard-reserve", "turn_end.hard-reserve-manual-stop"] == (
        "upstream-manual-stop-survives-safety-reset"
    )
    assert ("before_settle.drop", "before_settle.stop-after-safety") in stop
    assert covered(base, spec, (by_id["overflow-recovery-armed-and-spent-once"],)) == {}
