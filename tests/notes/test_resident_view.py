"""The resident notes view (``resident.py`` over ``watch.py``): a long-lived host holds each
home's reads and patches them from change notification, and never answers from a stale one.

Every change here is a real change to real files: by another process (the CLI, a plain
Python writer), through a hard link from outside the home, or by the test's own file
operations; after each, the resident answer must equal a fresh read of the home.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import resident
from pi_context.bindings.notes.records import HomeRead
from pi_context.bindings.notes.store import NoteStore

from .conftest import Notes

# The scenarios of the process cache's staleness tests, run again with the view held.
from .test_cache import (  # noqa: F401
    test_a_deleted_or_hard_linked_note_is_never_served_from_the_cache,
    test_a_write_by_another_process_is_seen_at_once,
    test_an_in_place_rewrite_with_a_forged_mtime_is_seen,
)

SESSION = Path(__file__).resolve().parents[1] / "fixtures" / "pi-sessions" / "s0005.jsonl"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture(autouse=True)
def held() -> Iterator[None]:
    assert resident.enable(), "inotify through watchdog is available on Linux"
    yield
    resident.shutdown()


def shape(read: HomeRead, store: NoteStore) -> tuple[list[tuple[str, str | None]], list[str]]:
    """What a read says: each note's path and body, and the refused files with reasons."""
    notes = []
    for path, entry in read.entries:
        notes.append((path, entry.body))
    if read.rows is not None:
        for path, row in read.rows_served:
            entry = read.rows.entry(row)
            notes.append((path, None if entry is None else entry.body))
    refused = sorted(f"{r.path}: {r.reason}" for r in read.refused)
    return sorted(notes), refused


def fresh(store: NoteStore, scope: str, contains: tuple[str, ...] | None = None) -> HomeRead:
    return store._read_home(scope, None, True, contains)


def agree(store: NoteStore, scope: str, contains: tuple[str, ...] | None = None) -> None:
    held_read = store.read_home(scope, bodies=True, contains=contains)
    assert shape(held_read, store) == shape(fresh(store, scope, contains), store)


def test_nothing_changed_is_answered_without_reading_the_home(notes: Notes) -> None:
    for n in range(5):
        notes.call("notes_write", path=f"f{n}/n.md", content=f"body {n}", scope="human")
    store = notes.store()
    first = store.read_home("human", bodies=True)
    assert store.read_home("human", bodies=True) is first, "held: the same read, no walk"
    notes.call("notes_write", path="f1/n.md", content="changed", scope="human")
    patched = store.read_home("human", bodies=True)
    assert patched is not first
    assert dict(shape(patched, store)[0])["f1/n.md"] == "changed"
    assert shape(patched, store) == shape(fresh(store, "human"), store)


WRITER = """
import os, sys
home = sys.argv[1]
os.makedirs(os.path.join(home, "made", "deeper"), exist_ok=True)
with open(os.path.join(home, "made", "deeper", "x.md"), "w") as handle:
    handle.write("from another process")
with open(os.path.join(home, "keep.md"), "w") as handle:
    handle.write("rewritten in place by another process")
os.remove(os.path.join(home, "gone.md"))
"""


def test_changes_by_another_process_are_seen_by_the_next_call(notes: Notes) -> None:
    notes.call("notes_write", path="keep.md", content="original", scope="human")
    notes.call("notes_write", path="gone.md", content="soon removed", scope="human")
    store = notes.store()
    before = notes.json("notes_list", scope="human")
    assert sorted(f["path"] for f in before["files"]) == ["gone.md", "keep.md"]
    home = store.home("human")
    subprocess.run([sys.executable, "-c", WRITER, str(home)], check=True, timeout=60)
    listed = notes.json("notes_list", scope="human")
    assert sorted(f["path"] for f in listed["files"]) == ["keep.md", "made/deeper/x.md"]
    found = notes.json("notes_search", query="another process", scope="human")
    assert sorted(f["path"] for f in found["files"]) == ["keep.md", "made/deeper/x.md"]
    agree(store, "human")


def test_a_link_and_a_write_from_outside_the_home_are_seen(notes: Notes, tmp_path: Path) -> None:
    """A hard link made from outside, and a write through it, never touch the note's
    folder (no event there): the note file's own watch reports them."""
    notes.call("notes_write", path="deep/linked.md", content="value before", scope="human")
    store = notes.store()
    agree(store, "human")
    assert "refused" not in notes.json("notes_list", scope="human")
    file = store.physical_path("human", "deep/linked.md")
    outside = tmp_path / "outside.md"
    os.link(file, outside)
    listed = notes.json("notes_list", scope="human")
    assert listed["files"] == [] and "hard links" in listed["refused"][0]["reason"]
    agree(store, "human")
    os.unlink(outside)
    assert [f["path"] for f in notes.json("notes_list", scope="human")["files"]] == [
        "deep/linked.md"
    ]
    os.link(file, outside)
    agree(store, "human")
    with open(outside, "r+") as handle:  # written through the outside name only
        handle.write("value after ")
    agree(store, "human")


def test_a_home_replaced_by_another_folder_is_read_afresh(notes: Notes) -> None:
    notes.call("notes_write", path="a.md", content="first home", scope="human")
    store = notes.store()
    agree(store, "human")
    home = store.home("human")
    home.rename(home.with_name(home.name + "-old"))
    home.mkdir()
    (home / "b.md").write_text("second home")
    listed = notes.json("notes_list", scope="human")
    assert [f["path"] for f in listed["files"]] == ["b.md"]
    agree(store, "human")


def test_the_server_stops_its_watcher_and_exits(notes: Notes, tmp_path: Path) -> None:
    """``pi-context mcp`` with the view on exits promptly when its client goes away."""
    notes.call("notes_write", path="a.md", content="body", scope="human")
    session = tmp_path / "session.jsonl"
    shutil.copy(SESSION, session)
    command = [sys.executable, "-m", "pi_context", "mcp", "--session", str(session)]
    command += ["--notes-home", str(notes.ctx.notes_home), "--cwd", str(notes.ctx.cwd)]
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "notes_list", "arguments": {"scope": "human"}}},
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command,
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = json.loads(
        next(a for a in answers if a.get("id") == 2)["result"]["content"][0]["text"]
    )
    assert [f["path"] for f in listed["files"]] == ["a.md"]
    assert "Traceback" not in done.stderr


# --- any sequence of file operations: the held read equals a fresh one after each ----------

FOLDERS = ["", "a", "a/b", "c"]
NAMES = ["n1.md", "n2.md", "n3.md", "x.txt", ".tmp-n1.md"]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.text(
        alphabet="ab \n", max_size=12)),
    st.tuples(st.just("append"), st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.just("z")),
    st.tuples(st.just("remove"), st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(FOLDERS), st.sampled_from(NAMES),
              st.sampled_from(FOLDERS)),
    st.tuples(st.just("rmtree"), st.sampled_from(FOLDERS[1:]), st.just(""), st.just("")),
    st.tuples(st.just("link"), st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.just("")),
    st.tuples(st.just("chmod"), st.sampled_from(FOLDERS), st.sampled_from(NAMES), st.just("")),
)  # fmt: skip


def perform(home: Path, outside: Path, op: tuple[str, str, str, str]) -> None:
    kind, folder, name, extra = op
    where = home / folder if folder else home
    target = where / name
    try:
        if kind == "write":
            where.mkdir(parents=True, exist_ok=True)
            target.write_text(extra)
        elif kind == "append":
            with open(target, "a") as handle:
                handle.write(extra)
        elif kind == "remove":
            target.unlink()
        elif kind == "rename":
            destination = home / extra if extra else home
            destination.mkdir(parents=True, exist_ok=True)
            os.replace(target, destination / name)
        elif kind == "rmtree":
            for below in sorted(where.rglob("*"), reverse=True):
                below.rmdir() if below.is_dir() else below.unlink()
            where.rmdir()
        elif kind == "link":
            os.link(target, outside / f"link-{len(list(outside.iterdir()))}")
        elif kind == "chmod":
            target.chmod(0o600 if target.stat().st_mode & 0o044 else 0o644)
    except (FileNotFoundError, NotADirectoryError, FileExistsError, IsADirectoryError, OSError):
        pass  # an operation on what is not there: nothing changed


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(operation, min_size=1, max_size=12))
def test_any_sequence_of_changes_leaves_the_held_read_equal_to_a_fresh_one(
    notes: Notes, tmp_path: Path, ops: list[tuple[str, str, str, str]]
) -> None:
    store = notes.store()
    notes.call("notes_write", path="seed.md", content="seed", scope="human")
    home = store.home("human")
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    agree(store, "human")
    agree(store, "human", ("a",))
    for op in ops:
        perform(home, outside, op)
        agree(store, "human")
        agree(store, "human", ("a",))


def test_the_watcher_leaves_the_cache_alone(notes: Notes) -> None:
    """The settle barrier's sentinel lives in a private folder of its own: the cache root is
    never made by it (a root without its marker is refused, and every history call would
    then go unindexed)."""
    from pi_context.support.cache_dir import cache_root

    notes.call("notes_write", path="a.md", content="body", scope="human")
    notes.json("notes_list", scope="human")
    root = cache_root()
    assert not root.exists() or (root / ".pi-context-cache").is_file()
    assert not (root / "notes-watch").exists()


# --- a reported note file is read again alone ----------------------------------------------

OTHER_WRITER = """
import sys
with open(sys.argv[1], "w") as handle:
    handle.write(sys.argv[2])
"""


def test_a_write_to_one_note_reads_that_note_alone(
    notes: Notes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process rewrites one note of a folder whose other notes were all written
    moments ago (inside the racy window, so no cache may vouch for them): only that note is
    read again, and the listing and a search equal a fresh process's answers."""
    for n in range(12):
        notes.call("notes_write", path=f"soak/s{n:02d}.md", content=f"state {n}", scope="human")
    notes.call("notes_write", path="other/keep.md", content="state kept", scope="human")
    store = notes.store()
    agree(store, "human")
    agree(store, "human", ("state",))
    assert len(notes.json("notes_list", scope="human")["files"]) == 13
    target = store.physical_path("human", "soak/s05.md")
    text = target.read_text().replace("state 5", "state five")
    subprocess.run([sys.executable, "-c", OTHER_WRITER, str(target), text], check=True)
    read: list[str] = []
    entry = NoteStore._entry

    def counted(self: NoteStore, scope: str, cache: Any, fd: int, item: Any, **how: bool) -> Any:
        read.append(item[0])
        return entry(self, scope, cache, fd, item, **how)

    monkeypatch.setattr(NoteStore, "_entry", counted)
    listed = notes.json("notes_list", scope="human")
    found = notes.json("notes_search", query="state five", scope="human")
    assert read and set(read) == {"soak/s05.md"}, read
    monkeypatch.undo()
    assert [f["path"] for f in found["files"]] == ["soak/s05.md"]
    fresh_list = json.loads(_fresh_process(notes, "notes_list", scope="human"))
    assert listed["files"] == fresh_list["files"]
    agree(store, "human")
    agree(store, "human", ("state five",))


def _fresh_process(notes: Notes, name: str, **args: Any) -> str:
    """The tool's answer from a fresh process (its own store, no resident view)."""
    command = [sys.executable, "-m", "pi_context", "tool", name, "--args", json.dumps(args)]
    command += ["--notes-home", str(notes.ctx.notes_home), "--cwd", str(notes.ctx.cwd)]
    command += ["--agent", notes.ctx.agent_name, "--model", str(notes.ctx.model_id)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_rewrite_inside_the_same_mtime_tick_is_seen(notes: Notes) -> None:
    """A note rewritten in place to the same size with its old mtime forged back (what two
    writes inside one timestamp tick look like) is read again: the watcher reported it, and
    a stat that equals the held one vouches for nothing inside the racy window."""
    for n in range(4):
        notes.call("notes_write", path=f"tick/t{n}.md", content="value aaaa", scope="human")
    store = notes.store()
    agree(store, "human")
    target = store.physical_path("human", "tick/t2.md")
    before = target.stat()
    with open(target, "r+") as handle:
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace("value aaaa", "value bbbb"))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    found = notes.json("notes_search", query="value bbbb", scope="human")
    assert [f["path"] for f in found["files"]] == ["tick/t2.md"]
    agree(store, "human")
