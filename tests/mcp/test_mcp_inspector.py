"""Every client accepts our tool schemas: the MCP Inspector's CLI, in ``--strict`` mode,
finds no schema-portability problem (none of its warnings: e.g. a ``type`` array that a
single-type dialect such as Gemini's function declarations rejects)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.tool_registry import all_tools

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"


def type_arrays(schema: Any, where: str = "") -> list[str]:
    """Every place in ``schema`` whose ``type`` is a list."""
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(where or "(root)")
        for key, value in schema.items():
            found += type_arrays(value, f"{where}.{key}" if where else key)
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += type_arrays(value, f"{where}[{index}]")
    return found


def test_no_schema_has_a_type_array() -> None:
    for tool in all_tools().values():
        assert type_arrays(dict(tool.parameters)) == [], tool.name


def test_the_inspector_finds_no_portability_problem(mcp_inspector: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    session = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, session)
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    server = [sys.executable, "-m", "pi_context", "mcp", "--session", str(session),
              "--notes-home", str(tmp_path / "notes"), "--cwd", str(tmp_path)]  # fmt: skip
    # The Inspector gives the server only a few variables of its own (HOME, PATH, ...):
    # hand it the suite's cache, so that nothing it might write lands in a home.
    passed = [f"{name}={os.environ[name]}" for name in ("PI_CONTEXT_CACHE_DIR", "PI_NOTES_HOME")]
    server = [arg for pair in passed for arg in ("-e", pair)] + ["--", *server]
    done = subprocess.run(
        [str(mcp_inspector), "--cli", "--method", "tools/list", "--strict", *server],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr
    assert "warnings" not in done.stderr, done.stderr
    listed = json.loads(done.stdout)["tools"]
    from pi_context.mcp.server import served_tools

    assert [tool["name"] for tool in listed] == list(served_tools())
    summary = subprocess.run(
        [str(mcp_inspector), "--cli", "--method", "tools/list", *server],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert summary.returncode == 0 and "Schema portability" not in summary.stderr, summary.stderr
