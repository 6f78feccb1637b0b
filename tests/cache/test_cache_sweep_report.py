"""``pi-context cache clear`` and ``prune`` say exactly what they removed and what stayed, and
why, and exit 1 when anything stayed (issue 31, finding 7: ``clear`` printed "removed all 1
entries" and exited 0 while a held index of session text stayed)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pi_context.bindings.history.index import cache_dir_for
from pi_context.bindings.tool_registry import run_tool
from pi_context.bindings.tools import ToolContext

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(folder))
    monkeypatch.delenv("PI_CONTEXT_HISTORY_INDEX", raising=False)
    return folder


def indexed(folder: Path) -> tuple[Path, Path]:
    """A session copy with its history index: (session, index entry)."""
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    shutil.copy(FIXTURE, path)
    assert not run_tool("history_list", {"limit": 2}, ToolContext(session_path=path)).is_error
    return path, cache_dir_for(Path(os.path.realpath(path)))


def cache_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "cache", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@contextmanager
def held(entry: Path) -> Iterator[None]:
    fd = os.open(entry / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@pytest.mark.parametrize("action", ["clear", "prune"])
def test_an_entry_whose_lock_is_held_is_reported_as_left_with_exit_1(
    root: Path, tmp_path: Path, action: str
) -> None:
    _kept, other = indexed(tmp_path / "a")
    gone, busy = indexed(tmp_path / "b")
    gone.unlink()  # both go on clear; only this one on prune
    if action == "prune":
        os.unlink(_kept)
    with held(busy):
        done = cache_cli(action)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"left history {busy.name}: its lock is held" in done.stderr
    assert f"removed history {other.name}" in done.stdout
    if action == "clear":
        assert "removed 1 of 2 entries" in done.stdout
    else:
        assert "pruned 1 entries" in done.stdout
    assert "1 entries" in done.stdout and "stayed" in done.stdout
    assert busy.is_dir() and not other.exists()
    again = cache_cli(action)  # free now
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"removed history {busy.name}" in again.stdout and not busy.exists()


@contextmanager
def immutable(folder: Path) -> Iterator[None]:
    """The folder made unchangeable, even for root (``chattr +i``): a read-only cache."""
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("no chattr here to make a folder read-only for root")
    made = subprocess.run([chattr, "+i", str(folder)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this filesystem cannot make a folder immutable: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


def test_a_read_only_cache_is_reported_as_left_with_the_reason(root: Path, tmp_path: Path) -> None:
    _session, entry = indexed(tmp_path / "a")
    with immutable(root / "history"):
        done = cache_cli("clear")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "removed 0 of 1 entries" in done.stdout
    assert f"left history {entry.name}: cannot remove it: Operation not permitted" in done.stderr
    assert "Traceback" not in done.stderr
    again = cache_cli("clear")
    assert again.returncode == 0 and "removed all 1 entries" in again.stdout
