"""The exhaustive set's answers kept per spec, the fast path they allow, and checking specs
through several processes at once: each must leave every verdict as it was."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.checks.conformance import answers as answers_module
from pi_context.checks.conformance.answers import Answers, answers, reply_line, work_out
from pi_context.checks.conformance.cases import ExhaustivePlan
from pi_context.checks.conformance.protocol import (
    encode,
    encode_step_reply,
    encode_step_request,
    step_request,
)
from pi_context.checks.conformance.results import ConformanceReport, SpecResult
from pi_context.checks.conformance.runner import run_conformance
from pi_context.checks.conformance.stateful import random_events, random_swarm
from pi_context.checks.conformance.traces import judge
from pi_context.codegen.fresh import reset_control
from pi_context.spec import interpret, load
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs
from pi_context.support import cache
from pi_context.support.cache_dir import cache_root


def _same(a: Answers, b: Answers) -> bool:
    return a.replies == b.replies and a.rows == b.rows and list(a.index) == list(b.index)


@pytest.mark.parametrize("spec", committed_specs(), ids=lambda s: s.id)
def test_the_kept_answers_are_the_interpreters_and_pass_the_judge(spec: Spec) -> None:
    """For every case of every committed spec: the expected line is the encoding of the
    interpreter's answer, its row is the row that answers, and the full judge passes it —
    so a reply equal to it is judged exactly as the judge would."""
    plan = ExhaustivePlan.of(spec)  # from the cache when a run before kept them
    fresh = work_out(spec, plan.states, plan.events)
    assert _same(plan.answers, fresh)
    gen = reset_control(spec)
    expected = plan.answers.expected()
    judged: set[int] = set()
    for i in range(len(plan)):
        want = plan.want(i)
        k = plan.answers.index[i]
        assert expected[i] == reply_line(want) and plan.answers.rows[k] == want.row
        if k not in judged:  # each distinct line once through the full judge
            judged.add(k)
            state, event = plan.case(i)
            step = judge(spec, gen, state, event, want, expected[i])
            assert step.ok, step.describe()
    assert judged == set(range(len(plan.answers.replies)))


@pytest.fixture
def spec_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Spec:
    """reset-control@0.25 loaded from a copy of its file (the cache entry's source), with a
    cache of this test's own."""
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    source = Path(next(s for s in committed_specs() if s.id == "reset-control@0.25").path)
    copy = tmp_path / source.name
    copy.write_bytes(source.read_bytes())
    return load(copy, analyse=False)


def _kept(spec: Spec) -> Path:
    found = list((cache_root() / "conformance").glob("*.bin"))
    assert len(found) == 1, found
    return found[0]


def test_answers_are_kept_and_used_only_while_whole_and_for_the_same_spec(
    spec_copy: Spec, monkeypatch: pytest.MonkeyPatch
) -> None:
    states, events = all_states(spec_copy), all_events(spec_copy)
    first = answers(spec_copy, states, events)
    entry = _kept(spec_copy)
    assert [e.state for e in cache.entries() if e.kind == "conformance"] == ["live"]

    calls: list[int] = []
    real = answers_module.work_out

    def counted(*args: Any) -> Answers:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(answers_module, "work_out", counted)
    assert _same(answers(spec_copy, states, events), first) and calls == []  # from the cache

    body = bytearray(entry.read_bytes())
    body[-4] ^= 0x01  # the low bit of the last case's index (another answer that exists)
    entry.write_bytes(bytes(body))
    assert _same(answers(spec_copy, states, events), first) and len(calls) == 1  # worked out

    entry.write_bytes(entry.read_bytes()[:-100])  # torn
    assert _same(answers(spec_copy, states, events), first) and len(calls) == 2

    other = dataclasses.replace(spec_copy, sha256="0" * 64)  # another spec at the same path
    answers(other, states, events)
    assert len(calls) == 3
    assert _same(answers(spec_copy, states, events), first) and len(calls) == 4

    Path(spec_copy.path).unlink()  # the entry does not outlive its spec file
    assert {e.state for e in cache.entries() if e.kind == "conformance"} == {"source gone"}


def test_a_cache_that_cannot_be_used_only_costs_the_work(
    spec_copy: Spec, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    foreign = tmp_path / "notes-of-the-user"
    foreign.mkdir()
    (foreign / "keep.md").write_text("mine")
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(foreign))
    states, events = all_states(spec_copy), all_events(spec_copy)
    found = answers(spec_copy, states, events)
    assert _same(found, work_out(spec_copy, states, events))
    assert sorted(p.name for p in foreign.iterdir()) == ["keep.md"]


_TEXT = st.text(st.characters(codec=None), max_size=8)  # surrogates included
_VALUE = st.one_of(_TEXT, st.booleans())
_STATE = st.dictionaries(
    _TEXT, st.one_of(_VALUE, st.dictionaries(_TEXT, _VALUE, max_size=3)), max_size=4
)


@given(_STATE, _TEXT, st.lists(_TEXT, max_size=3))
def test_a_step_reply_is_written_as_encode_writes_it(
    state: dict[str, Any], effect: str, consulted: list[str]
) -> None:
    message = {"ok": True, "state": state, "effect": effect, "consulted": consulted}
    assert encode_step_reply(state, effect, consulted) == encode(message)


@given(_TEXT, _STATE, _STATE)
def test_a_step_request_is_written_as_encode_writes_it(
    spec: str, state: dict[str, Any], event: dict[str, Any]
) -> None:
    assert encode_step_request(spec, state, event) == encode(step_request(spec, state, event))
    with_number = {**event, "facts": {"n": 1e16}}
    assert encode_step_request(spec, state, with_number) == encode(
        step_request(spec, state, with_number)
    )


@pytest.mark.parametrize(
    "state", [{"n": 1e16}, {"n": 3}, {"v": {"n": 0.1}}, {"v": {"n": 2**70}}, {"x": [1.5]}]
)
def test_a_state_with_numbers_is_written_by_encode(state: dict[str, Any]) -> None:
    message = {"ok": True, "state": state, "effect": "none", "consulted": []}
    assert encode_step_reply(state, "none", []) == encode(message)
    with pytest.raises(ValueError):
        encode_step_reply({"n": float("nan")}, "none", [])


# --- the same verdicts, whichever way the replies are judged or the specs are shared out ---


def _tallies(report: ConformanceReport) -> dict[str, Any]:
    def of(result: SpecResult) -> Any:
        return (
            result.ok,
            result.exhaustive_cases,
            result.exhaustive_checked,
            {row: (t.checked, t.failed) for row, t in result.rows.items() if t.checked},
            {name: (t.checked, t.failed) for name, t in result.events.items() if t.checked},
            sorted(result.failures),
            result.problems,
        )

    return {r.spec.id: of(r) for r in report.specs}


def test_a_conforming_reply_in_another_spelling_is_judged_in_full_and_passes(
    broken_cmd: Callable[[str], str], serve_cmd: str
) -> None:
    specs = [s for s in committed_specs() if s.id in ("reset-control@0.25", "handoff@0.6")]
    spaced = run_conformance(broken_cmd("spaced"), specs, examples=0, timeout=30)
    reference = run_conformance(serve_cmd, specs, examples=0, timeout=30)
    assert spaced.ok, spaced.reasons
    assert _tallies(spaced) == _tallies(reference)
    spec26 = [s for s in committed_specs() if s.id == "reset-control@0.26"]
    wrong = run_conformance(broken_cmd("wrong"), spec26, examples=0, timeout=30)
    spaced_wrong = run_conformance(broken_cmd("spaced-wrong"), spec26, examples=0, timeout=30)
    assert _tallies(spaced_wrong) == _tallies(wrong)
    assert _tallies(wrong)["reset-control@0.26"][5] == ["close_out.upgrade-manual"]
    # one wrong reply among replies of another spelling to the same answer: judged on its own
    once = run_conformance(broken_cmd("spaced-wrong-at 5000"), spec26, examples=0, timeout=30)
    (result,) = once.specs
    assert sum(t.failed for t in result.rows.values()) == 1
    (failing,) = [step for steps in result.failures.values() for step in steps]
    assert failing.kind == "ill-typed" and "not-a-fact" in failing.describe()


def test_specs_checked_through_two_processes_get_the_verdicts_of_one(
    broken_cmd: Callable[[str], str], serve_cmd: str
) -> None:
    specs = [
        s
        for s in committed_specs()
        if s.id in ("reset-control@0.25", "reset-control@0.26", "handoff@0.6")
    ]
    for command in (serve_cmd, broken_cmd("wrong")):
        one = run_conformance(command, specs, examples=5, seed=3, timeout=30, jobs=1)
        two = run_conformance(command, specs, examples=5, seed=3, timeout=30, jobs=2)
        assert [r.spec.id for r in two.specs] == [s.id for s in specs]
        assert _tallies(two) == _tallies(one)
    assert not two.ok and _tallies(two)["reset-control@0.26"][5] == ["close_out.upgrade-manual"]


@pytest.mark.parametrize("spec", committed_specs(), ids=lambda s: s.id)
def test_random_trace_answers_in_the_reference_encoding_pass_the_judge(spec: Spec) -> None:
    """The random traces' fast path: along traces with arbitrary window ids, the reference
    encoding of the spec's answer is what the judge passes."""
    gen = reset_control(spec)
    names = [e.name for e in spec.events]
    for seed in range(40):
        rng = random.Random(seed)
        state = interpret.initial_state(spec)
        for event in random_events(spec, rng, random_swarm(names, rng), 30):
            want = interpret.step(spec, state, event)
            line = encode_step_reply(want.state, want.effect, list(want.consulted))[:-1]
            step = judge(spec, gen, state, event, want, line)
            assert step.ok, step.describe()
            state = want.state


def test_a_deferred_handle_reads_as_the_handle(spec_copy: Spec) -> None:
    from pi_context.checks.conformance.runner import Deferred

    for view in (False, True):
        deferred = Deferred(spec_copy, view)
        assert "wire" not in vars(deferred)  # nothing imported yet
        assert deferred.spec == (spec_copy.reducer_view() if view else spec_copy)
        real = reset_control(spec_copy)
        assert deferred.wire is real.wire and deferred.effects == real.effects
        assert deferred.spec == (spec_copy.reducer_view() if view else spec_copy)
        with pytest.raises(AttributeError):
            _ = deferred.no_such_attribute
