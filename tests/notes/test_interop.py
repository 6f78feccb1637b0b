"""Notes shared with the TypeScript extension, and the move out of the earlier layout.

The tree below is built byte for byte the way pi-context 0.26's note store lays out and
serialises notes (root, home folders, ``.md`` names, key order, bare/JSON scalars, local ISO
timestamps, the ``project`` key on session notes). Our tools must list, read and edit it in
place; what our tools write must land at the same paths in the same shape.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.bindings.notes.frontmatter import local_iso, parse_note
from pi_context.bindings.notes.homes import notes_root
from pi_context.bindings.notes.relayout import legacy_project_slug, legacy_slug
from pi_context.bindings.tools import ToolContext

from .conftest import Notes

SESSION = "0190f1a2-aaaa-7bbb-8ccc-000000000001"
T0 = 1_767_323_045_678


_LAYOUT = Path(__file__).resolve().parents[1] / "interop" / "extension_layout.py"
_spec = importlib.util.spec_from_file_location("_extension_layout_for_notes", _LAYOUT)
assert _spec is not None and _spec.loader is not None
_layout = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _layout  # dataclasses look their module up while building
_spec.loader.exec_module(_layout)


def extension_note(body: str, *, stale: bool = False, project: str | None = None) -> str:
    """A note file as the extension serialises it (the interop suite's one writer of them)."""
    text: str = _layout.note_file(body, T0, stale=stale, project=project)
    return text


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Notes, Path, str]:
    """A repository, a notes root and an identity, as the extension would see them."""
    repo = tmp_path / "work" / "shop-app"
    (repo / ".git").mkdir(parents=True)
    root = tmp_path / "agents-notes"
    root.mkdir()
    key = f"shop-app-{hashlib.sha1(str(repo).encode()).hexdigest()[:8]}"
    ctx = ToolContext(
        notes_home=root,
        cwd=repo,
        session_id=SESSION,
        agent_name="root",
        model_id="anthropic/claude-sonnet-4-5",
    )
    return Notes(ctx), root, key


def build_extension_tree(root: Path, key: str) -> dict[str, Path]:
    files = {
        "session": root / "pi" / "session" / SESSION / "plan" / "today.md",
        "project": root / "project" / key / "decisions.md",
        "human": root / "human" / "prefs.md",
        "agent": root / "agents" / "root" / "habits.md",
        "model": root / "models" / "claude-sonnet-4-5" / "quirks.md",
    }
    for scope, file in files.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        project = key if scope == "session" else None
        file.write_text(extension_note(f"{scope} body\nline two", project=project), "utf-8")
    # The extension's own temp files end in .tmp and are never notes.
    (files["human"].parent / "prefs.md.123.abc.tmp").write_text("partial", "utf-8")
    return files


def test_the_default_root_is_the_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_NOTES_HOME", raising=False)
    assert notes_root() == Path.home() / ".agents" / "notes"


def test_an_extension_tree_is_listed_read_and_edited_in_place(
    shared: tuple[Notes, Path, str],
) -> None:
    notes, root, key = shared
    files = build_extension_tree(root, key)
    listed = notes.json("notes_list")
    assert sorted((f["scope"], f["path"]) for f in listed["files"]) == [
        ("agent", "habits.md"),
        ("human", "prefs.md"),
        ("model", "quirks.md"),
        ("project", "decisions.md"),
        ("session", "plan/today.md"),
    ]
    assert "refused" not in listed
    assert all(f["updated_at"] == local_iso(T0) for f in listed["files"])
    read = notes.read(path="plan/today", scope="session")  # the .md suffix is implied
    assert read.content == files["session"].read_text("utf-8")
    found = notes.json("notes_search", query="line two")
    assert len(found["files"]) == 5
    for scope, file in files.items():
        path = "plan/today.md" if scope == "session" else file.name
        change = [{"oldText": "line two", "newText": "edited by python"}]
        edited = notes.json("notes_edit", path=path, scope=scope, edits=change)
        assert edited["applied"] == 1
        text = file.read_text("utf-8")
        assert text.endswith(f"{scope} body\nedited by python"), "edited at the same path"
        head = text.split("\n---\n", 1)[0].splitlines()
        assert head[:4] == ["---", "origin: self", "status: active", "stale: false"]
        assert head[4].startswith("createdAt: " + local_iso(T0)[:4]), "createdAt kept"
        if scope == "session":
            assert f"project: {key}" in head, "the extension's extra key survives"


def test_notes_we_write_land_where_the_extension_reads_them(
    shared: tuple[Notes, Path, str],
) -> None:
    notes, root, key = shared
    for scope in ("session", "project", "human", "agent", "model"):
        notes.call("notes_write", path=f"from-python/{scope}", content="hello", scope=scope)
    expected = {
        "session": root / "pi" / "session" / SESSION,
        "project": root / "project" / key,
        "human": root / "human",
        "agent": root / "agents" / "root",
        "model": root / "models" / "claude-sonnet-4-5",
    }
    for scope, home in expected.items():
        file = home / "from-python" / f"{scope}.md"
        text = file.read_text("utf-8")
        keys = [line.split(":", 1)[0] for line in text.split("\n---\n", 1)[0].splitlines()[1:]]
        want = ["origin", "status", "stale", "createdAt", "updatedAt", "lastAccessed"]
        assert keys[:6] == want and keys[6] == "accessCount"
        assert keys[7:] == (["project"] if scope == "session" else [])
        assert text.endswith("\n---\n\nhello"), "one blank line, then the body"
        parsed = parse_note(text, 0)
        assert parsed.malformed == () and parsed.meta.status == "active"


# --- pi-context notes migrate: from the earlier layout ---------------------------------------


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def old_note(body: str) -> str:
    stamp = local_iso(T0)
    return (
        f"---\norigin: self\nstale: false\ncreatedAt: {stamp}\nupdatedAt: {stamp}\n"
        f"lastAccessed: {stamp}\naccessCount: 2\n---\n\n{body}"
    )


def test_migrate_moves_the_earlier_layout_dry_run_first(tmp_path: Path) -> None:
    old, new = tmp_path / "old-root", tmp_path / "new-root"
    project = tmp_path / "proj"
    project.mkdir()
    model = "anthropic/claude-x"
    layout = {
        f"sessions/{SESSION}/todo": "session todo",
        "sessions/odd-id-0123456789/x.md": "unrecoverable session",
        f"projects/{legacy_project_slug(project)}/arch.md": "project note",
        "projects/unknown-aaaaaaaaaa/lost.md": "unknown project",
        "human/me.md": "human note",
        "agents/Planner/a/b": "agent note",
        f"models/{legacy_slug(model)}/m.md": "model note",
        "models/plain-model/p.md": "plain model note",
    }
    for rel, body in layout.items():
        file = old / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(old_note(body), "utf-8")
    conflict = new / "human" / "me.md"
    conflict.parent.mkdir(parents=True)
    conflict.write_text("different content", "utf-8")
    before = {rel: (old / rel).read_bytes() for rel in layout}

    args = ["notes", "migrate", "--from", str(old), "--notes-home", str(new), "--quiet"]
    args += ["--project", str(project), "--model", model]
    dry = cli(*args, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "would move" in dry.stdout and "8 notes" not in dry.stdout
    assert {rel: (old / rel).read_bytes() for rel in layout} == before, "a dry run moves nothing"
    assert not (new / "pi").exists()

    done = cli(*args, "--apply", cwd=tmp_path)
    assert done.returncode == 1, "some notes were left, and the exit status says so"
    key = (new / "project").iterdir().__next__().name
    moved = {
        f"pi/session/{SESSION}/todo.md": "session todo",
        f"project/{key}/arch.md": "project note",
        "agents/planner/a/b.md": "agent note",
        "models/claude-x/m.md": "model note",
        "models/plain-model/p.md": "plain model note",
    }
    for rel, body in moved.items():
        assert (new / rel).read_text("utf-8") == old_note(body), rel
    left = {
        "sessions/odd-id-0123456789/x.md",
        "projects/unknown-aaaaaaaaaa/lost.md",
        "human/me.md",
    }
    for rel in left:
        assert (old / rel).read_bytes() == before[rel], f"{rel} stays, untouched"
    assert conflict.read_text("utf-8") == "different content", "nothing is overwritten"
    assert "already exists with other content" in done.stderr
    assert "rerun with --project DIR" in done.stderr
    assert "session id cannot be recovered" in done.stderr
    for rel in set(layout) - left:
        assert not (old / rel).exists(), f"{rel} moved, not copied"
    # The moved notes are read by the tools at their new homes.
    ctx = ToolContext(notes_home=new, cwd=project, session_id=SESSION, agent_name="Planner")
    notes = Notes(ctx)
    assert notes.read(path="todo", scope="session").content.endswith("session todo")
    assert notes.read(path="a/b", scope="agent").content.endswith("agent note")
    # Running again is harmless: only what was left is reported again.
    again = cli(*args, "--apply", cwd=tmp_path)
    assert "moving" not in again.stdout
