"""Fixtures for the notes tests: a throwaway notes root and helpers to call the real tools."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.notes import columns, resident
from pi_context.bindings.notes.homes import ENV_VAR
from pi_context.bindings.notes.store import NoteStore
from pi_context.bindings.notes.tools import TOOLS, store_for
from pi_context.bindings.tools import ToolContext, ToolError, ToolResult
from pi_context.support.frozen import replace

TOOL_BY_NAME = {tool.name: tool for tool in TOOLS}
HEADER = re.compile(r" · chars (\d+)-(\d+) of (\d+) · (end|continue at offset_chars=(\d+))")


@dataclass(frozen=True)
class Read:
    header: str
    content: str
    offset_chars: int
    end_chars: int
    total_chars: int
    next_offset_chars: int | None
    details: Mapping[str, Any]


ENVELOPE_KEYS = {"error", "code", "details"}


def flat(body: Any) -> dict[str, Any]:
    """An error result checked to be ``{error, code, details?}`` (message and code strings,
    details an object), with the details' fields beside ``error`` and ``code``."""
    assert isinstance(body, dict) and set(body) <= ENVELOPE_KEYS, body
    assert isinstance(body.get("error"), str) and isinstance(body.get("code"), str), body
    details = body.get("details", {})
    assert isinstance(details, dict) and ("details" not in body or details), body
    return {**details, "error": body["error"], "code": body["code"]}


@dataclass
class Notes:
    """One host identity over a notes root, with the tools bound to it."""

    ctx: ToolContext

    def call(self, name: str, **args: Any) -> ToolResult:
        return TOOL_BY_NAME[name].run(self.ctx, args)

    def json(self, name: str, **args: Any) -> Any:
        return json.loads(self.call(name, **args).text)

    def error(self, name: str, **args: Any) -> Any:
        """The JSON of an argument error (raised) or an error result (returned), checked to be
        the published envelope and flattened (``flat``) for the tests' look-ups."""
        try:
            result = self.call(name, **args)
        except ToolError as exc:
            return flat(exc.payload)
        assert result.is_error, f"{name} {args} did not fail: {result.text[:200]}"
        return flat(json.loads(result.text))

    def read(self, **args: Any) -> Read:
        result = self.call("notes_read", **args)
        assert not result.is_error, result.text
        header, _, content = result.text.partition("\n")
        assert header.startswith("[") and header.endswith("]"), header
        match = HEADER.search(header)
        assert match, header
        start, end, total = int(match[1]), int(match[2]), int(match[3])
        nxt = None if match[4] == "end" else int(match[5])
        assert len(content) == end - start, "the header range matches the payload"
        return Read(header, content, start, end, total, nxt, result.details)

    def store(self) -> NoteStore:
        return store_for(self.ctx)

    def other(self, **changes: Any) -> Notes:
        """The same root seen by a different identity (another session, project…)."""
        return Notes(replace(self.ctx, **changes))


@pytest.fixture(autouse=True)
def never_the_real_notes_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a test forgets to pass, the user's ~/.pi/agent/notes is never touched."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "default-notes-root"))


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's disk cache (and its child processes') lives in its own folder."""
    folder = tmp_path / "cache-dir"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(folder))
    monkeypatch.delenv("PI_CONTEXT_NOTES_CACHE", raising=False)
    return folder


@pytest.fixture
def notes_root(tmp_path: Path) -> Path:
    root = tmp_path / "notes-root"
    root.mkdir()
    return root


@pytest.fixture
def notes(notes_root: Path, tmp_path: Path) -> Notes:
    project = tmp_path / "project"
    project.mkdir()
    return Notes(
        ToolContext(
            notes_home=notes_root,
            cwd=project,
            session_id="0190f1a2-aaaa-7bbb-8ccc-000000000001",
            agent_name="pi",
            model_id="anthropic/claude-test",
        )
    )


@pytest.fixture
def resident_host() -> Iterator[None]:
    """A resident notes view (as the MCP server holds one) for the test, and nothing held
    after it: the watcher stopped, the memoized columns and listings dropped."""
    if not sys.platform.startswith("linux"):
        pytest.skip("inotify")
    assert resident.enable()
    yield
    resident.shutdown()
    columns.forget()
