"""``pi-context mcp`` answers every line the SDK's own stdio transport would drop.

The SDK's client is the real one: its outgoing JSON for one call is tampered with on the way
to the real server subprocess (a lone-surrogate escape, as Node's ``JSON.stringify`` writes for
half an emoji; nesting deeper than the SDK's parser goes; a batch), and the client must get
an error for its own request id instead of waiting forever. Raw lines check the rest: every
reply is strict JSON, the server keeps answering, and replies are never lost at the end of
input.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402

from pi_context.mcp.transport import (  # noqa: E402
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    encode_reply,
    judge,
)

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"
MARK = '"@@MARK@@"'


def strict_json(line: bytes) -> Any:
    """``line`` parsed as strict JSON: UTF-8, no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in a reply: {line[:200]!r}")

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


@pytest.fixture
def argv(tmp_path: Path) -> list[str]:
    session = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, session)
    return [sys.executable, "-m", "pi_context", "mcp", "--session", str(session),
            "--notes-home", str(tmp_path / "notes"), "--cwd", str(tmp_path)]  # fmt: skip


@asynccontextmanager
async def tampering_client(
    argv: list[str], tamper: Callable[[str], str]
) -> AsyncIterator[ClientSession]:
    """The SDK's ClientSession on the real server subprocess; each line it sends passes
    through ``tamper`` first."""
    process = await anyio.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](16)
    stdin, stdout = process.stdin, process.stdout

    async def server_to_client() -> None:
        pending = b""
        async for chunk in stdout:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                strict_json(line)  # every reply is JSON, whatever was sent
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                await to_client.send(SessionMessage(message))

    async def client_to_server() -> None:
        async for sent in from_client:
            text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
            await stdin.send((tamper(text) + "\n").encode("utf-8", "surrogatepass"))

    async with process, anyio.create_task_group() as tasks:
        tasks.start_soon(server_to_client)
        tasks.start_soon(client_to_server)
        async with ClientSession(client_reads, client_writes) as client:
            await client.initialize()
            yield client
        await stdin.aclose()
        tasks.cancel_scope.cancel()


def run_client(
    argv: list[str], tamper: Callable[[str], str], body: Callable[[ClientSession], Awaitable[Any]]
) -> Any:
    async def main() -> Any:
        with anyio.fail_after(60):
            async with tampering_client(argv, tamper) as client:
                return await body(client)

    return anyio.run(main)


def lone_surrogate(text: str) -> str:
    return text.replace(MARK, '"\\ud83d"')  # the first half of an emoji, alone


def too_deep(text: str) -> str:
    return text.replace(MARK, "[" * 300 + "]" * 300)


def as_batch(text: str) -> str:
    return f"[{text}]" if MARK in text else text


@pytest.mark.parametrize(
    ("tamper", "code", "words"),
    [
        (lone_surrogate, PARSE_ERROR, "lone surrogate (\\ud83d)"),
        (too_deep, PARSE_ERROR, f"nested deeper than {MAX_DEPTH} levels"),
        (as_batch, INVALID_REQUEST, "batches are not supported"),
    ],
)
def test_the_sdk_client_gets_an_error_for_what_the_sdk_transport_drops(
    argv: list[str], tamper: Callable[[str], str], code: int, words: str
) -> None:
    async def body(client: ClientSession) -> tuple[MCPError, types.CallToolResult]:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("notes_read", {"path": "@@MARK@@"})
        # the server is still there and answers the next call as usual
        after = await client.call_tool("history_windows", {})
        return refused.value, after

    error, after = run_client(argv, tamper, body)
    assert error.error.code == code
    assert words in error.error.message
    assert not after.is_error
    assert "windows" in json.loads(after.content[0].text)  # type: ignore[union-attr]


def test_untampered_calls_pass_through(argv: list[str]) -> None:
    async def body(client: ClientSession) -> types.CallToolResult:
        return await client.call_tool("notes_read", {"path": "missing.md"})

    result = run_client(argv, lambda text: text, body)
    assert result.is_error
    assert "error" in json.loads(result.content[0].text)  # type: ignore[union-attr]


def raw_session(argv: list[str], lines: list[bytes]) -> tuple[list[Any], str]:
    """Send ``lines`` (after the handshake), close stdin at once; every reply and stderr."""
    hello = [
        b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":'
        b'"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ]
    done = subprocess.run(
        argv, input=b"\n".join(hello + lines) + b"\n", capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    return [strict_json(line) for line in done.stdout.splitlines()], done.stderr.decode()


def by_id(replies: list[Any]) -> dict[Any, Any]:
    return {reply.get("id"): reply for reply in replies}


def call(request_id: int | str, name: str, arguments: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
        f'"params":{{"name":"{name}","arguments":{arguments}}}}}'
    ).encode()


def test_raw_hostile_lines_each_get_their_answer_and_nothing_is_lost(argv: list[str]) -> None:
    lines = [
        call(1, "history_list", '{"limit":-Infinity}'),
        call(2, "history_list", '{"limit":NaN}'),
        call(3, "history_list", '{"limit":1e999}'),
        call(4, "notes_read", '{"path":"\\udc80"}'),
        b"[" * 100_000 + b"]" * 100_000,  # deep past any recursion limit: id unknown
        b'[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]',
        b"[]",
        b'{"jsonrpc":"2.0","id":7,"method":"ping"' + b"\xff" + b"}",
        b'{"jsonrpc":"1.0","id":8,"method":"ping"}',
        b'"just a string"',
        b'{"jsonrpc":"2.0","method":"notifications/whatever","params":NaN}',  # no reply owed
        b"",
        call(9, "nope", "{}"),
        b'{"jsonrpc":"2.0","id":10,"method":"ping"}',
    ]
    replies, stderr = raw_session(argv, lines)
    got = by_id(replies)
    for request_id in (1, 2, 3):
        assert got[request_id]["error"]["code"] == PARSE_ERROR
    assert "-Infinity is not a JSON number" in got[1]["error"]["message"]
    assert "1e999 is out of range" in got[3]["error"]["message"]
    assert "lone surrogate (\\udc80)" in got[4]["error"]["message"]
    assert got[5]["error"]["code"] == got[6]["error"]["code"] == INVALID_REQUEST
    messages = " ".join(r["error"]["message"] for r in replies if "error" in r)
    bad_byte = lines[7].index(0xFF)
    assert f"not UTF-8 (byte {bad_byte} is 0xff)" in messages
    assert got[8]["error"]["code"] == INVALID_REQUEST
    unknown = json.loads(got[9]["result"]["content"][0]["text"])
    assert "wipe_memory" not in unknown["error"] and "notes_read" in unknown["error"]
    assert got[10]["result"] == {}
    nulls = [r for r in replies if r.get("id") is None]
    # the deep line, the empty batch, the bad UTF-8, the string: one reply each
    assert len(nulls) == 4, nulls
    assert "nested deeper than" in stderr and "line 7" in stderr


def test_a_request_with_an_unusable_id_gets_an_error_with_id_null(argv: list[str]) -> None:
    """Issue 31, finding 11: taken for notifications, these got no reply at all."""
    bad_ids = ["1.5", "true", "null", "{}", "[]"]
    lines = [f'{{"jsonrpc":"2.0","id":{i},"method":"ping"}}'.encode() for i in bad_ids]
    lines.append(b'{"jsonrpc":"2.0","id":6,"method":"ping"}')
    replies, _stderr = raw_session(argv, lines)
    nulls = [r for r in replies if r.get("id") is None]
    assert len(nulls) == len(bad_ids), replies
    for reply, shown in zip(nulls, bad_ids, strict=True):  # answered in order
        assert reply["error"]["code"] == INVALID_REQUEST, reply
        assert f"id is a string or an integer, not {shown}" in reply["error"]["message"]
    assert by_id(replies)[6]["result"] == {}
    for bad in bad_ids:
        body = f'{{"jsonrpc":"2.0","id":{bad},"method":"notifications/x"}}'.encode()
        assert judge(body).replies, bad  # an id makes it a request, whatever the method
    assert judge(b'{"jsonrpc":"2.0","method":"notifications/x"}').replies == []


def test_a_line_over_the_limit_is_skipped_unread(argv: list[str]) -> None:
    big = call(1, "notes_write", '{"path":"a.md","content":"' + "x" * (70 << 20) + '"}')
    replies, _ = raw_session(argv, [big, b'{"jsonrpc":"2.0","id":2,"method":"ping"}'])
    got = by_id(replies)
    message = got[None]["error"]["message"]
    assert got[None]["error"]["code"] == PARSE_ERROR and "over the limit of 67108864" in message
    assert got[2]["result"] == {}


def test_replies_with_lone_surrogates_or_non_finite_numbers_stay_json() -> None:
    line = encode_reply({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\ud83db\udc80"}})
    assert strict_json(line)["result"]["text"] == "a\ud83db\udc80"
    refused = strict_json(encode_reply({"jsonrpc": "2.0", "id": 2, "result": {"x": math.nan}}))
    assert refused["id"] == 2 and refused["error"]["code"] == -32603
    assert "non-finite number" in refused["error"]["message"]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300)
    | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
def test_judge_never_raises_and_every_reply_is_json(line: bytes) -> None:
    judged = judge(line)
    for reply in judged.replies:
        parsed = strict_json(encode_reply(reply))
        assert parsed["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([1, "x", None, True, 2.5]))
def test_any_request_shape_is_answered_or_handed_on(params: Any, request_id: Any) -> None:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    judged = judge(json.dumps(body).encode())
    assert judged.message is not None or judged.replies
    for reply in judged.replies:
        strict_json(encode_reply(reply))
        if isinstance(request_id, int | str) and not isinstance(request_id, bool):
            assert reply["id"] == request_id
