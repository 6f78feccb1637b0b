"""One error shape for every tool on every surface: the library dispatcher (``Tool.run``),
the runtime (``Runtime.call_tool``), the host loop every integration is built from
(``HostLoop.run_calls``, which the pydantic-ai integration uses), the MCP server's answer
(``mcp.server.call``, and once over the real stdio wire) and ``pi-context tool``.

Every tool gets one bad call of its own (not only an unknown argument); on each surface the
error is a JSON object whose ``error`` is a string message — never an object, never JSON
inside a JSON string (``context_history_read`` once answered
``{"error":"{\\"error\\":{\\"code\\":...}}"}``) — and every surface shows the same text.
A tool the table does not know fails ``test_the_table_covers_every_tool``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.runtime.config import RuntimeConfig
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session import Session
from pi_context.bindings.tool_registry import all_tools, find_tool
from pi_context.bindings.tools import ToolContext
from pi_context.integrations.loop import HostLoop

BAD_CALLS: dict[str, dict[str, Any]] = {
    "history_windows": {"limit": 0},
    "history_list": {"window_id": "pcw:nope:root"},
    "history_search": {"query": ""},
    "history_read": {"item_id": "nope"},
    "notes_write": {"path": "../outside.md", "content": "x"},
    "notes_edit": {"path": "missing.md", "edits": []},
    "notes_update": {"address": "missing.md", "origin": "robot"},
    "notes_read": {"path": "missing.md"},
    "notes_list": {"max_results": 0},
    "notes_search": {"query": ""},
    "wipe_memory": {"reason": "unknown argument"},
    "clear_memory": {"reason": "unknown argument"},
    "get_context_remaining": {"scope": "unknown argument"},
    "context_history_search": {"query": ""},
    "context_history_read": {"id": "nope"},
}
RUNTIME_ONLY = {"wipe_memory", "clear_memory", "get_context_remaining"}  # need a live runtime
BAD_NEW_ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    # Every parameter of the newest notes contract, with a bad value, on every surface.
    ("notes_write", {"address": "a.md", "content": "x", "origin": "robot"}),
    ("notes_write", {"address": 7, "content": "x"}),
    ("notes_update", {"address": "a.md", "crumpled": "yes"}),
    ("notes_update", {"address": "a.md", "replace_all": 1, "edits": []}),
    ("notes_update", {"address": "a.md", "rename_to": "../out.md"}),
    ("notes_update", {"address": "a.md", "rename_to": 5}),
    ("notes_update", {"address": "a.md", "rename_to": "b.md", "origin": "user"}),
    ("notes_update", {"address": "a.md", "origin": ["user"]}),
    ("notes_edit", {"address": "a.md", "crumpled": 0}),
    ("notes_read", {"address": "@nowhere/a.md"}),
    ("notes_list", {"wastebasket": "true"}),
    ("notes_list", {"limit": 0}),
    ("notes_list", {"limit": 2, "max_results": 3}),
    ("notes_search", {"query": "x", "wastebasket": 1}),
    ("notes_search", {"query": "x", "limit": 1001}),
]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    agent, cwd, notes = tmp_path / "agent", tmp_path / "project", tmp_path / "notes"
    for folder in (agent, cwd, notes):
        folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    session = Session.create(cwd, tmp_path / "sessions")
    session.append_message(
        {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1}
    )
    session.sync()
    assert session.path is not None
    context = ToolContext(session_path=session.path, notes_home=notes, cwd=cwd)
    runtime = Runtime(
        session, RuntimeConfig(notes_home=notes, cwd=cwd, agent_dir=agent, project_trusted=True)
    )
    return {"session": session, "context": context, "runtime": runtime, "notes": notes}


def shape(text: str) -> dict[str, Any]:
    body = json.loads(text)
    assert isinstance(body, dict), text
    assert isinstance(body.get("error"), str), text
    assert body["error"] and not body["error"].lstrip().startswith("{"), text
    return body


def test_the_table_covers_every_tool() -> None:
    assert sorted(BAD_CALLS) == sorted(all_tools())


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_one_bad_call_has_one_shape_on_every_surface(name: str, world: dict[str, Any]) -> None:
    every_surface(name, BAD_CALLS[name], world)


@pytest.mark.parametrize(("name", "args"), BAD_NEW_ARGUMENTS)
def test_each_new_notes_parameter_s_bad_input_has_the_one_shape(
    name: str, args: dict[str, Any], world: dict[str, Any]
) -> None:
    every_surface(name, args, world)
    body = shape(find_tool(name).run(world["context"], args).text)  # type: ignore[union-attr]
    assert set(body) <= {"error", "code", "details"} and isinstance(body["code"], str), body


def every_surface(name: str, args: dict[str, Any], world: dict[str, Any]) -> None:
    seen: dict[str, str] = {}

    runtime_result = world["runtime"].call_tool(name, args)
    assert runtime_result.is_error, runtime_result.text
    seen["runtime"] = runtime_result.text

    loop = HostLoop(world["runtime"])
    reply = {"content": [{"type": "toolCall", "id": "c1", "name": name, "arguments": args}]}
    loop.run_calls(reply)
    [answer] = [
        e["message"]
        for e in world["runtime"].session.branch()
        if e.get("type") == "message" and e["message"].get("toolCallId") == "c1"
    ]
    assert answer["isError"] is True
    seen["host loop"] = answer["content"][0]["text"]

    if name not in RUNTIME_ONLY:  # the others need a live runtime, which these hosts lack
        tool = find_tool(name)
        assert tool is not None
        library = tool.run(world["context"], args)
        assert library.is_error
        seen["library"] = library.text

        from pi_context.mcp.server import call, served_tools

        served = call(name, args, world["context"], served_tools())
        assert served.is_error
        seen["mcp"] = served.text

        done = subprocess.run(
            [sys.executable, "-m", "pi_context", "tool", name,
             "--session", str(world["context"].session_path),
             "--notes-home", str(world["notes"]), "--cwd", str(world["context"].cwd),
             "--args", json.dumps(args)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        seen["cli"] = done.stdout.rstrip("\n")

    for surface, text in seen.items():
        shape(text), surface
    if name not in RUNTIME_ONLY:
        # the library, the MCP server and the CLI answer a stored session alike
        assert seen["library"] == seen["mcp"] == seen["cli"], seen
    assert seen["runtime"] == seen["host loop"], seen


def test_context_history_errors_keep_their_code_beside_the_message(
    world: dict[str, Any],
) -> None:
    tool = find_tool("context_history_read")
    assert tool is not None
    body = shape(tool.run(world["context"], {"id": "nope"}).text)
    assert body["code"] == "source_not_found"
    assert "nope" in body["error"]


def test_over_the_mcp_wire_the_error_is_not_json_in_a_string(world: dict[str, Any]) -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "context_history_read", "arguments": {"id": "nope"}},
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "mcp",
         "--session", str(world["context"].session_path), "--notes-home", str(world["notes"])],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    replies = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines())}
    result = replies[2]["result"]
    assert result["isError"] is True
    body = shape(result["content"][0]["text"])
    assert body["code"] == "source_not_found"


def test_the_dispatcher_brings_a_family_s_own_error_text_into_the_one_format() -> None:
    from pi_context.bindings.tools import Tool, ToolResult

    def plain(context: ToolContext, args: Any) -> ToolResult:
        return ToolResult(text="history: the index is busy", is_error=True)

    tool = Tool("plain", "a family answering plain text", {"type": "object"}, plain)
    result = tool.run(ToolContext(), {})
    assert result.is_error
    assert json.loads(result.text) == {"error": "history: the index is busy"}
