"""docs/mcp.md matches the server: its tools table lists exactly the tools served, and its
client example uses the current notes layout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from pi_context.mcp.server import served_tools  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_the_tools_table_is_the_served_tools() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| tool | what it does | writes |") :].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| (yes)? ?\|$", table, re.M)
    served = served_tools()
    assert sorted(name for name, _ in rows) == sorted(served)
    for name, writes in rows:
        assert served[name].sequential == (writes == "yes"), name


def test_the_example_does_not_point_at_the_old_notes_layout() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert ".pi/agent/notes" not in text
    assert "~/.agents/notes" in text
