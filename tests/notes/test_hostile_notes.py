"""The notes tools on hostile ground (issue 25): hostile session ids, special files where a
session, a ``.git`` pointer or a cache file should be, a stopped lock holder, deep folders and
a full disk. Every case ends in a clean answer or a named error within a bound, every text the
tools return encodes as UTF-8, and nothing is left behind by a write that failed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.cache import CACHE, SETTLE_NS
from pi_context.bindings.notes.homes import project_key, session_id_from_file
from pi_context.bindings.notes.store import MAX_WALK_DEPTH, lock_name
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.tools import ToolContext
from pi_context.support.cache_dir import cache_root
from pi_context.support.frozen import replace

from .conftest import Notes
from .test_attacks import run_tool

BOUND = 10.0  # seconds any call here may take


def every_tool(ctx: ToolContext) -> list[tuple[str, bool, str]]:
    """(tool, is_error, text) of one call of each notes tool, in the session scope and not."""
    calls: list[tuple[str, dict[str, object]]] = [
        ("notes_list", {}),
        ("notes_search", {"query": "word"}),
        ("notes_write", {"path": "n.md", "content": "a word", "scope": "human"}),
        ("notes_read", {"path": "n.md", "scope": "human"}),
        (
            "notes_edit",
            {"path": "n.md", "edits": [{"oldText": "a", "newText": "b"}], "scope": "human"},
        ),
        ("notes_write", {"path": "s.md", "content": "x", "scope": "session"}),
        ("notes_list", {"scope": "session"}),
    ]
    out = []
    for name, args in calls:
        started = time.monotonic()
        is_error, text = run_tool(ctx, name, **args)
        assert time.monotonic() - started < BOUND, (name, args)
        text.encode("utf-8")  # every answer is encodable (no lone surrogate)
        if text.startswith("{"):
            json.loads(text)
        out.append((name, is_error, text))
    return out


@pytest.mark.parametrize("session_id", ["\ud800x", "a\nb", "\udc80", "tab\there", "del\x7f"])
def test_a_hostile_session_id_is_refused_for_the_session_home_only(
    notes: Notes, tmp_path: Path, session_id: str
) -> None:
    session = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": "t", "cwd": "/"}
    session.write_bytes(encode_line(header))
    assert session_id_from_file(session) == session_id
    ctx = replace(notes.ctx, session_id=None, session_path=session)
    answers = every_tool(ctx)
    assert not answers[2][1] and not answers[3][1], answers[2:4]  # other homes work
    for name, is_error, text in answers[5:]:
        assert is_error and "session home is unavailable" in text, (name, text)
    root = notes.ctx.notes_home
    assert root is not None
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            assert name.isprintable(), f"a folder or file named {name!r} under {folder}"


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom"])
def test_a_special_file_as_the_session_ends_in_a_named_error(
    notes: Notes, tmp_path: Path, kind: str
) -> None:
    session = tmp_path / "s.jsonl"
    if kind == "fifo":
        os.mkfifo(session)
    else:
        os.symlink(f"/dev/{kind}", session)
    ctx = replace(notes.ctx, session_id=None, session_path=session)
    for name, is_error, text in every_tool(ctx)[5:]:
        assert is_error and "not a session file" in text, (name, text)


@pytest.mark.parametrize("kind", ["fifo", "zero-link", "urandom-link", "deep-json"])
def test_a_hostile_dot_git_in_an_ancestor_is_never_opened(tmp_path: Path, kind: str) -> None:
    top = tmp_path / "top"
    work = top / "a" / "b"
    work.mkdir(parents=True)
    marker = top / ".git"
    if kind == "fifo":
        os.mkfifo(marker)
    elif kind == "deep-json":
        marker.write_text("gitdir: " + "[" * 200_000)
    else:
        os.symlink(f"/dev/{kind.split('-')[0]}", marker)
    started = time.monotonic()
    key = project_key(work)
    assert time.monotonic() - started < BOUND
    assert key.startswith("top-")  # the directory holding .git is the root


def test_a_deep_session_header_is_refused_by_name(notes: Notes, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(b"[" * 100_000 + b"\n")
    ctx = replace(notes.ctx, session_id=None, session_path=session)
    for _name, is_error, text in every_tool(ctx)[5:]:
        assert is_error and "nests deeper than 512 levels" in text, text


def test_a_fifo_in_place_of_the_notes_cache_is_not_waited_on(notes: Notes) -> None:
    assert not notes.call("notes_write", path="a.md", content="word", scope="human").is_error
    time.sleep(SETTLE_NS / 1e9 + 0.2)  # settled: the next walk stores it in the disk cache
    CACHE.clear()
    assert not notes.call("notes_list").is_error
    files = sorted((cache_root() / "notes").glob("*.bin"))
    assert files, "the list call wrote a disk cache"
    for file in files:
        file.unlink()
        os.mkfifo(file)
    for name, is_error, text in every_tool(notes.ctx)[:5]:
        assert not is_error, (name, text)
    CACHE.clear()  # as a fresh process: the FIFO is where the disk cache should be
    assert "a.md" in notes.call("notes_list", scope="human").text


@pytest.fixture
def stopped_holder(notes: Notes) -> Iterator[str]:
    """A process holding the lock of human note ``held.md``, stopped (``SIGSTOP``)."""
    home = notes.store().home("human")
    (home / jail.LOCK_DIR).mkdir(parents=True)
    lock = home / jail.LOCK_DIR / lock_name("held.md")
    script = (
        "import fcntl, os, signal, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGSTOP)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(lock)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"held\n"
    try:
        yield "held.md"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def test_a_stopped_lock_holder_ends_a_write_with_a_named_error_in_a_bound(
    notes: Notes, stopped_holder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jail, "LOCK_WAIT", 0.5)
    started = time.monotonic()
    is_error, text = run_tool(
        notes.ctx, "notes_write", path=stopped_holder, content="x", scope="human"
    )
    assert time.monotonic() - started < BOUND
    assert is_error and "held by another process" in text, text
    # Other notes, and every reader, go on.
    assert not notes.call("notes_write", path="free.md", content="x", scope="human").is_error
    assert not notes.call("notes_list", scope="human").is_error


def test_every_note_the_tools_write_is_listed_and_deeper_writes_are_refused(
    notes: Notes,
) -> None:
    deepest = "/".join(["d"] * MAX_WALK_DEPTH) + "/deep.md"
    assert not notes.call("notes_write", path=deepest, content="deep word", scope="human").is_error
    listed = notes.json("notes_list", scope="human")
    assert [n["path"] for n in listed["files"]] == [deepest] and "refused" not in listed
    found = notes.json("notes_search", query="deep word", scope="human")
    assert [f["path"] for f in found["files"]] == [deepest]
    for depth in (MAX_WALK_DEPTH + 1, 300, 510):  # 510: the deepest a 1024-byte path holds
        path = "d/" * depth + "n"
        error = notes.error("notes_write", path=path, content="x", scope="human")
        assert f"nested {depth} folders deep; the limit is {MAX_WALK_DEPTH}" in error["error"]
    home = notes.store().home("human")
    assert not (home.joinpath(*["d"] * (MAX_WALK_DEPTH + 1))).exists()


def test_a_deeper_note_written_by_another_tool_is_read_and_listed_as_refused(
    notes: Notes,
) -> None:
    home = notes.store().home("human")
    folder = home.joinpath(*["e"] * 300)
    folder.mkdir(parents=True)
    (folder / "n.md").write_text("planted word\n")
    path = "/".join(["e"] * 300) + "/n.md"
    assert "planted word" in notes.call("notes_read", path=path, scope="human").text
    listed = notes.json("notes_list", scope="human")
    assert listed["files"] == []
    assert [r["reason"] for r in listed["refused"]] == ["nested too deeply to list"]


# --- a real full disk -------------------------------------------------------------------


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs filled up but for a few bytes (skipped where mounting is not allowed)."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def _tree(top: Path) -> list[str]:
    """Every folder and file below ``top`` but the lock files (never deleted, by design)."""
    return sorted(str(p.relative_to(top)) for p in top.rglob("*") if p.suffix != ".lock")


def test_a_write_failing_for_space_leaves_no_empty_folders(notes: Notes, full_tmpfs: Path) -> None:
    ctx = replace(notes.ctx, notes_home=full_tmpfs / "notes")
    assert not run_tool(ctx, "notes_write", path="kept/k.md", content="k", scope="human")[0]
    _fill(full_tmpfs)
    before = _tree(full_tmpfs)
    for path in ("kept/new/deeper/n.md", "fresh/a/b/n.md", "n.md"):
        is_error, text = run_tool(
            ctx, "notes_write", path=path, content="x" * 20_000, scope="human"
        )
        assert is_error and "No space left on device" in text, text
        assert _tree(full_tmpfs) == before, "the folders a failed write made are gone again"
    (full_tmpfs / "filler").unlink()
    assert not run_tool(ctx, "notes_write", path="fresh/a/b/n.md", content="y", scope="human")[0]
