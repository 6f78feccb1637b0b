"""The notes tools through ``pi-context tool NAME`` in a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.bindings.tool_registry import all_tools


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    file = tmp_path / "session.jsonl"
    header = {"type": "session", "version": 3, "id": "cli-session-1", "cwd": str(tmp_path)}
    file.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return file


def tool(
    name: str, args: dict[str, object], root: Path, session: Path | None, *extra: str
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pi_context", "tool", name, "--notes-home", str(root)]
    if session is not None:
        command += ["--session", str(session)]
    command += ["--args", json.dumps(args, ensure_ascii=False), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=root.parent)


def test_the_registry_discovers_the_notes_tools() -> None:
    names = set(all_tools())
    assert {"notes_write", "notes_edit", "notes_read", "notes_list", "notes_search"} <= names


def test_write_edit_read_list_search_through_the_cli(tmp_path: Path, session_file: Path) -> None:
    root = tmp_path / "root"
    wrote = tool(
        "notes_write", {"path": "plan/步骤.md", "content": "step one\nstep two"}, root, session_file
    )
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert json.loads(wrote.stdout)["created"] is True
    assert (root / "pi" / "session" / "cli-session-1" / "plan" / "步骤.md").is_file()

    edited = tool(
        "notes_edit",
        {"path": "plan/步骤.md", "edits": [{"oldText": "two", "newText": "2"}]},
        root,
        session_file,
    )
    assert json.loads(edited.stdout)["applied"] == 1

    read = tool(
        "notes_read", {"path": "plan/步骤.md", "offset_chars": -6}, root, session_file, "--details"
    )
    header, payload_and_details = read.stdout.split("\n", 1)
    assert header.startswith("[plan/步骤.md · chars ") and " · end · session · created " in header
    assert payload_and_details.startswith("step 2\n")
    details = json.loads(payload_and_details[len("step 2\n") :])
    assert details["scope"] == "session" and details["next_offset_chars"] is None

    listed = json.loads(tool("notes_list", {"pattern": "plan/*"}, root, session_file).stdout)
    assert [f["path"] for f in listed["files"]] == ["plan/步骤.md"]
    found = json.loads(tool("notes_search", {"query": "step"}, root, session_file).stdout)
    assert [m["line"] for m in found["files"][0]["matches"]] == [1, 2]


def test_errors_exit_nonzero_with_the_named_json(tmp_path: Path, session_file: Path) -> None:
    root = tmp_path / "root"
    missing = tool("notes_read", {"path": "nope.md"}, root, session_file)
    assert missing.returncode == 1
    assert json.loads(missing.stdout) == {
        "error": "note not found",
        "code": "not_found",
        "details": {"path": "nope.md"},
    }
    escape = tool("notes_write", {"path": "../x", "content": "x"}, root, session_file)
    assert escape.returncode == 1
    assert "unsupported component" in json.loads(escape.stdout)["error"]
    no_session = tool("notes_write", {"path": "a.md", "content": "x"}, root, None)
    assert no_session.returncode == 1
    assert "session home is unavailable" in json.loads(no_session.stdout)["error"]
    human = tool("notes_write", {"path": "a.md", "content": "x", "scope": "human"}, root, None)
    assert human.returncode == 0, "homes that need no session still work without one"
    assert "Traceback" not in missing.stderr + escape.stderr + no_session.stderr
