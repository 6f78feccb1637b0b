"""docs/embedding.md: its host loop runs as written, over real files, and type-checks."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from pi_context import Session
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
    assert len(python_blocks(DOC)[0].splitlines()) <= 80


def test_the_host_loop_runs_and_writes_two_windows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = subprocess.run(
        [sys.executable, str(_loop(tmp_path)), str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
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
    assert set(results) == {"notes_write", "wipe_memory", "notes_read"}
    assert not any(m["isError"] for m in results.values())
    assert (
        json.loads(results["wipe_memory"]["content"][0]["text"])["status"] == "rollover_requested"
    )
    # The note written in the first window is read back in the second.
    assert "Step 1 done; next: step 2." in results["notes_read"]["content"][0]["text"]
    assert messages[-1]["role"] == "assistant"
    assert messages[-1]["content"] == [{"type": "text", "text": "Resumed from my checkpoint."}]


def test_the_host_loop_passes_mypy_strict(tmp_path: Path) -> None:
    result = run_mypy(_loop(tmp_path), tmp_path / ".mypy_cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_spec_registry_example_runs() -> None:
    code = python_blocks(DOC)[1]
    namespace: dict[str, object] = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    # published 0.26 reports a tool request as an armed close-out
    assert namespace["effect"] == "close-out-armed"
