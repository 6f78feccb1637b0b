"""The reference server: correct steps, named errors, one reply per line, and it keeps going."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.checks.conformance.protocol import encode, step_request
from pi_context.checks.conformance.server import Server
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.model import Spec

V26 = "reset-control@0.26"
NONE_IDLE = {"request": {"phase": "none"}, "overflow": "idle"}


@pytest.fixture(scope="module")
def server(spec25: Spec, spec26: Spec) -> Server:
    return Server([spec25, spec26])


def ask(server: Server, message: Any) -> dict[str, Any]:
    line = message if isinstance(message, bytes) else json.dumps(message).encode()
    return server.handle(line)


def test_hello_lists_the_served_specs(server: Server) -> None:
    assert ask(server, {"op": "hello"}) == {
        "ok": True,
        "protocol": 1,
        "specs": ["reset-control@0.25", "reset-control@0.26"],
    }


def test_a_manual_close_out_arms_and_reports_no_reads(server: Server) -> None:
    event = {"type": "close_out", "windowId": "pcw:abc:root", "source": "manual"}
    assert ask(server, step_request(V26, NONE_IDLE, event)) == {
        "ok": True,
        "state": {
            "request": {"phase": "close-out", "windowId": "pcw:abc:root", "source": "manual"},
            "overflow": "idle",
        },
        "effect": "close-out-armed",
        "consulted": [],
    }


def test_a_queued_settle_reports_only_the_queued_read(server: Server) -> None:
    pending = {"request": {"phase": "none"}, "overflow": "pending"}
    facts = {
        "windowId": "w",
        "queued": True,
        "enabled": True,
        "automaticResetEnabled": True,
        "aborted": False,
        "failed": False,
    }
    reply = ask(server, step_request(V26, pending, {"type": "before_settle", "facts": facts}))
    assert reply == {"ok": True, "state": pending, "effect": "none", "consulted": ["queued"]}


def test_every_case_of_both_specs_matches_the_interpreter(
    server: Server, spec25: Spec, spec26: Spec
) -> None:
    for spec in (spec25, spec26):
        for state in all_states(spec):
            for event in all_events(spec):
                want = interpret.step(spec, state, event)
                got = ask(server, step_request(spec.id, state, event))
                assert got == {
                    "ok": True,
                    "state": want.state,
                    "effect": want.effect,
                    "consulted": list(want.consulted),
                }, (state, event)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (b"{oops", "request is not JSON"),
        ({"op": "step", "spec": "reset-control@9", "state": {}, "event": {}}, "unknown spec"),
        (
            {"op": "step", "spec": V26, "state": {"request": {"phase": "close-out"}}, "event": {}},
            "reset-control@0.26: state: missing 'overflow'",
        ),
        (
            {
                "op": "step",
                "spec": V26,
                "state": {"request": {"phase": "close-out"}, "overflow": "idle"},
                "event": {"type": "clear"},
            },
            "reset-control@0.26: state.request: missing 'windowId'",
        ),
        (
            {"op": "step", "spec": V26, "state": NONE_IDLE, "event": {"type": "wipe"}},
            "reset-control@0.26: event.type: expected one of 'close_out'",
        ),
        (
            {
                "op": "step",
                "spec": V26,
                "state": NONE_IDLE,
                "event": {"type": "tool_request", "windowId": 3},
            },
            "reset-control@0.26: event.windowId: expected a string id, got 3",
        ),
        (
            {
                "op": "step",
                "spec": V26,
                "state": {"request": {"phase": "none"}, "overflow": "overflowing"},
                "event": {"type": "clear"},
            },
            "state.overflow: expected one of 'idle', 'pending', 'pending-spent', 'spent'",
        ),
    ],
)
def test_bad_requests_get_a_named_error(server: Server, message: Any, error: str) -> None:
    reply = ask(server, message)
    assert reply["ok"] is False
    assert error in reply["error"]


# too_slow: the recursive strategies' draws take a second on a loaded machine (2 shared cores)
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["reset-control@0.25", V26, "nope"]),
    st.recursive(
        st.none() | st.booleans() | st.text(max_size=5) | st.sampled_from(["none", "idle"]),
        lambda inner: st.dictionaries(
            st.sampled_from(["request", "overflow", "phase", "windowId", "type", "facts"]),
            inner,
            max_size=4,
        ),
        max_leaves=8,
    ),
    st.recursive(
        st.none() | st.booleans() | st.sampled_from(["clear", "close_out", "turn_end", "w"]),
        lambda inner: st.dictionaries(
            st.sampled_from(["type", "windowId", "source", "facts", "queued"]), inner, max_size=4
        ),
        max_leaves=8,
    ),
)
def test_arbitrary_json_never_breaks_the_server(
    server: Server, spec: str, state: Any, event: Any
) -> None:
    reply = ask(server, step_request(spec, state, event))
    assert isinstance(reply["ok"], bool)
    if not reply["ok"]:
        assert reply["error"]


def test_serve_answers_every_line_in_order_and_keeps_going(server: Server) -> None:
    lines = [
        b'{"op":"hello"}',
        b"garbage",
        b"",
        encode(step_request(V26, NONE_IDLE, {"type": "clear"})).rstrip(b"\n"),
        b'{"op":"hello"}',  # the last line has no newline: still a request
    ]
    out = io.BytesIO()
    server.serve(io.BufferedReader(io.BytesIO(b"\n".join(lines))), out)  # type: ignore[arg-type]
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["ok"] for r in replies] == [True, False, False, True, True]
    assert replies[3]["state"] == NONE_IDLE


def test_the_serve_command_survives_bad_input_and_exits_at_end_of_input() -> None:
    requests = b'{"op":"hello"}\n\xff\n{"op":"step","spec":"x","state":1,"event":2}\n'
    requests += encode(step_request(V26, NONE_IDLE, {"type": "abort"}))
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "serve"],
        input=requests,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["ok"] for r in replies] == [True, False, False, True]
    assert "not UTF-8" in replies[1]["error"]
    assert "unknown spec 'x'" in replies[2]["error"]
    assert replies[3]["effect"] == "none"
    assert b"Traceback" not in done.stderr


def test_serve_rejects_an_unknown_spec_on_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "serve", "--spec", "reset-control@9.9"],
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert b"unknown spec 'reset-control@9.9'" in done.stderr
    assert b"Traceback" not in done.stderr
