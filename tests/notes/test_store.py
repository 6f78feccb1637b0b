"""The store on a real filesystem: containment, conflicts, metadata lifecycle, hidden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_context.bindings.notes.homes import NotesHomes
from pi_context.bindings.notes.jail import TEMP_PREFIX, replace_file
from pi_context.bindings.notes.store import (
    HomeReadError,
    NoteConflictError,
    NoteNotFoundError,
    NoteStore,
    PathEscapeError,
)

from .conftest import Notes


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    ticks = iter(range(1_700_000_000_000, 1_800_000_000_000, 1000))
    homes = NotesHomes(tmp_path / "root", "s1", tmp_path, "pi", "m1")
    return NoteStore(homes, clock=lambda: next(ticks))


def test_write_keeps_created_and_counts_mutations(store: NoteStore) -> None:
    first = store.write("human", "a.md", "one")
    assert first.created and first.note.meta.access_count == 1
    second = store.write("human", "a.md", "two")
    assert not second.created
    meta = second.note.meta
    assert meta.created_at == first.note.meta.created_at
    assert meta.updated_at == first.note.meta.updated_at + 1000
    assert meta.access_count == 2
    marked = store.edit("human", "a.md", stale=True)
    assert marked.note.meta.stale
    assert marked.note.meta.updated_at == meta.updated_at, "a flag-only edit keeps updatedAt"
    assert marked.note.meta.last_accessed > meta.last_accessed
    assert store.read("human", "a.md").body == "two"


def test_reads_never_modify_the_file(store: NoteStore) -> None:
    store.write("human", "a.md", "x")
    file = store.physical_path("human", "a.md")
    before = (file.read_bytes(), file.stat().st_mtime_ns)
    store.read("human", "a.md")
    store.scan("human")
    store.load("human")
    assert (file.read_bytes(), file.stat().st_mtime_ns) == before


def test_a_directory_symlink_out_of_the_home_is_refused(store: NoteStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    home = store.home("human")
    home.mkdir(parents=True)
    (home / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError, match="escapes its home"):
        store.read("human", "link/secret.md")
    with pytest.raises(PathEscapeError, match="escapes its home"):
        store.write("human", "link/new.md", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"], "nothing written outside"
    assert [r.path for r in store.scan("human").records] == [], "listing does not follow links"


def test_a_file_symlink_out_of_the_home_is_refused(store: NoteStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    home = store.home("human")
    home.mkdir(parents=True)
    (home / "leak.md").symlink_to(outside)
    with pytest.raises(PathEscapeError):
        store.read("human", "leak.md")
    with pytest.raises(PathEscapeError, match="symbolic link"):
        store.write("human", "leak.md", "overwrite")
    assert outside.read_text(encoding="utf-8") == "secret"


def test_a_symlink_inside_the_home_is_not_followed_either(store: NoteStore) -> None:
    # Any link may be re-pointed outside between a check and a use, so none is followed.
    store.write("human", "real/a.md", "body")
    (store.home("human") / "alias").symlink_to(store.home("human") / "real")
    with pytest.raises(PathEscapeError, match="alias is a symbolic link"):
        store.read("human", "alias/a.md")
    assert [r.path for r in store.scan("human").records] == ["real/a.md"]


def test_a_note_cannot_also_be_a_folder(store: NoteStore) -> None:
    store.write("human", "a.md", "file")
    with pytest.raises(NoteConflictError, match="a note cannot also be a folder"):
        store.write("human", "a.md/b.md", "x")
    store.write("human", "dir.md/b.md", "x")
    with pytest.raises(NoteConflictError, match="folder of notes"):
        store.write("human", "dir.md", "x")
    with pytest.raises(NoteNotFoundError):
        store.read("human", "dir.md")


def test_a_path_without_md_names_the_same_markdown_file(store: NoteStore) -> None:
    store.write("human", "plan/today", "one")
    assert store.read("human", "plan/today.md").body == "one"
    assert (store.home("human") / "plan" / "today.md").is_file()
    assert [r.path for r in store.scan("human").records] == ["plan/today.md"]


def test_temp_and_lock_files_are_invisible(store: NoteStore) -> None:
    store.write("human", "a.md", "x")
    home = store.home("human")
    (home / f"{TEMP_PREFIX}123.abc").write_bytes(b"half a no")
    assert (home / ".pi-notes-locks").is_dir()
    assert [r.path for r in store.scan("human").records] == ["a.md"]
    assert [n.path for n in store.load("human").notes] == ["a.md"]


def test_atomic_write_leaves_no_temp_behind(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        replace_file(fd, "n.md", b"one", shown="n.md")
        replace_file(fd, "n.md", b"two", shown="n.md")
    finally:
        os.close(fd)
    assert (tmp_path / "n.md").read_bytes() == b"two"
    assert sorted(os.listdir(tmp_path)) == ["n.md"]


def test_a_home_that_is_not_a_directory_is_a_read_failure(store: NoteStore) -> None:
    home = store.home("agent")
    home.parent.mkdir(parents=True)
    home.write_text("not a folder", encoding="utf-8")
    with pytest.raises(HomeReadError, match="cannot read the agent home"):
        store.scan("agent")
    assert store.scan("human").records == (), "a missing home is simply empty"


def test_an_unwritable_home_is_a_named_write_error(store: NoteStore) -> None:
    home = store.home("agent")
    home.parent.mkdir(parents=True)
    home.write_text("not a folder", encoding="utf-8")
    with pytest.raises(Exception, match="cannot write note") as caught:
        store.write("agent", "a.md", "x")
    assert caught.value.fields == {"path": "a.md", "scope": "agent"}  # type: ignore[attr-defined]


def test_files_that_are_not_addressable_are_reported_not_listed(notes: Notes) -> None:
    store = notes.store()
    notes.call("notes_write", path="ok.md", content="x")
    home = store.home("session")
    (home / "bad\\name.md").write_text("x", encoding="utf-8")
    listed = notes.json("notes_list", scope="session")
    assert [f["path"] for f in listed["files"]] == ["ok.md"]
    assert listed["refused_total"] == 1
    assert "backslash" in listed["refused"][0]["reason"]


def test_invalid_utf8_is_readable_but_not_editable(store: NoteStore) -> None:
    store.write("human", "a.md", "ok")
    file = store.physical_path("human", "a.md")
    file.write_bytes(file.read_bytes() + b" \xff\xfe")
    assert store.read("human", "a.md").body.endswith("\ufffd\ufffd")
    with pytest.raises(Exception, match="not valid UTF-8"):
        store.edit("human", "a.md", [("ok", "fine")])
    assert file.read_bytes().endswith(b"\xff\xfe"), "the raw bytes survive a refused edit"
