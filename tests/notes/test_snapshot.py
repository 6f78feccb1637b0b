"""The closed boot snapshot: load-once, failure isolation, stale exclusion, no writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_context.bindings.notes.snapshot import load_snapshot
from pi_context.bindings.notes.store import NoteStore

from .conftest import Notes


class CountingStore(NoteStore):
    """The real store, counting how often each home is read (every read goes through
    ``read_home``: in full for a load, metadata only for a scan)."""

    def __init__(self, base: NoteStore) -> None:
        super().__init__(base.homes, base.clock)
        self.loads: list[str] = []
        self.scans: list[str] = []

    def read_home(self, scope, accept=None, *, bodies, contains=None):  # type: ignore[no-untyped-def]
        (self.loads if bodies else self.scans).append(scope)
        return super().read_home(scope, accept, bodies=bodies, contains=contains)


def tree(root: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
        for p in sorted(root.rglob("*"))
    }


def test_each_home_is_read_exactly_once_and_nothing_is_written(notes: Notes) -> None:
    for scope in ("session", "project", "human", "agent", "model"):
        notes.call("notes_write", path=f"{scope}.md", content=f"{scope} body", scope=scope)
    root = Path(str(notes.ctx.notes_home))
    before = tree(root)
    store = CountingStore(notes.store())
    snapshot = load_snapshot(store)
    assert sorted(store.loads) == ["agent", "human", "model", "project", "session"]
    assert store.scans == []
    assert tree(root) == before, "building a snapshot never touches the filesystem"
    assert snapshot.complete and snapshot.recovery_notice() is None
    assert {(n.scope, n.path, n.body) for n in snapshot.notes} == {
        (s, f"{s}.md", f"{s} body") for s in ("session", "project", "human", "agent", "model")
    }


def test_the_snapshot_is_closed_against_later_writes(notes: Notes) -> None:
    notes.call("notes_write", path="a.md", content="first")
    snapshot = load_snapshot(notes.store())
    notes.call("notes_write", path="a.md", content="second")
    notes.call("notes_write", path="b.md", content="new")
    assert [(n.path, n.body) for n in snapshot.index()] == [("a.md", "first")]


def test_stale_notes_leave_the_index_but_stay_in_the_snapshot(notes: Notes) -> None:
    notes.call("notes_write", path="fresh.md", content="fresh content")
    notes.call("notes_write", path="old.md", content="stale content", stale=True)
    snapshot = load_snapshot(notes.store())
    assert [n.path for n in snapshot.index()] == ["fresh.md"]
    assert sorted(n.path for n in snapshot.notes) == ["fresh.md", "old.md"]
    notes.call("notes_edit", path="fresh.md", stale=True)
    assert load_snapshot(notes.store()).index() == (), "all stale: an empty index"


def test_a_failing_home_is_omitted_alone_with_notices(notes: Notes) -> None:
    notes.call("notes_write", path="keep.md", content="kept", scope="human")
    notes.call("notes_write", path="keep.md", content="kept", scope="session")
    agent_home = notes.store().home("agent")
    agent_home.parent.mkdir(parents=True, exist_ok=True)
    agent_home.write_text("a file where the agent home should be", encoding="utf-8")
    snapshot = load_snapshot(notes.store())
    assert not snapshot.complete
    assert [f.scope for f in snapshot.failures] == ["agent"]
    assert "agent" not in snapshot.loaded
    assert sorted(n.scope for n in snapshot.notes) == ["human", "session"]
    notice = snapshot.recovery_notice()
    assert notice is not None and "notes_list" in notice and "agent" in notice
    human = snapshot.human_notice()
    assert human is not None and human.startswith("pi-context: notes index incomplete (agent:")
    # The tools see the same failure and still serve the healthy homes.
    listed = notes.json("notes_list")
    assert listed["unreadable_homes"][0]["scope"] == "agent"
    assert sorted(f["scope"] for f in listed["files"]) == ["human", "session"]


def test_missing_homes_and_identities_are_normal(notes: Notes, tmp_path: Path) -> None:
    empty = load_snapshot(notes.store())
    assert empty.complete and empty.notes == ()
    assert empty.loaded == ("session", "project", "human", "agent", "model")
    anonymous = notes.other(session_id=None, model_id=None)
    partial = load_snapshot(anonymous.store())
    assert partial.unavailable == ("session",) and partial.complete, "model falls back to default"


def test_legacy_notes_are_left_out_with_a_migration_notice(notes: Notes) -> None:
    home = notes.store().home("human")
    home.mkdir(parents=True)
    (home / "old.md").write_text(
        "---\ncreated_at: 2023-11-14T22:13:20.000+00:00\n---\n\nold", encoding="utf-8"
    )
    snapshot = load_snapshot(notes.store())
    assert snapshot.notes == ()
    notice = snapshot.legacy_notice()
    assert notice is not None and "pi-context notes migrate" in notice


def test_a_permission_failure_is_isolated_when_not_root(notes: Notes) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions do not block reads (file-as-home covers it)")
    notes.call("notes_write", path="a.md", content="x", scope="agent")
    notes.call("notes_write", path="b.md", content="y", scope="human")
    home = notes.store().home("agent")
    home.chmod(0)
    try:
        snapshot = load_snapshot(notes.store())
    finally:
        home.chmod(0o755)
    assert [f.scope for f in snapshot.failures] == ["agent"]
    assert [n.path for n in snapshot.notes] == ["b.md"]
