"""History over sessions written by the real Pi, on every branch view Pi computed for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history.items import project_history
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import is_reset_marker
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len

# Sessions written by the real Pi: a copy in the repo if one lands there, else the shared set.
_REPO = Path(__file__).resolve().parents[2]
_CANDIDATES = (
    _REPO / "tests" / "fixtures" / "pi-sessions",
    _REPO.parent / "shared" / "fixtures" / "pi-sessions",
)
FIXTURES = next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[0])


def _views() -> list[tuple[str, str, list[str]]]:
    cases: list[tuple[str, str, list[str]]] = []
    for expected in sorted(FIXTURES.glob("s*.expected.json")):
        data = json.loads(expected.read_text())
        jsonl = expected.name.replace(".expected.json", ".jsonl")
        cases.extend((jsonl, view["leafId"], view["branchIds"]) for view in data["views"])
    return cases


VIEWS = _views() if FIXTURES.exists() else []
pytestmark = pytest.mark.skipif(not VIEWS, reason="the Pi session fixtures are not present")

# Entries that must each yield at least one item (message roles that are conversation).
CONVERSATION_ROLES = {"user", "assistant", "toolResult", "bashExecution"}


@pytest.mark.parametrize(("name", "leaf", "branch_ids"), VIEWS)
def test_every_pi_branch_view_projects_into_windows_and_items(
    name: str, leaf: str, branch_ids: list[str]
) -> None:
    session = Session.open(FIXTURES / name, readonly=True)
    branch = session.branch(leaf)
    assert [entry["id"] for entry in branch] == branch_ids
    history = project_history(branch, session.session_id)

    markers = [entry["data"]["windowId"] for entry in branch if is_reset_marker(entry)]
    assert history.window_ids == [f"pcw:{session.session_id[:8]}:root", *markers]

    items = list(history.items())
    ids = [item.item_id for item in items]
    assert len(ids) == len(set(ids)), "item ids are unique on a branch"
    position = {entry_id: index for index, entry_id in enumerate(branch_ids)}
    order = [position[item_id.split("#")[0]] for item_id in ids]
    assert order == sorted(order), "items follow the branch order"

    itemised = {item_id.split("#")[0] for item_id in ids}
    calls = 0
    for entry in branch:
        kind = entry["type"]
        role = entry.get("message", {}).get("role") if kind == "message" else None
        if role in CONVERSATION_ROLES or kind in ("custom_message", "compaction", "branch_summary"):
            assert entry["id"] in itemised, f"{kind}/{role} {entry['id']} has no item"
        elif entry["id"] in itemised:
            pytest.fail(f"{kind}/{role} {entry['id']} should not be an item")
        if role == "assistant":
            content = entry["message"].get("content") or []
            calls += sum(1 for block in content if block.get("type") == "toolCall")
    assert sum(1 for item in items if item.role == "tool_call") == calls


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "tool", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_tool_cli_prints_what_the_model_receives_on_a_pi_written_file() -> None:
    name, leaf, branch_ids = VIEWS[1]  # a view away from the file's own leaf
    path = str(FIXTURES / name)
    listed = _cli(
        "history_list",
        "--session",
        path,
        "--leaf",
        leaf,
        "--args",
        '{"recent_first": false, "limit": 500}',
    )
    assert listed.returncode == 0, listed.stderr
    assert utf8_len(listed.stdout.rstrip("\n")) <= TOOL_OUTPUT_MAX_BYTES
    page: dict[str, Any] = json.loads(listed.stdout)
    assert {row["item_id"].split("#")[0] for row in page["items"]} <= set(branch_ids)

    first = page["items"][0]
    read = _cli(
        "history_read",
        "--session",
        path,
        "--leaf",
        leaf,
        "--details",
        "--args",
        json.dumps({"item_id": first["item_id"], "window_id": first["window_id"]}),
    )
    assert read.returncode == 0, read.stderr
    header = read.stdout.split("\n", 1)[0]
    assert header.startswith(f"[{first['item_id']} · chars 0-")

    error = _cli(
        "history_read", "--session", path, "--leaf", leaf, "--args", '{"item_id": "no-such-item"}'
    )
    assert error.returncode == 1
    assert json.loads(error.stdout)["error"].startswith("unknown item_id or window_id")

    missing = _cli("history_list", "--session", str(FIXTURES / "absent.jsonl"))
    # a missing path named on the command line is a usage error, the option named
    assert missing.returncode == 2
    assert "pi-context tool: --session" in missing.stderr
    assert "no such file" in missing.stderr
    bad_leaf = _cli("history_list", "--session", path, "--leaf", "zzzzzzzz")
    assert bad_leaf.returncode == 1
    assert "zzzzzzzz" in bad_leaf.stdout
