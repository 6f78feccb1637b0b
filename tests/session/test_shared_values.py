"""Loading shares repeated strings between entries (memory) without changing any value or byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode, encode_line, parse_line
from pi_context.bindings.session.store import RawFile, decode_value, parse_raw

from .test_corruption import _valid_session


def _values(raw: RawFile) -> list[Any]:
    """Every value of a parse, the lines it kept undecoded decoded as a session reads them."""
    return [decode_value(raw, index) for index in range(len(raw.values))]


def _written(directory: Path, seed: int, ops: int) -> Path:
    path = _valid_session(directory, seed=seed, ops=ops).path
    assert path is not None
    return path


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), ops=st.integers(1, 40))
def test_sharing_changes_no_value_and_no_byte(tmp_path: Path, seed: int, ops: int) -> None:
    path = _written(tmp_path / str(seed), seed, ops)
    data = path.read_bytes()
    plain = [parse_line(line) for line in data.splitlines(keepends=True)]
    raw = parse_raw(data)
    assert _values(raw) == plain
    assert list(raw.lines) == list(range(1, len(plain) + 1))
    assert b"".join(encode_line(v) for v in raw.values) == data
    session = Session.open(path, readonly=True)
    assert [encode(e) for e in session.entries] == [encode(v) for v in plain[1:]]


def test_repeated_kinds_roles_and_parent_ids_are_one_object_each() -> None:
    def message(entry_id: str, parent: str | None, role: str) -> dict[str, Any]:
        body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": entry_id}]}
        if role == "assistant":
            body.update(
                api="anthropic-messages", provider="anthropic", model="m", stopReason="stop"
            )
        return {"type": "message", "id": entry_id, "parentId": parent, "message": body}

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    rows = [header, message("a1", None, "user"), message("b2", "a1", "assistant")]
    rows += [message("c3", "b2", "user"), message("d4", "c3", "assistant")]
    raw = parse_raw(b"".join(encode_line(r) for r in rows))
    assert all(type(line) is bytes for line in raw.values[1:]), "kept as lines until read"
    assert raw.kinds[1] is raw.kinds[3]
    entries = _values(raw)[1:]
    assert entries[0]["type"] is entries[3]["type"]
    assert entries[0]["message"]["role"] is entries[2]["message"]["role"]
    assert entries[1]["message"]["model"] is entries[3]["message"]["model"]
    first_block, last_block = (
        entries[0]["message"]["content"][0],
        entries[3]["message"]["content"][0],
    )
    assert first_block["type"] is last_block["type"]


def test_hostile_values_under_shared_keys_load_unchanged() -> None:
    """Non-string kinds, huge model names and ids that are objects: shared or not, every value
    and byte stays as written, and no object is shared between two entries by mistake."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    rows: list[Any] = [
        header,
        {"type": 7, "id": "a", "parentId": None, "message": {"role": ["x"], "model": "m" * 10**5}},
        {"type": "message", "id": {"k": 1}, "parentId": "a", "message": {"content": [1, None]}},
        {"type": "message", "id": "c", "parentId": {"k": 1}, "message": {"model": "m" * 10**5}},
        {"type": {"n": 1}, "id": "d", "parentId": "c", "customType": 5, "thinkingLevel": None},
    ]
    data = b"".join(encode_line(r) for r in rows)
    raw = parse_raw(data)
    assert _values(raw) == [json.loads(line) for line in data.splitlines()]
    assert b"".join(encode_line(v) for v in raw.values) == data
    assert raw.values[3]["parentId"] is not raw.values[2]["id"], "objects are never shared"


def test_lines_the_fast_decoder_refuses_share_their_keys_too() -> None:
    """A lone surrogate escape sends a line through Python's ``json``, which makes fresh key
    strings per call; the loaded entries still share them, and keep their exact values."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    rows: list[Any] = [header]
    parent = None
    for n in range(3):
        content = [{"type": "text", "text": f"lone \ud800 surrogate {n}"}]
        body = {"role": "user", "content": content, "timestamp": n}
        rows.append({"type": "message", "id": f"e{n}", "parentId": parent, "message": body})
        parent = f"e{n}"
    data = b"".join(encode_line(r) for r in rows)
    assert b"\\ud800" in data
    raw = parse_raw(data)
    assert _values(raw) == [json.loads(line) for line in data.splitlines()]
    assert b"".join(encode_line(v) for v in raw.values) == data
    first, last = raw.values[1], raw.values[3]
    for a, b in [(first, last), (first["message"], last["message"])]:
        assert [id(k) for k in a] == [id(k) for k in b]
    block_a, block_b = first["message"]["content"][0], last["message"]["content"][0]
    assert [id(k) for k in block_a] == [id(k) for k in block_b]


def test_tool_names_of_calls_and_results_are_one_object_each() -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}
    call = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}
    rows: list[Any] = [header]
    for n in range(2):
        rows.append(
            {
                "type": "message",
                "id": f"a{n}",
                "parentId": None,
                "message": {"role": "assistant", "model": "m", "content": [call]},
            }
        )
        rows.append(
            {
                "type": "message",
                "id": f"r{n}",
                "parentId": f"a{n}",
                "message": {"role": "toolResult", "toolName": "bash", "content": []},
            }
        )
    data = b"".join(encode_line(r) for r in rows)
    raw = parse_raw(data)
    _values(raw)
    first, second = raw.values[1]["message"], raw.values[3]["message"]
    assert first["content"][0]["name"] is second["content"][0]["name"]
    assert raw.values[2]["message"]["toolName"] is raw.values[4]["message"]["toolName"]
    assert b"".join(encode_line(v) for v in raw.values) == data
