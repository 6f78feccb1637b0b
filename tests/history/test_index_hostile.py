"""The history index on hostile ground: edits it cannot see cheaply, stopped lock holders,
special files in place of the session or of the cache's files.

* A same-length edit in place anywhere in the indexed prefix, followed by growth, is found by
  the next call (issue 25: sampled blocks missed 20 of 20 such edits).
* A process stopped (``SIGSTOP``) while holding the index's lock, or inside a write
  transaction of its database, never makes a reader wait past a bound: the call is answered
  unindexed, exactly as the unindexed tools answer it.
* A FIFO or a device as the session file ends in a named error within a bound; a FIFO in
  place of any cache file discards the cache, and the call is answered.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history import scan
from pi_context.bindings.history.index import HistoryIndex, cache_dir_for
from pi_context.bindings.session import Session

from .test_index import _cache, _search, _session, battery, run, same  # noqa: F401

BOUND = 10.0  # seconds any call may take on this ground (a stopped holder: LOCK_WAIT + work)


def _big_session(tmp_path: Path, count: int = 3000) -> tuple[Session, Path]:
    texts = [f"entry {i:05d} needle-old {'filler ' * 60}" for i in range(count)]
    return _session(tmp_path, texts)


def test_a_same_length_edit_anywhere_then_growth_is_found(tmp_path: Path) -> None:
    """The issue's reproduction, 20 times at random places of a 1.4 MB file: never stale."""
    session, path = _big_session(tmp_path)
    assert path.stat().st_size > 1_000_000
    rng = random.Random(25)
    data = path.read_bytes()
    places = [m for m in range(len(data)) if data.startswith(b"needle-old", m)]
    for round_ in range(20):
        assert len(_search(path, "needle-new")) == round_  # indexed, warm
        at = rng.choice(places)
        places.remove(at)
        stat = path.stat()
        with open(path, "r+b") as handle:  # in place: same inode, same size
            handle.seek(at)
            handle.write(b"needle-new")
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even the mtime restored
        session.append_message({"role": "user", "content": f"growth {round_}", "timestamp": 1})
        assert len(_search(path, "needle-new")) == round_ + 1
        assert _search(path, f"growth {round_}")
    same(path, [("history_search", {"query": "needle-new"}), ("history_list", {})])


def test_an_unchanged_warm_file_is_not_hashed_again(tmp_path: Path) -> None:
    """The full-prefix check is skipped only when ``stat`` vouches for the file: an old
    enough snapshot, still exact."""
    _, path = _big_session(tmp_path, 200)
    past = time.time_ns() - 10 * 10**9
    os.utime(path, ns=(past, past))  # ctime stays recent: the first calls hash
    assert _search(path, "entry 00007")
    with HistoryIndex(path) as index:
        index.open_view(None)
        meta = index.meta
        assert meta is not None and meta["seen"][0] == path.stat().st_size


def _holder(path: Path, transaction: bool) -> Iterator[subprocess.Popen[bytes]]:
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from pi_context.bindings.history.index import HistoryIndex\n"
        "index = HistoryIndex(Path(sys.argv[1]))\n"
        "with index._locked():\n"
        "    if sys.argv[2] == '1':\n"
        "        index.db = index._connect()\n"
        "        index.db.execute('BEGIN IMMEDIATE')\n"
        "        index.db.execute(\"UPDATE meta SET value = value WHERE key = 'end'\")\n"
        "    print('held', flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGSTOP)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(path), "1" if transaction else "0"],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"held\n"
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=30)


@pytest.mark.parametrize("transaction", [False, True], ids=["lock", "lock+write-transaction"])
def test_a_stopped_lock_holder_never_blocks_a_reader(tmp_path: Path, transaction: bool) -> None:
    session, path = _big_session(tmp_path, 300)
    assert _search(path, "entry 00001")  # built
    for proc in _holder(path, transaction):
        deadline = time.monotonic() + 10
        while not Path(f"/proc/{proc.pid}/stat").read_text().split(") ")[1].startswith("T"):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        new = session.append_message({"role": "user", "content": "after stop", "timestamp": 2})
        for call in battery(path)[:4] + [("history_search", {"query": "after stop"})]:
            started = time.monotonic()
            indexed = run(path, *call, None, True)
            assert time.monotonic() - started < BOUND, call
            assert indexed == run(path, *call, None, False), call
        assert [
            i["item_id"]
            for i in json.loads(
                run(path, "history_search", {"query": "after stop"}, None, True)[0]
            )["items"]
        ] == [new]
    # The holder gone (killed: the kernel drops its lock), the index answers again.
    assert _search(path, "after stop") == [new]
    with HistoryIndex(path) as index:
        index.open_view(None)


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        path = tmp_path / "fifo.jsonl"
        os.mkfifo(path)
        return path
    path = tmp_path / f"{kind}.jsonl"
    os.symlink(f"/dev/{kind}", path)
    return path


@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom", "null"])
@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "plain"])
def test_a_special_file_as_the_session_is_a_named_error(
    tmp_path: Path, kind: str, indexed: bool
) -> None:
    path = _special(tmp_path, kind)
    for name, args in [("history_list", {}), ("history_search", {"query": "x"})]:
        started = time.monotonic()
        answer: Any = run(path, name, args, None, indexed)
        assert time.monotonic() - started < BOUND
        assert answer[0] == "ToolError" or answer[2], answer
        text = answer[1] if answer[0] == "ToolError" else answer[0]
        wanted = "FIFO" if kind == "fifo" else "character device"
        assert wanted in text and "not a session file" in text, text


@pytest.mark.parametrize("warm", [False, True], ids=["rehashed", "stat-trusted"])
@pytest.mark.parametrize(
    "name", ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "lock", "content"]
)
def test_a_fifo_in_place_of_a_cache_file_is_discarded(
    tmp_path: Path, name: str, warm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if warm:  # the file counts as old at once: the call trusts stat, and skips the hash
        monkeypatch.setattr(scan, "RACY_NS", -(10**12))
    _, path = _session(tmp_path, ["alpha", "beta"])
    assert _search(path, "beta")
    directory = cache_dir_for(Path(os.path.realpath(path)))
    if name == "content":
        (target,) = directory.glob("content-*.bin")
    else:
        target = directory / name
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    started = time.monotonic()
    assert _search(path, "beta")
    assert time.monotonic() - started < BOUND
    same(path, battery(path))
    with HistoryIndex(path) as index:  # rebuilt
        index.open_view(None)
