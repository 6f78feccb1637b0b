"""Shrinking a failing trace: steps removed and values simplified while it still fails at
the same row; the result has no removable step."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.checks.conformance.check import Problem
from pi_context.checks.conformance.shrink import shrink
from pi_context.checks.conformance.traces import Trace, TraceStep
from pi_context.checks.stateful import event_strategy
from pi_context.spec import interpret
from pi_context.spec.interpret import Wire
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import resolve_spec

UPGRADE = "close_out.upgrade-manual"
SPEC26 = functools.cache(lambda: resolve_spec("reset-control@0.26"))


def flawed_replay(spec: Spec, calls: list[int]) -> Any:
    """An 'implementation' that is the spec except at the manual-upgrade row."""

    def replay(events: list[Wire]) -> Trace:
        calls.append(len(events))
        state = interpret.initial_state(spec)
        trace = Trace(spec.id, dict(state), source="test")
        for event in events:
            want = interpret.step(spec, state, event)
            problems = (Problem("mismatch", "kept automatic"),) if want.row == UPGRADE else ()
            trace.steps.append(TraceStep(state, event, want, want.state, want.effect, [], problems))
            if problems:
                break
            state = want.state
        return trace

    return replay


def noisy(window: str) -> list[Wire]:
    facts = {
        "windowId": "other",
        "aborted": False,
        "overflow": True,
        "failed": True,
        "enabled": True,
        "queued": True,
        "automaticResetEnabled": False,
        "hardReserveDue": False,
    }
    return [
        {"type": "tool_request", "windowId": "x"},
        {"type": "clear"},
        {"type": "turn_end", "facts": facts},
        {"type": "close_out", "windowId": window, "source": "automatic"},
        {"type": "abort"},
        {"type": "close_out", "windowId": window, "source": "automatic"},
        {"type": "settled"},
        {"type": "tool_request", "windowId": "y"},
        {"type": "close_out", "windowId": window, "source": "automatic"},
        {"type": "close_out", "windowId": window, "source": "manual"},
        {"type": "clear"},
    ]


def test_a_long_trace_shrinks_to_the_two_steps_that_matter(spec26: Spec) -> None:
    calls: list[int] = []
    replay = flawed_replay(spec26, calls)
    found = replay(noisy("pcw:Ω-7"))
    assert len(found) == 10 and found.failing is not None
    small = shrink(spec26, found, replay, seconds=30)
    assert [s.event for s in small.steps] == [
        {"type": "close_out", "windowId": "w1", "source": "automatic"},
        {"type": "close_out", "windowId": "w1", "source": "manual"},
    ]
    assert small.failing is not None and small.failing.want.row == UPGRADE
    assert len(calls) < 200  # bounded work


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_shrunk_traces_still_fail_and_have_no_removable_step(data: Any) -> None:
    spec26 = SPEC26()
    events = [
        data.draw(event_strategy(event))
        for event in data.draw(st.lists(st.sampled_from(spec26.events), max_size=12))
    ]
    window = data.draw(st.text(min_size=1, max_size=4))
    events += [
        {"type": "clear"},
        {"type": "close_out", "windowId": window, "source": "automatic"},
        {"type": "close_out", "windowId": window, "source": "manual"},
    ]
    replay = flawed_replay(spec26, [])
    found = replay(events)
    assert found.failing is not None
    small = shrink(spec26, found, replay, seconds=30)
    assert small.failing is not None and small.failing.want.row == UPGRADE
    assert len(small) <= len(found)
    kept = [s.event for s in small.steps]
    for i in range(len(kept) - 1):
        shorter = replay(kept[:i] + kept[i + 1 :])
        assert shorter.failing is None or shorter.failing.want.row != UPGRADE
