"""Protocol messages: encoding, and every malformed message named, never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.checks.conformance.protocol import (
    ErrorReply,
    HelloReply,
    ProtocolError,
    Request,
    StepReply,
    encode,
    parse_hello_reply,
    parse_request,
    parse_step_reply,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def test_encode_is_one_compact_utf8_line() -> None:
    line = encode({"op": "step", "spec": "s", "state": {"w": "Fenêtre 🎉"}, "event": {}})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert "Fenêtre 🎉".encode() in line
    assert json.loads(line) == {
        "op": "step",
        "spec": "s",
        "state": {"w": "Fenêtre 🎉"},
        "event": {},
    }


def test_requests_parse() -> None:
    assert parse_request(b'{"op":"hello"}\n') == Request("hello")
    got = parse_request(b'{"op":"step","spec":"x","state":{"a":1},"event":{"type":"t"}}')
    assert got == Request("step", "x", {"a": 1}, {"type": "t"})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"", "request is an empty line"),
        (b"   \r\n", "request is an empty line"),
        (b"\xff\xfe", "request is not UTF-8 (byte 0)"),
        (b"nope", "request is not JSON"),
        (b"NaN", "request is not JSON"),
        (b"[1,2]", "request must be a JSON object, got [1,2]"),
        (b"{}", "request has no 'op' (expected one of: hello, step)"),
        (b'{"op":"bye"}', 'unknown op "bye" (expected one of: hello, step)'),
        (b'{"op":"step","state":{},"event":{}}', "step request has no 'spec'"),
        (b'{"op":"step","spec":"s","event":{}}', "step request has no 'state'"),
        (b'{"op":"step","spec":"s","state":{}}', "step request has no 'event'"),
        (b'{"op":"step","spec":7,"state":{},"event":{}}', "step request 'spec' must be a string"),
    ],
)
def test_bad_requests_are_named(line: bytes, message: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_request(line)
    assert message in str(err.value)


@given(st.binary(max_size=60) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_line_parses_or_is_a_protocol_error(line: bytes) -> None:
    try:
        request = parse_request(line)
    except ProtocolError as err:
        assert str(err)
    else:
        assert request.op in ("hello", "step")


def test_replies_parse() -> None:
    assert parse_hello_reply(b'{"ok":true,"protocol":1,"specs":["a"]}') == HelloReply(1, ("a",))
    assert parse_hello_reply(b'{"ok":false,"error":"no"}') == ErrorReply("no")
    step = parse_step_reply(b'{"ok":true,"state":{"s":1},"effect":"none"}')
    assert step == StepReply({"s": 1}, "none", None)
    step = parse_step_reply(b'{"ok":true,"state":1,"effect":2,"consulted":["q"]}')
    assert step == StepReply(1, 2, ["q"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"protocol":1,"specs":[]}', "hello reply has no boolean 'ok'"),
        (b'{"ok":true,"specs":[]}', "hello reply has no integer 'protocol'"),
        (b'{"ok":true,"protocol":true,"specs":[]}', "hello reply has no integer 'protocol'"),
        (b'{"ok":true,"protocol":1,"specs":"a"}', "'specs' must be a list of spec id strings"),
        (b'{"ok":false}', "hello reply says ok:false without an 'error' string"),
    ],
)
def test_bad_hello_replies_are_named(line: bytes, message: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_hello_reply(line)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"<html>", "step reply is not JSON"),
        (b'{"ok":true,"effect":"none"}', "step reply has ok:true but no 'state'"),
        (b'{"ok":true,"state":{}}', "step reply has ok:true but no 'effect'"),
        (b'{"ok":"yes"}', "step reply has no boolean 'ok'"),
    ],
)
def test_bad_step_replies_are_named(line: bytes, message: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_step_reply(line)
    assert message in str(err.value)


def test_spliced_step_lines_are_the_bytes_encode_writes() -> None:
    from pi_context.checks.conformance.cases import exhaustive_cases, step_lines
    from pi_context.checks.conformance.protocol import encode, step_request
    from pi_context.spec.abstraction import all_events, all_states
    from pi_context.statemachine.reset_control import committed_specs

    for spec in committed_specs():
        cases = exhaustive_cases(spec)
        lines = step_lines(spec, all_states(spec), all_events(spec))
        assert lines == [encode(step_request(spec.id, s, e)) for s, e in cases]
