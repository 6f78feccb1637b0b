"""The notes tools name a note ``address`` (the newest published contract) and still take the
earlier ``path``: the same note either way, both only when they agree, one of them required."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext, ToolResult

TOOLS = all_tools()
ADDRESSED = ("notes_write", "notes_edit", "notes_read")


def _ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "repo" / ".git").mkdir(parents=True, exist_ok=True)
    return ToolContext(notes_home=tmp_path / "notes", cwd=tmp_path / "repo", session_id="s-1")


def _call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return TOOLS[name].run(ctx, args)


@pytest.mark.parametrize("name", ADDRESSED)
def test_the_schema_offers_both_names_and_requires_neither(name: str) -> None:
    parameters = TOOLS[name].parameters
    assert {"address", "path"} <= set(parameters["properties"])
    assert "address" not in parameters["required"] and "path" not in parameters["required"]


@pytest.mark.parametrize("key", ["address", "path"])
@pytest.mark.parametrize("address", ["plan.md", "@project/notes/a.md", "@self/habits"])
def test_either_name_reaches_the_same_note(tmp_path: Path, key: str, address: str) -> None:
    ctx = _ctx(tmp_path)
    written = _call(ctx, "notes_write", **{key: address}, content="one two")
    assert not written.is_error, written.text
    other = "path" if key == "address" else "address"
    edited = _call(
        ctx, "notes_edit", **{other: address}, edits=[{"oldText": "two", "newText": "three"}]
    )
    assert not edited.is_error, edited.text
    read = _call(ctx, "notes_read", **{key: address})
    assert not read.is_error and read.text.endswith("one three")
    assert read.details["address"] == written.details["address"] == edited.details["address"]


def test_both_names_are_taken_when_they_agree(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    result = _call(ctx, "notes_write", address="@project/x.md", path="@project/x.md", content="a")
    assert not result.is_error, result.text


@pytest.mark.parametrize("name", ADDRESSED)
def test_two_different_notes_are_refused_naming_both(tmp_path: Path, name: str) -> None:
    ctx = _ctx(tmp_path)
    extra = {"content": "a"} if name == "notes_write" else {}
    result = _call(ctx, name, address="a.md", path="b.md", **extra)
    assert result.is_error
    payload = json.loads(result.text)
    assert "address and path name different notes" in payload["error"]
    assert payload["code"] == "invalid_address"
    assert (payload["details"]["address"], payload["details"]["path"]) == ("a.md", "b.md")
    assert not (tmp_path / "notes").exists() or not any((tmp_path / "notes").rglob("*.md"))


@pytest.mark.parametrize("name", ADDRESSED)
def test_a_call_naming_no_note_is_refused_naming_address(tmp_path: Path, name: str) -> None:
    extra = {"content": "a"} if name == "notes_write" else {}
    result = _call(_ctx(tmp_path), name, **extra)
    assert result.is_error
    assert f"{name} needs address" in json.loads(result.text)["error"]


def test_listings_show_the_running_agents_and_models_notes_as_self_and_model(
    tmp_path: Path,
) -> None:
    ctx = ToolContext(
        notes_home=tmp_path / "notes",
        cwd=_ctx(tmp_path).cwd,
        session_id="s-1",
        agent_name="faye",
        model_id="openai/gpt-5",
    )
    for address in ("@self/habits.md", "@agents/faye/lessons.md", "@model/quirks.md"):
        written = _call(ctx, "notes_write", address=address, content="x")
        assert not written.is_error, written.text
    other = tmp_path / "notes" / "agents" / "reviewer" / "checklist.md"
    other.parent.mkdir(parents=True)
    other.write_text("another agent's note", "utf-8")
    listed = json.loads(_call(ctx, "notes_list").text)["files"]
    assert sorted(row["address"] for row in listed) == [
        "@model/quirks.md",
        "@self/habits.md",
        "@self/lessons.md",
    ]
    named = json.loads(_call(ctx, "notes_list", pattern="@agents/*/**").text)["files"]
    assert sorted(row["address"] for row in named) == [
        "@agents/reviewer/checklist.md",
        "@self/habits.md",
        "@self/lessons.md",
    ]
    # The earlier listing form still names the same note, and is answered in the newest.
    read = _call(ctx, "notes_read", address="@models/gpt-5/quirks.md")
    assert not read.is_error and read.details["address"] == "@model/quirks.md"
