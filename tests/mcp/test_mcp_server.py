"""``pi-context mcp`` through the official MCP SDK's own client, against the real subprocess.

Every answer is compared with what the shared tool registry gives in-process for the same call
(``run_tool``): names, schemas, results, byte budgets and error texts are the same.
"""

from __future__ import annotations

import json
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
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len  # noqa: E402
from pi_context.mcp.server import served_tools  # noqa: E402

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
    params = StdioServerParameters(command=sys.executable, args=home.argv(), cwd=home.root)

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
    assert set(registry) == set(all_tools()) - {"wipe_memory", "get_context_remaining"}
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


def test_errors_have_the_registry_texts(home: Home) -> None:
    async def body(c: ClientSession) -> list[Any]:
        return [await c.call_tool(name, args) for name, args in BAD_CALLS]

    results = with_client(home, body)
    ctx = home.context()
    for (name, args), result in zip(BAD_CALLS, results, strict=True):
        # the shared dispatcher over the served tools (an unknown name lists only those)
        expected = run_tool(name, args, ctx, served_tools())
        assert expected.is_error, (name, args)
        assert result.is_error, (name, args)
        assert text_of(result) == expected.text, (name, args)
        assert "error" in json.loads(text_of(result))


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
        (["--session", "session.jsonl", "--cwd", "nowhere"], "--cwd nowhere: not a directory"),
        (
            ["--session", "session.jsonl", "--notes-home", "session.jsonl"],
            "--notes-home session.jsonl: not a directory",
        ),  # fmt: skip
    ],
)
def test_bad_command_lines_are_named(home: Home, extra: list[str], message: str) -> None:
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
