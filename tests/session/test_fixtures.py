"""Every view in Pi's fixtures reproduces exactly: through the library and ``session show``."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode
from pi_context.cli import main

from .conftest import FIXTURE_DIRS

VIEW_KEYS = ("leafId", "branchIds", "contextEntryIds", "projection", "sessionName", "tree")
RANDOM_FIXTURES = [
    pytest.param(path, id=f"{label}/{path.name}")
    for label, folder in FIXTURE_DIRS.items()
    for path in sorted(folder.glob("s*.jsonl"))
]


def nested_tree(flat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pi's nested ``getTree`` view rebuilt from ``session show --json``'s flat tree, checking
    on the way that the flat list is depth-first with consistent parents and depths."""
    roots: list[dict[str, Any]] = []
    path: list[tuple[str, dict[str, Any], list[str]]] = []  # id, node, children still due
    for item in flat:
        assert set(item) <= {"id", "parentId", "label", "depth", "children", "cycle"}, item
        while path and not path[-1][2]:
            path.pop()
        node = {"id": item["id"], "label": item["label"], "children": []}
        if path:
            parent_id, parent, due = path[-1]
            assert due.pop(0) == item["id"] and item["parentId"] == parent_id, item
            parent["children"].append(node)
        else:
            assert item["parentId"] is None, item
            roots.append(node)
        assert item["depth"] == len(path), item
        path.append((item["id"], node, list(item["children"])))
    assert all(not due for _, _, due in path), "every listed child follows its parent"
    return roots


def _expected(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name.replace(".jsonl", ".expected.json")).read_text())


def _views(path: Path) -> list[tuple[str | None, dict[str, Any]]]:
    views = _expected(path)["views"]
    return [(None if v["leaf"] == "file" else v["leaf"], v) for v in views]


@pytest.mark.parametrize("path", RANDOM_FIXTURES)
def test_random_fixture_views_reproduce_through_the_library(path: Path) -> None:
    session = Session.open(path, readonly=True)
    assert session.problems == []
    for leaf, expected in _views(path):
        got = session.view(leaf)
        for key in VIEW_KEYS:
            # Compare encoded JSON: key order is part of "exactly" (it is the bytes Pi writes).
            assert encode(got[key]) == encode(expected[key]), f"{path.name} leaf={leaf} {key}"


@pytest.mark.parametrize("path", RANDOM_FIXTURES)
def test_random_fixture_views_reproduce_through_session_show(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for leaf, expected in _views(path):
        argv = ["session", "show", str(path), "--json"]
        if leaf is not None:
            argv += ["--leaf", leaf]
        assert main(argv) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["leaf"] == expected["leaf"]
        got["tree"] = nested_tree(got["tree"])
        assert encode({k: got[k] for k in VIEW_KEYS}) == encode({k: expected[k] for k in VIEW_KEYS})


def test_session_show_entry_point_prints_the_fixture_view(fixtures_dir: Path) -> None:
    """The installed command itself (a real subprocess), once."""
    path = fixtures_dir / "s0003.jsonl"
    expected = _views(path)[0][1]
    argv = [sys.executable, "-m", "pi_context", "session", "show", str(path), "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    got = json.loads(result.stdout)
    assert result.stderr == ""
    got["tree"] = nested_tree(got["tree"])
    # Pi's view, plus the context windows of the branch (pi-context's own addition).
    windows = got.pop("windows")
    assert got.pop("dialect") in ("pi-context", "none")
    assert windows and windows[0]["start"] == 0 and windows[-1]["end"] == len(got["branchIds"])
    assert encode(got) == encode(expected)


def test_named_seed_views_reproduce(fixtures_dir: Path) -> None:
    expected = json.loads((fixtures_dir / "named-seed.expected.json").read_text())
    names = expected["names"]
    session = Session.open(fixtures_dir / "named-seed.jsonl", readonly=True)
    for view_name, leaf in (
        ("reloaded", None),
        ("reloadedBranchA2", names["a2"]),
        ("reloadedBranchLab", names["lab"]),
    ):
        want = expected[view_name]
        got = session.view(leaf)
        for key in ("leafId", "branchIds", "contextEntryIds", "tree"):
            assert encode(got[key]) == encode(want[key]), f"{view_name} {key}"
        projection = want["projection"]
        for key in ("messages", "thinkingLevel", "model"):
            assert encode(got["projection"][key]) == encode(projection[key]), f"{view_name} {key}"
        entries = [
            {"sourceEntryId": entry["id"], "messages": messages}
            for entry, messages in session.projection_entries(leaf)
        ]
        assert encode(entries) == encode(projection["entries"])
        assert session.labels == want["labels"]


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def test_named_seed_scenarios(fixtures_dir: Path) -> None:
    """The seed's hand-built story, stated with literal values."""
    expected = json.loads((fixtures_dir / "named-seed.expected.json").read_text())
    n = expected["names"]
    session = Session.open(fixtures_dir / "named-seed.jsonl", readonly=True)
    # Reloading puts the leaf on the last line of the file.
    assert session.leaf_id == n["lab2"]
    projection = session.projection()
    assert projection["thinkingLevel"] == "high"
    assert projection["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    # The compaction (keep from u3) leads the context; nothing before it survives but the kept part.
    context_ids = [e["id"] for e in session.context_entries()]
    assert context_ids[0] == n["comp"]
    assert n["u1"] not in context_ids and n["u2b"] not in context_ids
    # Its folded system prompt, then the summary, open the projection.
    first, second = projection["messages"][:2]
    assert (
        first["role"] == "system" and first["sections"]["preamble"] == "You are a test assistant."
    )
    assert second == {
        "role": "compactionSummary",
        "summary": "SUMMARY: user asked u1 and u2b; assistant answered.",
        "tokensBefore": 1234,
        "timestamp": _ms(session.get(n["comp"])["timestamp"]),  # the compaction's own time
    }
    # An edit keeps a user's string content a string.
    assert projection["messages"][2]["content"] == "u3: edited (string stays string for user)"
    # Labels resolve over the whole file: a1's sibling branch point and the post-edit entry.
    assert session.labels == {n["u1"]: "checkpoint-1", n["a4"]: "after-edits"}
    # Branching to a2 leaves the compaction and its edits behind.
    a2_context = [e["id"] for e in session.context_entries(n["a2"])]
    assert a2_context == [n["sys"], n["mc"], n["tl"], n["u1"], n["a1"], n["u2"], n["a2"]]


def test_fixture_files_reencode_byte_identically(fixtures_dir: Path) -> None:
    for path in sorted(fixtures_dir.glob("*.jsonl")):
        session = Session.open(path, readonly=True)
        lines = [encode(session.header), *(encode(e) for e in session.entries)]
        assert ("\n".join(lines) + "\n").encode() == path.read_bytes(), path.name
