"""The direct wire reducer (``step_wire``/``reduce_wire``) answers exactly like the typed path.

The typed path — ``state_from_wire`` → ``reducer.step`` (facts wrapped to record lazy reads)
→ ``state_to_wire`` — is the reference. For every case of every spec's finite abstraction the
direct reducer must give the same JSON text (key order included), effect, row and consulted
facts, and the spec interpreter must agree too. On random wire input, valid or corrupted, it
must give the same answer or raise the same located error.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.checks.observe import lazy_attributes, recorded
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.statemachine.reset_control import committed_specs, reset_control
from pi_context.statemachine.wirecheck import WireError

from .conftest import corrupt, json_leaf

GENS = [reset_control(spec) for spec in committed_specs()]
CASES = {gen.spec.id: (all_states(gen.spec), all_events(gen.spec)) for gen in GENS}
LAZY = {gen.spec.id: lazy_attributes(gen.spec) for gen in GENS}


def typed(gen: Any, state: Any, event: Any) -> tuple[Any, ...]:
    """The reference answer: ("ok", JSON text, effect, row, consulted) or ("error", message)."""
    try:
        typed_state = gen.wire.state_from_wire(state)
        typed_event = gen.wire.event_from_wire(event)
    except WireError as err:
        return ("error", str(err))
    observed, recorder = recorded(typed_event, LAZY[gen.spec.id][typed_event.type])
    next_state, effect, row = gen.reducer.step(typed_state, observed)
    consulted = list(recorder.consulted) if recorder else []
    return ("ok", json.dumps(gen.wire.state_to_wire(next_state)), effect, row, consulted)


def direct(gen: Any, state: Any, event: Any) -> tuple[Any, ...]:
    consulted: list[str] = []
    try:
        next_state, effect, row = gen.wire.step_wire(state, event, consulted)
    except WireError as err:
        return ("error", str(err))
    return ("ok", json.dumps(next_state), effect, row, consulted)


def reduced(gen: Any, state: Any, event: Any) -> tuple[Any, ...]:
    try:
        next_state, effect = gen.wire.reduce_wire(state, event)
    except WireError as err:
        return ("error", str(err))
    return ("ok", json.dumps(next_state), effect)


def objects(value: Any) -> list[int]:
    """Ids of every container inside ``value``."""
    if isinstance(value, dict):
        return [id(value), *(i for v in value.values() for i in objects(v))]
    return []


@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.spec.id)
def test_every_case_of_the_abstraction_agrees_with_typed_path_and_spec(gen: Any) -> None:
    states, events = CASES[gen.spec.id]
    for state in states:
        for event in events:
            want = typed(gen, state, event)
            got = direct(gen, state, event)
            assert got == want, (state, event)
            assert reduced(gen, state, event) == want[:3]
            spec = interpret.step(gen.spec, state, event)
            assert got[1:] == (
                json.dumps(spec.state),
                spec.effect,
                spec.row,
                list(spec.consulted),
            )


@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.spec.id)
def test_next_state_shares_no_object_with_the_input(gen: Any) -> None:
    states, events = CASES[gen.spec.id]
    for state in states:
        for event in events:
            next_state, _effect, _row = gen.wire.step_wire(state, event)
            assert not set(objects(next_state)) & set(objects(state) + objects(event))


@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.spec.id)
@settings(max_examples=400, database=None, deadline=None)
@given(data=st.data())
def test_random_wire_input_gives_the_typed_answer_or_the_same_named_error(
    gen: Any, data: st.DataObject
) -> None:
    states, events = CASES[gen.spec.id]
    state: Any = data.draw(st.sampled_from(states))
    event: Any = data.draw(st.sampled_from(events))
    for _ in range(data.draw(st.integers(0, 2))):
        state = corrupt(state, data)
    for _ in range(data.draw(st.integers(0, 2))):
        event = corrupt(event, data)
    if data.draw(st.booleans()):
        state = data.draw(json_leaf)  # not even an object
    want = typed(gen, state, event)
    assert direct(gen, state, event) == want
    assert reduced(gen, state, event) == want[:3]


class Id(str):
    """A str subclass: valid for the typed path, not the exact shape the fast checks take."""


def reshaped(value: Any, how: str) -> Any:
    if not isinstance(value, dict):
        return Id(value) if how == "str-subclass" and isinstance(value, str) else value
    items = [(k, reshaped(v, how)) for k, v in value.items()]
    if how == "reversed-keys":
        return dict(reversed(items))
    if how == "ordered-dict":
        return OrderedDict(items)
    return dict(items)


@pytest.mark.parametrize("how", ["reversed-keys", "ordered-dict", "str-subclass"])
@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.spec.id)
def test_valid_but_unusual_json_values_take_the_typed_path_to_the_same_answer(
    gen: Any, how: str
) -> None:
    states, events = CASES[gen.spec.id]
    for state in states[:40]:
        for event in events:
            s, e = reshaped(state, how), reshaped(event, how)
            want = typed(gen, s, e)
            assert want[0] == "ok"
            assert direct(gen, s, e) == want


def test_attack_integer_1_for_a_true_fact_is_a_named_error() -> None:
    gen = next(g for g in GENS if g.spec.id == "reset-control@0.26")
    state = gen.spec.initial
    event = next(e for e in CASES[gen.spec.id][1] if e["type"] == "turn_end")
    for name, value in event["facts"].items():
        if isinstance(value, bool):
            bad = copy.deepcopy(event)
            bad["facts"][name] = int(value)
            with pytest.raises(WireError, match=f"event.facts.{name}: expected true or false"):
                gen.wire.step_wire(state, bad)


def test_attack_unhashable_values_are_named_errors_not_type_errors() -> None:
    gen = next(g for g in GENS if g.spec.id == "reset-control@0.26")
    state = {"request": {"phase": ["none"]}, "overflow": "idle"}
    with pytest.raises(WireError, match=r"state.request.phase"):
        gen.wire.step_wire(state, {"type": "clear"})
    with pytest.raises(WireError, match=r"state.overflow"):
        gen.wire.step_wire({"request": {"phase": "none"}, "overflow": {}}, {"type": "clear"})
    with pytest.raises(WireError, match=r"event.type"):
        gen.wire.step_wire(gen.spec.initial, {"type": ["clear"]})


TEXTS: list[Any] = ["  padded  ", "   ", "", "follow up", "\u00a0x\n", None, 5, ["x"]]
ABSENT, KEEP = object(), object()  # the key left out; the record as the abstraction has it


def with_prompt(value: Any, prompt: Any) -> Any:
    """``value`` (a wire record) with its optional ``prompt`` set to ``prompt``."""
    if prompt is KEEP:
        return value
    out = dict(value)
    out.pop("prompt", None)
    if prompt is not ABSENT:
        out["prompt"] = prompt
    return out


@pytest.mark.parametrize("gen", [g for g in GENS if g.spec.id == "reset-control@6bcd8b5"])
def test_optional_texts_of_any_spelling_give_the_typed_answer(gen: Any) -> None:
    """The follow-up prompt (an optional text) in the close-out request and in the close_out
    event: padded, blank, empty, absent, null or not a string, decided directly exactly as the
    typed path decides (trimmed, blank as absent) or refused with its error."""
    states, events = CASES[gen.spec.id]
    prompts = [KEEP, ABSENT, *TEXTS]
    closing = [s for s in states if s["request"]["phase"] == "close-out"]
    others = [s for s in states if s["request"]["phase"] != "close-out"][:6]
    assert closing and any(e["type"] == "close_out" for e in events)
    outcomes = set()
    for state in [*closing, *others]:
        for sp in prompts if state in closing else [KEEP]:
            s = {**state, "request": with_prompt(state["request"], sp)}
            for event in events:
                for ep in prompts if event["type"] == "close_out" else [KEEP]:
                    e = with_prompt(event, ep)
                    want = typed(gen, s, e)
                    assert direct(gen, s, e) == want, (s, e)
                    assert reduced(gen, s, e) == want[:3]
                    outcomes.add(want[0])
    assert outcomes == {"ok", "error"}
