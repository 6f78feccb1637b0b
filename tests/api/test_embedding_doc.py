"""docs/embedding.md: its host loop runs as written, over real files, and type-checks."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context import HostLoop, Session, spec_ids
from pi_context.bindings.session.windows import is_reset_marker

from .conftest import REPO, python_blocks, run_mypy

DOC = REPO / "docs" / "embedding.md"


def _loop(tmp_path: Path) -> Path:
    script = tmp_path / "host_loop.py"
    script.write_text(python_blocks(DOC)[0], encoding="utf-8")
    return script


def test_the_host_loop_imports_only_the_public_api(tmp_path: Path) -> None:
    tree = ast.parse(_loop(tmp_path).read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in modules if m and m.startswith("pi_context")} == {"pi_context"}
    # about 80 lines: the loop, its scripted model, and 0.34's cancelled follow-up
    assert len(python_blocks(DOC)[0].splitlines()) <= 85


@pytest.mark.parametrize("spec", spec_ids())
def test_the_host_loop_runs_and_writes_two_windows(tmp_path: Path, spec: str) -> None:
    """The loop as written, unchanged, on every committed spec ($PI_CONTEXT_SPEC selects it)."""
    home = tmp_path / "home"
    result = subprocess.run(
        [sys.executable, str(_loop(tmp_path)), str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PI_CONTEXT_SPEC": spec},
    )
    assert result.returncode == 0, result.stderr
    assert "1 reset(s); now in window pcw:" in result.stdout
    [path] = sorted((home / "sessions").glob("*.jsonl"))
    session = Session.open(path, readonly=True)
    assert session.problems == []
    branch = session.branch()
    assert sum(1 for entry in branch if is_reset_marker(entry)) == 1
    messages = [e["message"] for e in branch if e["type"] == "message"]
    results = {m["toolName"]: m for m in messages if m["role"] == "toolResult"}
    # the script calls clear_memory (the newest name), which every generation accepts
    assert set(results) == {"notes_write", "clear_memory", "notes_read"}
    assert not any(m["isError"] for m in results.values())
    assert (
        json.loads(results["clear_memory"]["content"][0]["text"])["status"] == "rollover_requested"
    )
    # The note written in the first window is read back in the second.
    assert "Step 1 done; next: step 2." in results["notes_read"]["content"][0]["text"]
    assert messages[-1]["role"] == "assistant"
    assert messages[-1]["content"] == [{"type": "text", "text": "Resumed from my checkpoint."}]


def _shape(path: Path) -> list[str]:
    """Each entry of a session's branch as its kind: type, custom type, role and tool."""
    shape: list[str] = []
    for entry in Session.open(path, readonly=True).branch():
        message = entry.get("message") or {}
        parts = [entry["type"], entry.get("customType"), message.get("role")]
        parts.append(message.get("toolName"))
        shape.append("/".join(str(p) for p in parts if p))
    return shape


def test_the_reference_host_loop_is_the_documented_loop(tmp_path: Path) -> None:
    """``HostLoop.run`` with the doc's scripted model writes the session the doc's loop does."""
    script = _loop(tmp_path)
    documented: dict[str, Any] = {"__name__": "documented"}
    exec(compile(script.read_text(), str(script), "exec"), documented)
    asyncio.run(documented["run"](tmp_path / "doc"))

    reference: dict[str, Any] = {"__name__": "reference"}
    exec(compile(script.read_text(), str(script), "exec"), reference)  # a fresh SCRIPT
    home = tmp_path / "ref"
    pi_context = __import__("pi_context")
    model = pi_context.ModelInfo("scripted", "demo", 200_000)
    config = pi_context.RuntimeConfig(
        notes_home=home / "notes", agent_dir=home, cwd=home, model=model
    )
    rt = pi_context.Runtime(Session.create(home, home / "sessions"), config)
    rt.session_start("startup")
    loop = HostLoop(rt)
    loop.user("Do the task.")
    asyncio.run(loop.run(reference["call_model"]))
    [doc] = (tmp_path / "doc" / "sessions").glob("*.jsonl")
    [ref] = (home / "sessions").glob("*.jsonl")
    assert _shape(ref) == _shape(doc)
    assert len(rt.resets) == 1 and loop.resets == [(rt.resets[0].window_id, "clear_memory")]


def test_the_host_loop_passes_mypy_strict(tmp_path: Path) -> None:
    result = run_mypy(_loop(tmp_path), tmp_path / ".mypy_cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_spec_registry_example_runs() -> None:
    code = python_blocks(DOC)[1]
    namespace: dict[str, object] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    # published 0.26 reports a tool request as an armed close-out
    assert namespace["effect"] == "close-out-armed"
