"""``benchmarks/mcp_soak.py`` runs end to end in a short form (the CI's): the real server,
every served tool, a result file in the shape the README tables are made from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = {
    "history_list",
    "history_search",
    "history_read",
    "history_windows",
    "notes_list",
    "notes_search",
    "notes_read",
    "notes_write",
    "notes_edit",
    "context_history_search",
    "context_history_read",
}

pytest.importorskip("mcp")


def test_a_short_soak_writes_every_tool_s_row(tmp_path: Path) -> None:
    command = [sys.executable, str(REPO / "benchmarks" / "mcp_soak.py")]
    command += ["--entries", "1000", "--notes", "40", "--calls", "48", "--out", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed (figures, not errors)
    assert "Traceback" not in done.stderr
    result = json.loads((tmp_path / "mcp_soak.json").read_text())
    ids = {row["id"] for row in result["rows"]}
    assert {f"{tool} p99 at 1,000 entries" for tool in TOOLS} <= ids
    rows = {row["id"]: row for row in result["rows"]}
    assert rows["error results at 1,000 entries"]["met"] is True
    assert rows["server RSS end / warm at 1,000 entries"]["ours"].endswith("MiB")
