"""Caches bound to what they cache: every entry records the file it belongs to, and goes when
that file is gone (``pi-context cache prune``, and on access); ``cache info`` and ``clear``;
files private to the user; the test suite's own cache."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_context.bindings.history.index import cache_dir_for
from pi_context.bindings.notes.cache import SETTLE_NS
from pi_context.bindings.tool_registry import run_tool
from pi_context.bindings.tools import ToolContext
from pi_context.support import cache, cache_home

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(folder))
    monkeypatch.delenv("PI_CONTEXT_HISTORY_INDEX", raising=False)
    monkeypatch.delenv("PI_CONTEXT_NOTES_CACHE", raising=False)
    return folder


def session_copy(folder: Path, name: str = "session.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    shutil.copy(FIXTURE, path)
    return path


def history_call(session: Path) -> None:
    result = run_tool("history_list", {"limit": 2}, ToolContext(session_path=session))
    assert not result.is_error, result.text


def write_notes(notes: Path, cwd: Path) -> None:
    """A few notes, then a listing from a fresh process once they have settled (the disk
    cache stores only notes untouched for a moment)."""
    ctx = ToolContext(notes_home=notes, cwd=cwd, session_id="s1", model_id="m")
    for k in range(3):
        args = {"path": f"n{k}.md", "content": "x", "scope": "project"}
        assert not run_tool("notes_write", args, ctx).is_error
    time.sleep(SETTLE_NS / 1e9 + 0.2)
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "tool", "notes_list", "--notes-home", str(notes),
         "--cwd", str(cwd), "--model", "m", "--args", "{}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "cache", *args],
        capture_output=True, text=True, timeout=120, env=env or dict(os.environ),
    )  # fmt: skip


def states() -> dict[str, str]:
    return {f"{e.kind}/{e.path.name}": e.state for e in cache.entries()}


def test_a_history_index_records_its_session_and_prune_removes_it_once_deleted(
    root: Path, tmp_path: Path
) -> None:
    kept, deleted = session_copy(tmp_path / "a"), session_copy(tmp_path / "b")
    history_call(kept)
    history_call(deleted)
    entry = cache_dir_for(Path(os.path.realpath(deleted)))
    record = json.loads((entry / "source.json").read_text())
    assert record["kind"] == "history"
    assert record["sources"][0]["path"] == os.path.realpath(deleted)
    assert record["sources"][0]["ino"] == deleted.stat().st_ino
    deleted.unlink()
    info = json.loads(cli("info", "--json").stdout)
    by_path = {e["path"]: e for e in info["entries"]}
    assert by_path[str(entry)]["state"] == "source gone"
    assert by_path[str(cache_dir_for(Path(os.path.realpath(kept))))]["state"] == "live"
    done = cli("prune")
    assert done.returncode == 0, done.stderr
    assert f"removed history {entry.name} (source gone: {os.path.realpath(deleted)})" in done.stdout
    assert not entry.exists()
    assert cache_dir_for(Path(os.path.realpath(kept))).is_dir()
    assert "pruned 1 entries" in done.stdout


def test_a_session_written_anew_at_the_same_path_is_another_file(
    root: Path, tmp_path: Path
) -> None:
    path = session_copy(tmp_path / "s")
    history_call(path)
    entry = cache_dir_for(Path(os.path.realpath(path)))
    path.unlink()
    # Another session (its own header) at the same path; it may even get the same inode number.
    header, rest = FIXTURE.read_text().split("\n", 1)
    fresh = json.loads(header)
    fresh["id"] = "0192e7a4-0000-7000-8000-000000000001"
    path.write_text(json.dumps(fresh) + "\n" + rest)
    assert states()[f"history/{entry.name}"] == "source replaced"
    [removed] = cache.prune()
    assert removed.state == "source replaced" and not entry.exists()
    history_call(path)  # rebuilt, and recorded against the new file
    assert states()[f"history/{entry.name}"] == "live"


def test_a_call_on_a_deleted_session_discards_its_index(root: Path, tmp_path: Path) -> None:
    path = session_copy(tmp_path / "s")
    history_call(path)
    entry = cache_dir_for(Path(os.path.realpath(path)))
    assert entry.is_dir()
    path.unlink()
    result = run_tool("history_list", {}, ToolContext(session_path=path))
    assert result.is_error
    assert not entry.exists()


def test_access_sweeps_the_cache_when_the_last_sweep_is_old(root: Path, tmp_path: Path) -> None:
    other = session_copy(tmp_path / "other")
    history_call(other)
    cache.prune()  # a fresh stamp: the next sweep is an hour away
    gone = session_copy(tmp_path / "gone")
    history_call(gone)
    entry = cache_dir_for(Path(os.path.realpath(gone)))
    gone.unlink()
    history_call(other)
    assert entry.exists(), "swept before it was due"
    stamp = root / cache.STAMP
    old = time.time() - cache.PRUNE_EVERY - 5
    os.utime(stamp, (old, old))
    history_call(other)  # any access to the cache sweeps it now
    assert not entry.exists()
    assert stamp.stat().st_mtime > old + 1


def test_a_notes_cache_records_its_home_and_goes_with_it(root: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write_notes(notes, tmp_path)
    files = sorted((root / "notes").glob("*.bin"))
    assert files, "no notes cache written"
    records = [json.loads(f.with_name(f.stem + ".source.json").read_text()) for f in files]
    homes = {r["sources"][0]["path"] for r in records}
    assert all(h.startswith(os.path.realpath(notes)) for h in homes)
    shutil.rmtree(notes)
    removed = cache.prune()
    assert {e.path for e in removed} == set(files)
    assert [p.name for p in (root / "notes").iterdir()] == [cache_home.MARKER]


def test_hypothesis_files_are_recorded_against_their_spec_files(root: Path, tmp_path: Path) -> None:
    spec = tmp_path / "copy.yaml"
    spec.write_text("anything")
    home = cache.hypothesis_home([spec])
    assert home.parent == root / "hypothesis"
    assert json.loads((home / "source.json").read_text())["sources"][0]["path"] == str(spec)
    (home / "examples").mkdir()
    spec.write_text("edited")  # the same file: kept
    assert states()[f"hypothesis/{home.name}"] == "live"
    spec.unlink()
    [removed] = cache.prune()
    assert removed.path == home and not home.exists()


def test_unrecorded_entries_wait_out_the_grace_and_foreign_files_are_never_touched(
    root: Path, tmp_path: Path
) -> None:
    history_call(session_copy(tmp_path / "s"))
    legacy = root / "history" / ("0" * 32)  # an earlier version's index: no record
    legacy.mkdir()
    (legacy / "content-1.bin").write_bytes(b"old session text")
    foreign = root / "my-notes.txt"
    foreign.write_text("not ours")
    (root / "elsewhere").mkdir()
    assert cache.prune() == []  # young: it may be being created
    old = time.time() - cache.GRACE - 5
    os.utime(legacy, (old, old))
    [removed] = cache.prune()
    assert removed.path == legacy and removed.state == "unrecorded"
    assert foreign.read_text() == "not ours" and (root / "elsewhere").is_dir()
    cleared = cache.clear()
    assert cleared and [p.name for p in (root / "history").iterdir()] == [cache_home.MARKER]
    assert foreign.exists() and (root / "elsewhere").is_dir()


def test_an_index_whose_lock_is_held_is_left_alone(root: Path, tmp_path: Path) -> None:
    path = session_copy(tmp_path / "s")
    history_call(path)
    entry = cache_dir_for(Path(os.path.realpath(path)))
    path.unlink()
    fd = os.open(entry / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert cache.prune() == []
        assert entry.exists()
    finally:
        os.close(fd)
    assert [e.path for e in cache.prune()] == [entry]


def test_cache_files_are_private(root: Path, tmp_path: Path) -> None:
    os.umask(0o022)
    history_call(session_copy(tmp_path / "s"))
    write_notes(tmp_path / "notes", tmp_path)
    cache.hypothesis_home([tmp_path / "spec.yaml"])
    seen = 0
    for folder, _dirs, files in os.walk(root):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
        for name in files:
            mode = stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode)
            assert mode == 0o600, (folder, name, oct(mode))
            seen += 1
    assert seen >= 6  # index.sqlite, its -wal/-shm, content, lock, records, notes .bin


def test_info_shows_size_and_entries_and_clear_removes_all(root: Path, tmp_path: Path) -> None:
    history_call(session_copy(tmp_path / "a"))
    history_call(session_copy(tmp_path / "b"))
    info = cli("info")
    assert info.returncode == 0
    assert f"cache: {root}" in info.stdout and "in 2 entries" in info.stdout
    assert "| history | 2 |" in info.stdout
    assert "session's history items" in info.stdout  # says what text it holds
    body = json.loads(cli("info", "--json").stdout)
    assert body["bytes"] == sum(e["bytes"] for e in body["entries"]) > 0
    done = cli("clear")
    assert done.returncode == 0 and "removed all 2 entries" in done.stdout
    assert json.loads(cli("info", "--json").stdout)["entries"] == []


def test_the_suite_runs_with_caches_of_its_own() -> None:
    home = Path.home()
    isolated = [
        "PI_CONTEXT_CACHE_DIR",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "PI_CODING_AGENT_DIR",
        "PI_NOTES_HOME",
        "MCP_CATALOG_PATH",
    ]
    for name in isolated:
        value = os.environ[name]
        assert not Path(value).is_relative_to(home) or REPO in Path(value).parents, name
    npm_cache = os.environ["npm_config_cache"]  # noqa: SIM112 (npm reads it in lower case)
    assert Path(npm_cache).is_relative_to(REPO / ".cache")
