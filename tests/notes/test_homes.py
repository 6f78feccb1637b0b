"""Home resolution: root selection, layout, slugs and the session id from a session file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.homes import (
    ENV_VAR,
    HomeUnavailableError,
    NotesHomes,
    notes_root,
    project_slug,
    session_id_from_file,
    slug,
)
from pi_context.bindings.notes.tools import homes_for
from pi_context.bindings.tools import ToolContext

SAFE = re.compile(r"[A-Za-z0-9._-]+")


@given(st.text(max_size=80))
def test_slugs_are_safe_names(value: str) -> None:
    name = slug(value)
    assert SAFE.fullmatch(name) and name not in (".", "..") and not name.startswith(".")
    assert len(name) <= 64 + 11


@given(st.text(max_size=30), st.text(max_size=30))
def test_slugs_are_injective(a: str, b: str) -> None:
    if a != b:
        assert slug(a) != slug(b)


def test_slug_cases() -> None:
    assert slug("0190f1a2-aaaa-7bbb") == "0190f1a2-aaaa-7bbb", "a clean id is kept readable"
    assert re.fullmatch(r"anthropic-claude-x-[0-9a-f]{10}", slug("anthropic/claude-x"))
    assert re.fullmatch(r"x-[0-9a-f]{10}", slug(".."))
    assert slug("a-0123456789") != "a-0123456789", "a name shaped like a hashed slug is hashed"


def test_projects_with_the_same_name_get_different_homes(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "app", tmp_path / "b" / "app"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert project_slug(one).startswith("app-") and project_slug(two).startswith("app-")
    assert project_slug(one) != project_slug(two)


def test_layout_under_the_root(tmp_path: Path) -> None:
    homes = NotesHomes(tmp_path, "sess-1", tmp_path, "pi", "m1")
    assert homes.home("session") == tmp_path / "sessions" / "sess-1"
    assert homes.home("human") == tmp_path / "human"
    assert homes.home("agent") == tmp_path / "agents" / "pi"
    assert homes.home("model") == tmp_path / "models" / "m1"
    assert homes.home("project").parent == tmp_path / "projects"
    assert homes.available() == ("session", "project", "human", "agent", "model")


def test_missing_identity_makes_only_that_home_unavailable(tmp_path: Path) -> None:
    homes = NotesHomes(tmp_path, None, tmp_path, "pi", None)
    assert homes.available() == ("project", "human", "agent")
    with pytest.raises(HomeUnavailableError, match="no session id"):
        homes.home("session")
    with pytest.raises(HomeUnavailableError, match="no model id"):
        homes.home("model")
    with pytest.raises(HomeUnavailableError, match="unknown scope 'global'"):
        homes.home("global")


def test_root_precedence(tmp_path: Path) -> None:
    explicit = tmp_path / "explicit"
    assert notes_root(explicit, {ENV_VAR: "/elsewhere"}) == explicit
    assert notes_root(None, {ENV_VAR: str(tmp_path / "env")}) == tmp_path / "env"
    assert notes_root(None, {}) == Path.home() / ".pi" / "agent" / "notes"
    assert notes_root(None, {ENV_VAR: ""}) == Path.home() / ".pi" / "agent" / "notes"


def test_session_id_comes_from_the_session_header(tmp_path: Path) -> None:
    # The header shape Pi writes: line 1 of the JSONL file, then entries.
    header = {
        "type": "session",
        "version": 3,
        "id": "0190f1a2-1c2d-7e3f-8a4b-5c6d7e8f9a0b",
        "timestamp": "2026-01-02T03:04:05.678Z",
        "cwd": "/work/project",
    }
    entry = {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-01-02T03:04:06.000Z",
        "message": {"role": "user", "content": "hi", "timestamp": 1767323046000},
    }
    file = tmp_path / "2026-01-02T03-04-05-678Z_0190f1a2.jsonl"
    lines = [json.dumps(v, separators=(",", ":"), ensure_ascii=False) for v in (header, entry)]
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert session_id_from_file(file) == "0190f1a2-1c2d-7e3f-8a4b-5c6d7e8f9a0b"


def test_session_file_problems_surface_only_on_the_session_home(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"message","id":"x"}\n', encoding="utf-8")
    with pytest.raises(HomeUnavailableError, match="not a Pi session file"):
        session_id_from_file(bad)
    homes = homes_for(ToolContext(session_path=bad, notes_home=tmp_path, cwd=tmp_path))
    assert homes.home("human") == tmp_path / "human"
    with pytest.raises(HomeUnavailableError, match="not a Pi session file"):
        homes.home("session")
    good = tmp_path / "good.jsonl"
    good.write_text('\n{"type":"session","version":3,"id":"abc-1","cwd":"/"}\n', encoding="utf-8")
    homes = homes_for(ToolContext(session_path=good, notes_home=tmp_path, cwd=tmp_path))
    assert homes.home("session") == tmp_path / "sessions" / "abc-1"
    missing = homes_for(ToolContext(session_path=tmp_path / "nope", notes_home=tmp_path))
    with pytest.raises(HomeUnavailableError, match="cannot read session file"):
        missing.home("session")
