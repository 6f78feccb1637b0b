"""``pi-context mcp`` through the official MCP SDK's own client, against the real subprocess.

Every answer is compared with what the shared tool registry gives in-process for the same call
(``run_tool``): names, schemas, results, byte budgets and error texts are the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from pi_context import Session, ToolContext, all_tools, run_tool  # noqa: E402
from pi_context.bindings.error_format import error_text  # noqa: E402
from pi_context.bindings.runtime.tools import RUNTIME_TOOL_NAMES  # noqa: E402
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len  # noqa: E402
from pi_context.mcp.server import call, served_tools  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.session = root / "session.jsonl"
        self.notes = root / "notes"
        self.project = root / "project"
        self.project.mkdir(parents=True)
        shutil.copy(FIXTURE, self.session)

    def context(self) -> ToolContext:
        return ToolContext(session_path=self.session, notes_home=self.notes, cwd=self.project)

    def argv(self) -> list[str]:
        return ["-m", "pi_context", "mcp", "--session", str(self.session),
                "--notes-home", str(self.notes), "--cwd", str(self.project)]  # fmt: skip


def with_client(home: Home, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Start the real server subprocess, connect the SDK client, run ``body``."""
    # The SDK passes a server only a few variables unless told: give it ours (its cache).
    params = StdioServerParameters(
        command=sys.executable, args=home.argv(), cwd=home.root, env=dict(os.environ)
    )

    async def main() -> Any:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as c:
                await c.initialize()
                return await body(c)

    return anyio.run(main)


def text_of(result: Any) -> str:
    [block] = result.content
    assert block.type == "text"
    return str(block.text)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path)


def test_tools_list_is_the_registry(home: Home) -> None:
    listed = with_client(home, lambda c: c.list_tools()).tools
    registry = served_tools()
    assert [t.name for t in listed] == list(registry)
    assert set(registry) == set(all_tools()) - {
        "wipe_memory",
        "clear_memory",
        "get_context_remaining",
    }
    for tool in listed:
        assert tool.description == registry[tool.name].description
        assert tool.input_schema == dict(registry[tool.name].parameters)


def test_every_tool_answers_as_the_registry_does(home: Home) -> None:
    ctx = home.context()
    # The read-only history tools answer byte for byte as in-process.
    listing = json.loads(run_tool("history_list", {"limit": 3}, ctx).text)
    item = listing["items"][1]["item_id"]
    window = json.loads(run_tool("history_windows", {}, ctx).text)["windows"][0]["window_id"]
    history_calls: list[tuple[str, dict[str, Any]]] = [
        ("history_windows", {}),
        ("history_list", {"limit": 3, "window_id": window}),
        ("history_search", {"query": ["user", "assistant"], "limit": 4}),
        ("history_read", {"item_id": item, "limit_chars": 40}),
    ]
    note_calls: list[tuple[str, dict[str, Any]]] = [
        ("notes_write", {"path": "plan/checkpoint.md", "content": "Next: step 2.\nSee history."}),
        (
            "notes_edit",
            {"path": "plan/checkpoint.md", "edits": [{"oldText": "step 2", "newText": "step 3"}]},
        ),  # fmt: skip
        ("notes_read", {"path": "plan/checkpoint.md"}),
        ("notes_list", {}),
        ("notes_search", {"query": "step 3"}),
    ]

    async def body(c: ClientSession) -> list[Any]:
        return [await c.call_tool(name, args) for name, args in history_calls + note_calls]

    results = with_client(home, body)
    assert not any(r.is_error for r in results), [text_of(r) for r in results if r.is_error]
    for (name, args), result in zip(history_calls, results, strict=False):
        assert text_of(result) == run_tool(name, args, ctx).text, name
    notes = dict(zip([n for n, _ in note_calls], results[len(history_calls) :], strict=True))
    # The notes really changed on disk, and in-process tools now see the server's edits.
    assert json.loads(text_of(notes["notes_write"]))["created"] is True
    assert text_of(notes["notes_read"]).endswith("Next: step 3.\nSee history.")
    assert text_of(notes["notes_read"]) == run_tool("notes_read", note_calls[2][1], ctx).text
    listed = json.loads(text_of(notes["notes_list"]))
    assert [n["path"] for n in listed["files"]] == ["plan/checkpoint.md"]
    assert "step 3" in text_of(notes["notes_search"])
    [on_disk] = [p for p in home.notes.rglob("checkpoint.md")]
    assert "Next: step 3." in on_disk.read_text()


BAD_CALLS: list[tuple[str, Any]] = [
    ("no_such_tool", {}),
    ("wipe_memory", {}),
    ("get_context_remaining", {}),
    ("notes_read", {}),
    ("notes_read", {"path": "../../etc/passwd"}),
    ("notes_write", {"path": "a.md", "content": 7}),
    ("notes_edit", {"path": "missing.md", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("history_read", {"item_id": "nope"}),
    ("history_list", {"limit": 0}),
    ("history_search", {"query": ""}),
    ("history_windows", {"bogus": 1}),
]


def test_every_error_has_one_format_and_names_only_served_tools(home: Home) -> None:
    calls = [*BAD_CALLS, ("notes_list", {"limit": 0})]

    async def body(c: ClientSession) -> list[Any]:
        return [await c.call_tool(name, args) for name, args in calls]

    (home.root / "not-a-session.md").write_text("# a README\n")
    results = with_client(home, body)
    ctx = home.context()
    served = served_tools()
    for (name, args), result in zip(calls, results, strict=True):
        expected = call(name, args, ctx, served)
        # the shared dispatcher over the served tools (an unknown name lists only those)
        if name not in RUNTIME_TOOL_NAMES:  # those are named as needing a live runtime
            dispatched = run_tool(name, args, ctx, served)
            assert expected.text == error_text(dispatched.text), (name, args)
        assert expected.is_error, (name, args)
        assert result.is_error, (name, args)
        assert text_of(result) == expected.text, (name, args)
        body_json = json.loads(text_of(result))
        assert isinstance(body_json["error"], str) and body_json["error"], (name, args)
        # the registry's own texts, where they are JSON already, are kept as they are
        registry = run_tool(name, args, ctx)
        if name in served and registry.text.startswith("{"):
            assert text_of(result) == registry.text, (name, args)
    for name in ("no_such_tool", "wipe_memory", "get_context_remaining"):
        text = call(name, {}, ctx, served).text
        offered = json.loads(text)["error"].split("known tools: ")[1].split(", ")
        assert offered == sorted(served), name
    assert "live pi-context runtime" in call("wipe_memory", {}, ctx, served).text
    # a history call on a file that is not a session: the same JSON form, not plain text
    bad = ToolContext(session_path=home.root / "not-a-session.md", cwd=home.project)
    text = call("history_list", {}, bad, served).text
    assert json.loads(text)["error"].startswith("history: cannot read the session: ")


def test_non_finite_echoes_become_json() -> None:
    assert error_text('{"error":"limit must be an integer","limit":-Infinity}') == (
        '{"error":"limit must be an integer","limit":"-Infinity"}'
    )
    assert json.loads(error_text('{"error":"x","a":[NaN,Infinity,1.5]}'))["a"] == [
        "NaN", "Infinity", 1.5]  # fmt: skip
    assert error_text("plain words") == '{"error":"plain words"}'
    assert error_text('{"error":"ok","n":1}') == '{"error":"ok","n":1}'


def test_byte_budget_is_the_registry_budget(home: Home) -> None:
    big = Session.create(home.project, home.root / "big")
    big.append_message({"role": "user", "content": "é" * 120_000, "timestamp": 1})
    big.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                        "api": "x", "provider": "x", "model": "x", "usage": {},
                        "stopReason": "stop", "timestamp": 2})  # fmt: skip
    assert big.path is not None
    shutil.copy(big.path, home.session)
    ctx = home.context()
    item = json.loads(run_tool("history_list", {"role": "user"}, ctx).text)["items"][0]["item_id"]
    calls = [("history_read", {"item_id": item}), ("history_list", {}),
             ("history_search", {"query": "é"})]  # fmt: skip

    async def body(c: ClientSession) -> list[Any]:
        return [await c.call_tool(name, args) for name, args in calls]

    for (name, args), result in zip(calls, with_client(home, body), strict=True):
        text = text_of(result)
        assert utf8_len(text) <= TOOL_OUTPUT_MAX_BYTES, name
        assert text == run_tool(name, args, ctx).text, name
    assert utf8_len(text_of(with_client(home, lambda c: c.call_tool(*calls[0])))) > 10_000


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--session", "missing.jsonl"], "--session missing.jsonl: no such session file"),
        (["--session", "project"], "--session project: is a directory, not a session file"),
        (
            ["--session", "README.md"],
            "--session README.md: not a Pi session file: its first line is not a "
            '{"type":"session",...} header',
        ),
        (
            ["--session", "empty.jsonl"],
            "--session empty.jsonl: the file is empty, not a Pi session file (Pi writes a "
            "header line first)",
        ),
        (["--session", "fifo"], "--session fifo: not a regular file, so not a Pi session file"),
        (["--session", "session.jsonl", "--cwd", "nowhere"], "--cwd nowhere: not a directory"),
        (
            ["--session", "session.jsonl", "--notes-home", "session.jsonl"],
            "--notes-home session.jsonl: not a directory",
        ),  # fmt: skip
    ],
)
def test_bad_command_lines_are_named(home: Home, extra: list[str], message: str) -> None:
    shutil.copy(REPO / "README.md", home.root / "README.md")
    (home.root / "empty.jsonl").write_bytes(b"")
    os.mkfifo(home.root / "fifo")
    result = subprocess.run(
        [sys.executable, "-m", "pi_context", "mcp", *extra],
        capture_output=True, text=True, cwd=home.root, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == f"pi-context mcp: {message}"
    assert result.stdout == ""


def test_without_the_sdk_the_command_says_how_to_install_it(home: Home) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"  # as if the optional SDK were not installed
        "from pi_context.cli import main\n"
        f"sys.exit(main(['mcp', '--session', {str(home.session)!r}]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "pi-context mcp: the MCP server needs the optional mcp package: "
        "pip install 'pi-context[mcp]'"
    )


def test_a_first_search_of_a_large_session_answers_as_a_one_shot_call(
    home: Home, tmp_path: Path
) -> None:
    """The server (a long-lived host) answers its first search of a session past
    ``FIRST_ANSWER_MIN_BYTES`` from the file and builds the index after; a one-shot command
    in another process, with a cache of its own, builds it first. Both answer alike, first
    and after."""
    from pi_context.bindings.history.resident import FIRST_ANSWER_MIN_BYTES
    from pi_context.bindings.session.jsonl import encode_line

    parent: str | None = None
    with home.session.open("wb") as out:
        header = {"type": "session", "version": 3, "id": "0196aaaa-0000-7000-8000-00000000beef"}
        out.write(encode_line({**header, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}))
        number, written = 0, 0
        while written <= FIRST_ANSWER_MIN_BYTES:
            text = f"turn {number} " + ("needle-7 " if number % 997 == 0 else "") + "x" * 900
            entry_id = f"e{number:06x}"
            line = encode_line(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": {"role": "user", "content": text, "timestamp": 1},
                }
            )
            out.write(line)
            parent, number, written = entry_id, number + 1, written + len(line)
    calls = [
        ("history_search", {"query": "needle-7"}),
        ("history_search", {"query": "needle-7", "recent_first": False, "limit": 3}),
        ("history_search", {"query": "needle-7", "limit": 2}),
    ]

    async def body(c: ClientSession) -> list[str]:
        return [text_of(await c.call_tool(name, args)) for name, args in calls]

    served = with_client(home, body)
    env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(tmp_path / "one-shot-cache")}
    for (name, args), answer in zip(calls, served, strict=True):
        one_shot = subprocess.run(
            [
                sys.executable,
                "-m",
                "pi_context",
                "tool",
                name,
                "--args",
                json.dumps(args),
                "--session",
                str(home.session),
            ],  # fmt: skip
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert answer == one_shot.stdout.rstrip("\n"), args
    assert len(json.loads(served[0])["items"]) == number // 997 + 1
