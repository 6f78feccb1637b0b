"""The wire fast path answers exactly like the checked conversion, hit or miss.

``state_from_wire``/``event_from_wire`` remember typed values by their JSON leaves; these
properties feed them valid and corrupted JSON, twice, and compare every answer (value or
located error) with the checked functions that validate everything.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.spec.abstraction import all_events, all_states
from pi_context.statemachine.reset_control import committed_specs, reset_control
from pi_context.statemachine.wirecheck import WireError

from .conftest import corrupt

GENS = [reset_control(spec) for spec in committed_specs()]
CASES = {gen.spec.id: (all_states(gen.spec), all_events(gen.spec)) for gen in GENS}


def answer(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(value, "x"))
    except WireError as err:
        return ("error", str(err))


@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.spec.id)
@settings(max_examples=300, database=None, deadline=None)
@given(data=st.data())
def test_fast_and_checked_conversions_agree(gen: Any, data: st.DataObject) -> None:
    states, events = CASES[gen.spec.id]
    state = data.draw(st.sampled_from(states))
    event = data.draw(st.sampled_from(events))
    if data.draw(st.booleans()):
        state = corrupt(state, data)
    if data.draw(st.booleans()):
        event = corrupt(event, data)
    for _ in range(2):  # the second round answers from what the first remembered
        assert answer(gen.wire.state_from_wire, state) == answer(
            gen.wire._state_from_wire_checked, state
        )
        assert answer(gen.wire.event_from_wire, event) == answer(
            gen.wire._event_from_wire_checked, event
        )


def test_a_remembered_true_does_not_accept_1() -> None:
    gen = next(g for g in GENS if g.spec.id == "reset-control@0.26")
    event = next(e for e in CASES[gen.spec.id][1] if e["type"] == "turn_end")
    assert gen.wire.event_from_wire(event) == gen.wire.event_from_wire(copy.deepcopy(event))
    for name, value in event["facts"].items():
        if isinstance(value, bool):
            bad = copy.deepcopy(event)
            bad["facts"][name] = int(value)
            with pytest.raises(WireError, match=f"facts.{name}: expected true or false"):
                gen.wire.event_from_wire(bad)


def test_state_to_wire_round_trips_every_state() -> None:
    for gen in GENS:
        for state in CASES[gen.spec.id][0]:
            assert gen.wire.state_to_wire(gen.wire.state_from_wire(state)) == state
