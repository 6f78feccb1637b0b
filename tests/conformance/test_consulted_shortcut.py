"""The runner's shortcut for replies that differ from the reference encoding in their
``consulted`` list alone (adapters that list the plain facts they read too): it must pass
exactly the replies the full judge passes, with the list the reply gave, and send anything
else to the judge."""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.checks.conformance.cases import ExhaustivePlan
from pi_context.checks.conformance.check import ConsultedShortcut
from pi_context.checks.conformance.traces import judge
from pi_context.codegen.fresh import reset_control
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl, resolve_spec

# the newest spec (it carries a follow-up prompt after the list), one without lazy order
# constraints of that kind, and the handoff family
SPECS = ("reset-control@6bcd8b5", "reset-control@0.26", "handoff@0.6-auto")


@cache
def _plan(spec_id: str) -> tuple[Spec, ResetControl, ExhaustivePlan]:
    spec = resolve_spec(spec_id)
    return spec, reset_control(spec), ExhaustivePlan.of(spec)


def _with_list(expected: bytes, names: bytes) -> bytes:
    """``expected`` with its consulted array replaced by ``names`` (raw bytes)."""
    start = expected.index(b',"consulted":') + len(b',"consulted":')
    end = expected.index(b"]", start) + 1
    return expected[:start] + names + expected[end:]


@st.composite
def _cases(draw: st.DrawFn) -> tuple[str, int, list[str]]:
    spec_id = draw(st.sampled_from(SPECS))
    spec, _gen, plan = _plan(spec_id)
    i = draw(st.integers(0, len(plan) - 1))
    _state, event = plan.case(i)
    decl = spec.event(str(event["type"]))
    assert decl is not None
    facts = [f.name for f in decl.facts]
    pool = [*facts, *facts, "notAFact", "windowId", "queued"]
    names = draw(st.lists(st.sampled_from(pool), max_size=8))
    if draw(st.booleans()):  # the spec's own reads, with plain facts put in anywhere
        names = [n for n in names if (f := decl.fact(n)) is None or not f.lazy]
        for name in plan.want(i).consulted:
            names.insert(draw(st.integers(0, len(names))), name)
    return spec_id, i, names


@settings(max_examples=400, deadline=None)
@given(_cases())
def test_the_shortcut_passes_exactly_what_the_judge_passes(
    case: tuple[str, int, list[str]],
) -> None:
    spec_id, i, names = case
    spec, gen, plan = _plan(spec_id)
    expected = plan.answers.expected()[i]
    state, event = plan.case(i)
    raw = _with_list(expected, json.dumps(names, separators=(",", ":")).encode())
    verdict = judge(spec, gen, state, event, plan.want(i), raw)
    passed = ConsultedShortcut(spec).passes(raw, expected, str(event["type"]))
    if verdict.ok:
        assert passed == tuple(names)
    else:
        assert passed is None


@pytest.mark.parametrize("spec_id", SPECS)
def test_eager_reads_pass_and_a_wrong_lazy_read_does_not(spec_id: str) -> None:
    """Every case, answered with every plain fact of its event read first: each passes; with
    one lazy fact the spec does not read on that branch added, each is sent to the judge."""
    spec, _gen, plan = _plan(spec_id)
    shortcut = ConsultedShortcut(spec)
    expected = plan.answers.expected()
    wrong = 0
    for i in range(0, len(plan), 7):
        _state, event = plan.case(i)
        decl = spec.event(str(event["type"]))
        assert decl is not None
        want = plan.want(i).consulted
        plain = [f.name for f in decl.facts if not f.lazy]
        raw = _with_list(expected[i], json.dumps([*plain, *want]).replace(" ", "").encode())
        assert shortcut.passes(raw, expected[i], decl.name) == (*plain, *want)
        unread = [f.name for f in decl.facts if f.lazy and f.name not in want]
        if unread:
            raw = _with_list(expected[i], json.dumps([*want, unread[0]]).replace(" ", "").encode())
            assert shortcut.passes(raw, expected[i], decl.name) is None
            wrong += 1
    assert wrong > 0


@pytest.mark.parametrize(
    "names",
    [
        b'[],"state":{"request":{"phase":"none"},"overflow":"spent"}',  # a second state key
        b'[],"effect":"commit-boundary"',  # a second effect
        b'[],"prompt":"go on"',  # a prompt the spec does not carry
        b'["windowId" ]',  # not the compact spelling: judged in full
        b'["window\\u0049d"]',  # an escape: judged in full
        b'["windowId"],["aborted"]',
        b"[1]",
        b"",
        b"[",
    ],
)
def test_anything_but_a_plain_list_of_names_goes_to_the_judge(names: bytes) -> None:
    spec, _gen, plan = _plan("reset-control@0.26")
    expected = plan.answers.expected()
    shortcut = ConsultedShortcut(spec)
    checked = 0
    for i in range(len(plan)):
        _state, event = plan.case(i)
        if event["type"] == "turn_end" and b'"consulted":[]' in expected[i]:
            assert shortcut.passes(_with_list(expected[i], names), expected[i], "turn_end") is None
            checked += 1
    assert checked > 0


def test_a_reply_with_another_state_or_effect_goes_to_the_judge() -> None:
    spec, _gen, plan = _plan("reset-control@0.26")
    expected = plan.answers.expected()
    shortcut = ConsultedShortcut(spec)
    i = next(n for n in range(len(plan)) if expected[n] != expected[0])
    _state, event = plan.case(0)
    assert shortcut.passes(expected[0], expected[0], str(event["type"])) is not None
    assert shortcut.passes(expected[i], expected[0], str(event["type"])) is None
    assert shortcut.passes(expected[0][:-1], expected[0], str(event["type"])) is None
    assert shortcut.passes(expected[0] + b" ", expected[0], str(event["type"])) is None
