"""The seeds' reducer behaviours, run by name against all three implementations."""

from __future__ import annotations

from typing import Any

import pytest

from pi_context.checks.observe import lazy_attributes, recorded
from pi_context.checks.scenarios import SCENARIOS, Scenario, Stepper, run_scenario
from pi_context.spec import interpret
from pi_context.statemachine.reset_control import ResetControl

CASES = [(spec_id, s) for spec_id, scenarios in SCENARIOS.items() for s in scenarios]


def typed_stepper(gen: ResetControl, runner: Any) -> Stepper:
    lazy = lazy_attributes(gen.spec)

    def step(state: dict[str, Any], event: dict[str, Any]) -> Any:
        typed, recorder = recorded(gen.wire.event_from_wire(event), lazy[event["type"]])
        next_state, effect, _row = runner(gen.wire.state_from_wire(state), typed)
        consulted = tuple(recorder.consulted) if recorder else ()
        return gen.wire.state_to_wire(next_state), effect, consulted

    return step


@pytest.mark.parametrize("impl", ["reduce", "transitions", "interpreter"])
@pytest.mark.parametrize(("spec_id", "scenario"), CASES, ids=[f"{a}:{s.id}" for a, s in CASES])
def test_seed_scenario(
    gens: dict[str, ResetControl], spec_id: str, scenario: Scenario, impl: str
) -> None:
    gen = gens[spec_id]
    if impl == "reduce":
        step = typed_stepper(gen, gen.reducer.step)
    elif impl == "transitions":
        step = typed_stepper(gen, gen.machine.step)
    else:

        def step(state: dict[str, Any], event: dict[str, Any]) -> Any:
            result = interpret.step(gen.spec, state, event)
            return result.state, result.effect, result.consulted

    assert run_scenario(scenario, step) == []


def test_scenarios_can_fail(gens: dict[str, ResetControl]) -> None:
    """The runner reports a wrong effect (so the scenario tests are not vacuous)."""
    gen = gens["reset-control@0.26"]

    def lying(state: dict[str, Any], event: dict[str, Any]) -> Any:
        result = interpret.step(gen.spec, state, event)
        effect = "none" if result.effect == "commit-boundary" else result.effect
        return result.state, effect, result.consulted

    scenario = next(
        s
        for s in SCENARIOS["reset-control@0.26"]
        if s.id == "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit"
    )
    failures = run_scenario(scenario, lying)
    assert len(failures) == 1
    assert "effect 'none', expected 'commit-boundary'" in failures[0]


def test_reduce_literal_examples(gens: dict[str, ResetControl]) -> None:
    """Typed API examples a host writes (literal values, no wire layer)."""
    t = gens["reset-control@0.26"].types
    r = gens["reset-control@0.26"].reducer
    armed, effect = r.reduce(t.initial_state(), t.CloseOutEvent(window_id="w", source="manual"))
    assert effect == "close-out-armed"
    assert armed == t.State(t.RequestCloseOut(window_id="w", source="manual"), "idle")
    facts = t.TurnEndFacts(
        window_id="w",
        aborted=False,
        overflow=False,
        failed=False,
        enabled=True,
        queued=False,
        automatic_reset_enabled=True,
        hard_reserve_due=False,
    )
    same, effect = r.reduce(armed, t.TurnEndEvent(facts=facts))
    assert (same, effect) == (armed, "none")
    tool, effect = r.reduce(same, t.ToolRequestEvent(window_id="w"))
    assert tool.request == t.RequestToolRequested(window_id="w")
    done, effect = r.reduce(tool, t.TurnEndEvent(facts=facts))
    assert (done, effect) == (t.initial_state(), "commit-boundary")


def test_lazy_facts_are_read_at_most_once(gens: dict[str, ResetControl]) -> None:
    """A getter-backed fact is called once even when two rows consult it."""
    t = gens["reset-control@0.26"].types
    r = gens["reset-control@0.26"].reducer
    calls: dict[str, int] = {"queued": 0, "enabled": 0, "automatic": 0}

    class Facts:
        window_id = "w"
        aborted = False
        failed = False

        @property
        def queued(self) -> bool:
            calls["queued"] += 1
            return False

        @property
        def enabled(self) -> bool:
            calls["enabled"] += 1
            return True

        @property
        def automatic_reset_enabled(self) -> bool:
            calls["automatic"] += 1
            return False

    state = t.State(t.RequestCloseOut(window_id="w", source="automatic"), "idle")
    _next, effect = r.reduce(state, t.BeforeSettleEvent(facts=Facts()))
    assert effect == "none"
    assert calls == {"queued": 1, "enabled": 1, "automatic": 1}
