"""Home resolution: root selection, layout, slugs and the session id from a session file."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.homes import (
    AGENT_ENV_VAR,
    ENV_VAR,
    HEADER_LIMIT,
    HomeUnavailableError,
    NotesHomes,
    agent_slug,
    model_slug,
    notes_root,
    project_key,
    session_id_from_file,
    slugify,
)
from pi_context.bindings.notes.tools import homes_for
from pi_context.bindings.tools import ToolContext

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@given(st.text(max_size=80))
def test_slugs_have_the_extension_shape(value: str) -> None:
    assert SLUG.fullmatch(slugify(value))


def test_slug_cases_match_the_extension() -> None:
    assert slugify("Claude Sonnet 4.5") == "claude-sonnet-4-5"
    assert slugify("--") == "root", "an empty slug is root"
    assert model_slug("anthropic/claude-x") == "claude-x", "the provider prefix goes"
    assert model_slug(None) == "default"
    assert agent_slug("Planner", {}) == "planner"
    assert agent_slug("pi", {AGENT_ENV_VAR: "Reviewer"}) == "reviewer", "PI_NOTES_AGENT wins"


def test_project_key_is_name_and_sha1_of_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "my-app"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    digest = hashlib.sha1(str(repo).encode()).hexdigest()[:8]
    assert project_key(repo) == f"my-app-{digest}"
    assert project_key(repo / "src" / "deep") == f"my-app-{digest}", "the git root, not cwd"
    # A linked worktree points at <main>/.git/worktrees/<name> and shares the main key.
    tree = tmp_path / "elsewhere" / "wt"
    tree.mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {repo}/.git/worktrees/wt\n", encoding="utf-8")
    assert project_key(tree) == f"my-app-{digest}"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_key(plain) == f"plain-{hashlib.sha1(str(plain).encode()).hexdigest()[:8]}"


def test_projects_with_the_same_name_get_different_homes(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "app", tmp_path / "b" / "app"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert project_key(one).startswith("app-") and project_key(two).startswith("app-")
    assert project_key(one) != project_key(two)


def test_layout_under_the_root(tmp_path: Path) -> None:
    homes = NotesHomes(tmp_path, "sess-1", tmp_path, "pi", "openai/m1")
    assert homes.home("session") == tmp_path / "pi" / "session" / "sess-1"
    assert homes.home("human") == tmp_path / "human"
    assert homes.home("agent") == tmp_path / "agents" / "pi"
    assert homes.home("model") == tmp_path / "models" / "m1"
    assert homes.home("project") == tmp_path / "project" / project_key(tmp_path)
    assert homes.available() == ("session", "project", "human", "agent", "model")


def test_missing_identity_makes_only_that_home_unavailable(tmp_path: Path) -> None:
    homes = NotesHomes(tmp_path, None, tmp_path, "pi", None)
    assert homes.available() == ("project", "human", "agent", "model")
    assert homes.home("model") == tmp_path / "models" / "default", "as the extension does"
    with pytest.raises(HomeUnavailableError, match="no session id"):
        homes.home("session")
    with pytest.raises(HomeUnavailableError, match="unknown scope 'global'"):
        homes.home("global")
    for bad in ("..", "a/b", "a:b", "a\\b"):
        with pytest.raises(HomeUnavailableError, match="cannot name a folder"):
            NotesHomes(tmp_path, bad, tmp_path, "pi", None).home("session")


def test_root_precedence(tmp_path: Path) -> None:
    explicit = tmp_path / "explicit"
    assert notes_root(explicit, {ENV_VAR: "/elsewhere"}) == explicit
    assert notes_root(None, {ENV_VAR: str(tmp_path / "env")}) == tmp_path / "env"
    assert notes_root(None, {}) == Path.home() / ".agents" / "notes"
    assert notes_root(None, {ENV_VAR: ""}) == Path.home() / ".agents" / "notes"


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
    assert homes.home("session") == tmp_path / "pi" / "session" / "abc-1"
    missing = homes_for(ToolContext(session_path=tmp_path / "nope", notes_home=tmp_path))
    with pytest.raises(HomeUnavailableError, match="cannot read session file"):
        missing.home("session")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"type":"session","id":"s-1"}', "s-1"),  # no newline at the end
        (b'\n \r\n\t\n{"type":"session","id":"s-2"}\n{"type":"message"}\n', "s-2"),
        (b"\n\n\n", "not a Pi session file"),
        (b"", "not a Pi session file"),
        (b'{"type":"message","id":"x"}\n{"type":"session","id":"s-3"}\n', "not a Pi session"),
        (b'{"type":"session","id":"' + b"x" * HEADER_LIMIT + b'"}\n', "longer than 1,048,576"),
        (b"\n" * 1000 + b'{"type":"session","id":"s-4"}\n', "s-4"),
    ],
)
def test_the_session_id_is_the_first_non_blank_line_s(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    file = tmp_path / "s.jsonl"
    file.write_bytes(data)
    if expected.startswith("s-"):
        assert session_id_from_file(file) == expected
    else:
        with pytest.raises(HomeUnavailableError, match=expected):
            session_id_from_file(file)
