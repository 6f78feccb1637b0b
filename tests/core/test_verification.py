"""The checkers: exhaustive agreement, model checking, coverage and reachability claims."""

from __future__ import annotations

from pi_context.checks.exhaustive import check_exhaustive
from pi_context.spec.interpret import render_state
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import model_check
from pi_context.statemachine.reset_control import ResetControl


def test_exhaustive_agreement(gens: dict[str, ResetControl]) -> None:
    counts = {}
    for spec_id, gen in gens.items():
        result = check_exhaustive(gen, show=False)
        assert result.mismatches == []
        counts[spec_id] = result.cases
    assert counts == {
        "reset-control@0.25": 1192,
        "reset-control@0.26": 9212,
        "reset-control@0.26-proposal": 9212,
        "reset-control@0.27": 14476,
        "reset-control@0.33": 11844,
        "reset-control@0.34": 15180,
        "reset-control@a508f68": 15180,
        "reset-control@6bcd8b5": 20940,
        "handoff@0.6": 399,
        "handoff@0.6-auto": 40710,
    }


def test_all_eight_025_combinations_are_reachable(specs: dict[str, Spec]) -> None:
    """The 0.25 docs claim every request × overflow combination is reachable."""
    spec = specs["reset-control@0.25"]
    result = model_check(spec, show=False)
    reached = sorted(render_state(spec, s) for s in result.reachable)
    assert reached == sorted(
        f"{r} / {o}"
        for r in ("none", "explicit")
        for o in ("idle", "pending", "pending-spent", "spent")
    )
    assert result.violations == []


def test_026_model_check(specs: dict[str, Spec]) -> None:
    spec = specs["reset-control@0.26"]
    result = model_check(spec, show=False)
    assert result.violations == []
    assert len(result.reachable) == 28
    assert result.rows_fired() == len(spec.rows)
    # every lazy fact a guard reads is seen both true and false there
    assert all(len(v) == 2 for v in result.guard_outcomes.values())


def test_witnesses_are_shortest_and_replay(specs: dict[str, Spec]) -> None:
    from pi_context.spec import interpret

    spec = specs["reset-control@0.26"]
    result = model_check(spec, show=False)
    assert len(result.witnesses["turn_end.tool-commit"]) == 2  # tool_request, turn_end
    assert len(result.witnesses["before_settle.recover"]) == 2  # overflow, settle
    for row_id, steps in result.witnesses.items():
        state = interpret.initial_state(spec)
        last = None
        for step in steps:
            outcome = interpret.step(spec, state, step.event)
            assert outcome.state == step.state
            state, last = outcome.state, outcome.row
        assert last == row_id


def test_a_branch_dependent_order_needs_lazy_order_fixed_false(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Published 0.26 reads enabled before queued at a settle without a pending chain; claiming
    one fixed order for it is caught by the exhaustive check."""
    from pi_context.codegen.fresh import reset_control
    from pi_context.spec import SPECS_DIR, load

    text = (SPECS_DIR / "reset-control@0.26.yaml").read_text(encoding="utf-8")
    path = tmp_path / "fixed.yaml"
    path.write_text(text.replace("lazy_order_fixed: false", "lazy_order_fixed: true"))
    result = check_exhaustive(reset_control(load(path)), show=False)
    assert result.mismatches and "out of lazy_order" in result.mismatches[0]
