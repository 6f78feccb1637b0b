"""The cache touches only what it made, and only folders of the user's own (issue 31).

Finding 2: ``PI_CONTEXT_CACHE_DIR`` naming a folder that holds a notes root (``~/.agents``,
or ``~/.pi/agent`` with the earlier layout) once lost every note older than a minute to the
first history call or ``conformance`` run, and had the folder chmodded 0700. Now such a root
is refused with ``CacheRefused`` (the tools answer without their cache), nothing in it is
removed and no mode changes.

Finding 3: another user sharing a cache folder (a 1777 one) could pre-create the history
entry of a session and read the text written into it. A cache or notes folder another uid
owns, or that group/others may write, is refused. The tests run as root here; the other
user is uid 65534 (``nobody``), its folders made with ``os.chown``.
"""

from __future__ import annotations

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
from pi_context.bindings.tool_registry import run_tool
from pi_context.bindings.tools import ToolContext
from pi_context.support import cache, cache_home

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"
OTHER = 65534
SECRET = "the-session-text-no-one-else-may-read"

needs_second_uid = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="making a folder owned by a second real uid needs root (os.chown); not root here",
)


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


def session(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    text = FIXTURE.read_text()
    header, rest = text.split("\n", 1)
    line = json.loads(rest.split("\n", 1)[0])
    path.write_text(text)
    assert line  # the fixture has entries past its header
    with path.open("a") as out:
        entry = {
            "type": "message",
            "id": "secret01",
            "parentId": _last_id(text),
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": SECRET, "timestamp": 1},
        }
        out.write(json.dumps(entry) + "\n")
    return path


def _last_id(text: str) -> str:
    for line in reversed(text.strip().split("\n")):
        value = json.loads(line).get("id")
        if isinstance(value, str):
            return value
    raise AssertionError("no entry id")


def tree(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file's bytes and every path's mode below (and of) ``root``."""
    found: dict[str, tuple[bytes | None, int]] = {".": (None, os.lstat(root).st_mode)}
    for path in sorted(root.rglob("*")):
        info = os.lstat(path)
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
        found[str(path.relative_to(root))] = (data, info.st_mode)
    return found


def holds_secret(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


# --- finding 2: a cache root that holds the user's notes ----------------------------------------


@pytest.mark.parametrize("layout", ["agents", "legacy"])
def test_a_cache_pointed_at_a_notes_folder_never_touches_the_notes(
    tmp_path: Path, layout: str
) -> None:
    folder = tmp_path / (".agents" if layout == "agents" else ".pi/agent")
    notes = {
        "agents": ["notes/human/me.md", "notes/pi/session/s1/todo.md", "notes/models/m/a.md"],
        "legacy": ["notes/sessions/s1/todo", "notes/projects/p-0123456789/x.md", "settings.json"],
    }[layout]
    for rel in notes:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"the user's own {rel}\n")
    old = time.time() - 3600 * 24
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (old, old))
    os.chmod(folder, 0o755)
    before = tree(folder)
    env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(folder)}

    listed = run("tool", "history_list", "--session", str(session(tmp_path / "s")),
                 "--args", '{"limit": 2}', env=env)  # fmt: skip
    assert listed.returncode == 0, listed.stderr  # answered without its cache
    conformance = run(
        "conformance", "--impl", f"{sys.executable} -m pi_context serve",
        "--spec", "reset-control@0.25", "--examples", "2", "--quiet", env=env,
    )  # fmt: skip
    assert conformance.returncode == 1
    assert "refused as a cache folder" in conformance.stderr, conformance.stderr
    assert "Traceback" not in conformance.stderr
    for action in ("prune", "clear", "info"):
        done = run("cache", action, env=env)
        assert done.returncode == 1, (action, done.stdout)
        assert "which the cache did not create" in done.stderr, done.stderr
        assert "PI_CONTEXT_CACHE_DIR" in done.stderr and "Traceback" not in done.stderr
    assert tree(folder) == before, "every note survives byte for byte, every mode unchanged"


def test_an_empty_folder_is_adopted_without_a_chmod_and_later_files_are_never_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(folder))
    path = session(tmp_path / "s")
    assert not run_tool("history_list", {"limit": 2}, ToolContext(session_path=path)).is_error
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755, "a folder it did not create keeps its mode"
    assert (folder / cache_home.MARKER).is_file()
    assert (folder / "history" / cache_home.MARKER).is_file()
    (folder / "history" / "notes-of-mine").mkdir()  # not a name the cache makes
    (folder / "history" / "notes-of-mine" / "a.md").write_text("mine")
    old = time.time() - 3600
    os.utime(folder / "history" / "notes-of-mine", (old, old))
    os.unlink(path)
    removed = cache.prune()
    assert [e.kind for e in removed] == ["history"]
    assert (folder / "history" / "notes-of-mine" / "a.md").read_text() == "mine"


# --- finding 3: folders of another user ---------------------------------------------------------


def shared_folder(tmp_path: Path) -> Path:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    os.chmod(tmp_path, 0o755)
    return shared


def owned_by_other(path: Path, mode: int = 0o777) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, OTHER, OTHER)
    os.chmod(path, mode)


@needs_second_uid
def test_a_history_entry_another_user_made_is_never_written_to(tmp_path: Path) -> None:
    shared = shared_folder(tmp_path)
    root = shared / "cache"
    path = session(tmp_path / "s")
    env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(root)}
    # uid A prepares B's cache: the root, the area and B's entry, all its own and wide open.
    for folder in (root, root / "history"):
        owned_by_other(folder)
    key_dir = root / "history" / cache_dir_for(Path(os.path.realpath(path))).name
    owned_by_other(key_dir)
    listed = run("tool", "history_search", "--session", str(path),
                 "--args", json.dumps({"query": SECRET}), env=env)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert SECRET in listed.stdout  # the answer is right, given without the cache
    assert holds_secret(root) == [], "no text of B's lands in A's folders"
    info = run("cache", "info", env=env)
    assert info.returncode == 1 and f"owned by uid {OTHER}" in info.stderr, info.stderr


@needs_second_uid
def test_an_entry_swapped_for_another_users_inside_our_own_cache_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(root))
    path = session(tmp_path / "s")
    ctx = ToolContext(session_path=path)
    assert not run_tool("history_list", {"limit": 2}, ctx).is_error
    entry = cache_dir_for(Path(os.path.realpath(path)))
    shutil.rmtree(entry)
    owned_by_other(entry)
    result = run_tool("history_search", {"query": SECRET}, ctx)
    assert not result.is_error and SECRET in result.text
    # Refused, then thrown away (a name the cache makes, in its own private area) and built
    # anew: the text lands only in folders of the user's own that no one else may write.
    for holder in holds_secret(root):
        for folder in [holder, *holder.parents]:
            info = folder.stat()
            assert info.st_uid == os.getuid() and not info.st_mode & 0o022, folder
            if folder == root:
                break


def test_a_cache_root_others_may_write_is_refused(tmp_path: Path) -> None:
    shared = shared_folder(tmp_path)  # a 1777 folder used as the cache itself
    env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(shared)}
    path = session(tmp_path / "s")
    listed = run("tool", "history_list", "--session", str(path), "--args", "{}", env=env)
    assert listed.returncode == 0, listed.stderr
    assert list(shared.iterdir()) == []
    done = run("cache", "prune", env=env)
    assert done.returncode == 1
    assert "group or others may write into it (mode 0o1777)" in done.stderr, done.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777, "never chmodded"


@needs_second_uid
def test_a_content_file_swapped_in_by_another_user_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    path = session(tmp_path / "s")
    ctx = ToolContext(session_path=path)
    assert not run_tool("history_list", {"limit": 2}, ctx).is_error
    entry = cache_dir_for(Path(os.path.realpath(path)))
    [content] = entry.glob("content-*.bin")
    os.chown(content, OTHER, OTHER)  # as if another user had swapped in a file of its own
    before = content.read_bytes()
    with path.open("a") as out:
        out.write(json.dumps({
            "type": "message", "id": "later001", "parentId": "secret01",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": SECRET + "-2", "timestamp": 2},
        }) + "\n")  # fmt: skip
    result = run_tool("history_search", {"query": SECRET + "-2"}, ctx)
    assert not result.is_error and SECRET + "-2" in result.text
    if content.exists():
        assert content.read_bytes() == before, "never appended to"


@needs_second_uid
def test_a_notes_root_another_user_owns_is_refused(tmp_path: Path) -> None:
    shared = shared_folder(tmp_path)
    notes = shared / "notes"
    owned_by_other(notes)
    args = json.dumps({"path": "a.md", "content": SECRET, "scope": "human"})
    done = run("tool", "notes_write", "--notes-home", str(notes), "--args", args,
               env={**os.environ})  # fmt: skip
    assert done.returncode != 0
    assert f"owned by uid {OTHER}" in done.stdout + done.stderr
    assert holds_secret(notes) == []
    writable = shared / "wide"
    writable.mkdir()
    os.chmod(writable, 0o777)
    done = run("tool", "notes_write", "--notes-home", str(writable), "--args", args,
               env={**os.environ})  # fmt: skip
    assert done.returncode != 0
    assert "may be written by group or others" in done.stdout + done.stderr
    assert holds_secret(writable) == []


def test_a_marker_torn_by_a_crash_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(root))
    path = session(tmp_path / "s")
    assert not run_tool("history_list", {"limit": 2}, ToolContext(session_path=path)).is_error
    for marker in (root / cache_home.MARKER, root / "history" / cache_home.MARKER):
        marker.write_bytes(b"")  # created, never written: a crash in between
        old = time.time() - 60
        os.utime(marker, (old, old))
    assert not run_tool("history_list", {"limit": 2}, ToolContext(session_path=path)).is_error
    for marker in (root / cache_home.MARKER, root / "history" / cache_home.MARKER):
        assert marker.read_bytes() == cache_home.MARKER_BODY
    assert [e.state for e in cache.entries()] == ["live"]
