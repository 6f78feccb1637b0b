"""The replayable bundle: ITF traces that load back, Mermaid with the failing step in red."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.checks.conformance.check import Problem
from pi_context.checks.conformance.report import load_itf, to_itf, to_mermaid
from pi_context.checks.conformance.traces import Trace, TraceStep
from pi_context.spec import interpret
from pi_context.spec.model import Spec

CLOSE_AUTO = {"type": "close_out", "windowId": "pcw:a", "source": "automatic"}
TOOL = {"type": "tool_request", "windowId": "pcw:a"}


def failing_trace(spec: Spec) -> Trace:
    """close_out then tool_request, the second answered with the wrong effect."""
    state = interpret.initial_state(spec)
    trace = Trace(spec.id, dict(state), source="unit test")
    first = interpret.step(spec, state, CLOSE_AUTO)
    trace.steps.append(TraceStep(state, CLOSE_AUTO, first, first.state, first.effect, []))
    second = interpret.step(spec, first.state, TOOL)
    wrong = Problem("mismatch", f"effect 'already-pending', spec: {second.effect!r}")
    trace.steps.append(
        TraceStep(first.state, TOOL, second, second.state, "already-pending", [], (wrong,))
    )
    return trace


def test_itf_has_every_variable_in_every_state(spec26: Spec) -> None:
    itf = to_itf(spec26, failing_trace(spec26), "my-impl --serve")
    meta = itf["#meta"]
    assert meta["format"] == "ITF" and meta["spec"] == "reset-control@0.26"
    assert meta["implementation"] == "my-impl --serve"
    assert itf["vars"] == ["request", "overflow", "mbt::actionTaken", "event", "effect", "row"]
    assert [s["#meta"]["index"] for s in itf["states"]] == [0, 1, 2]
    for state in itf["states"]:
        assert set(itf["vars"]) <= set(state)
    assert [s["mbt::actionTaken"] for s in itf["states"]] == ["init", "close_out", "tool_request"]
    last = itf["states"][2]
    assert last["row"] == "tool_request.record" and last["effect"] == "close-out-armed"
    assert last["request"] == {"phase": "tool-requested", "windowId": "pcw:a"}
    assert last["#meta"]["implementation"]["effect"] == "already-pending"
    assert last["#meta"]["problems"][0]["kind"] == "mismatch"
    assert "problems" not in itf["states"][1]["#meta"]
    json.dumps(itf)  # plain JSON all the way down


def test_itf_loads_back_for_replay(spec26: Spec, tmp_path: Path) -> None:
    path = tmp_path / "t.itf.json"
    path.write_text(json.dumps(to_itf(spec26, failing_trace(spec26), "x")))
    spec_id, initial, events = load_itf(path)
    assert spec_id == "reset-control@0.26"
    assert initial == interpret.initial_state(spec26)
    assert events == [CLOSE_AUTO, TOOL]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2", "cannot read an ITF trace"),
        ('{"vars": []}', "not a pi-context ITF trace (missing '#meta')"),
        ('{"#meta": {"spec": 3}, "vars": [], "states": [{}]}', "#meta.spec must be a spec id"),
    ],
)
def test_bad_itf_files_are_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.itf.json"
    path.write_text(content)
    with pytest.raises(ValueError) as err:
        load_itf(path)
    assert message in str(err.value)


def test_mermaid_draws_the_path_and_the_failing_step(spec26: Spec) -> None:
    text = to_mermaid(spec26, failing_trace(spec26))
    lines = text.splitlines()
    assert lines[1] == "flowchart LR"
    assert '  s0(["0: none / idle"])' in lines
    assert '  s1["1: close-out(pcw:a, automatic) / idle"]' in lines
    assert '  want2["2, spec: tool-requested(pcw:a) / idle"]' in lines
    assert '  got2["2, implementation: tool-requested(pcw:a) / idle / already-pending"]' in lines
    assert '  s1 -.->|"implementation: mismatch"| got2' in lines
    assert "  class got2 fail" in lines and "  class want2 want" in lines
    assert "  class s0,s1 path" in lines
    # three links: the path, the spec's step and the failing one, which alone is red
    assert "  linkStyle 2 stroke:#c53030,stroke-width:3px" in lines
    assert "  linkStyle 1 stroke:#2b6cb0,stroke-width:3px" in lines


def test_mermaid_escapes_quotes(spec26: Spec) -> None:
    trace = failing_trace(spec26)
    event: dict[str, Any] = {"type": "tool_request", "windowId": 'say "hi"'}
    step = interpret.step(spec26, trace.initial, event)
    trace.steps[0] = TraceStep(trace.initial, event, step, step.state, step.effect, [])
    text = to_mermaid(spec26, trace)
    assert '"hi"' not in text and "#quot;hi#quot;" in text
