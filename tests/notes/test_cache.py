"""The parsed-note cache never gives a stale answer after another process writes.

The writers are real second processes: one through the CLI tools (a replace: new inode), one
rewriting a note in place with the same size and then forging its old mtime back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from pi_context.bindings.notes.cache import CACHE, SETTLE_NS
from pi_context.bindings.notes.snapshot import load_snapshot

from .conftest import Notes

HOUR_AGO_NS = 3600 * 10**9


def age(file: Path) -> None:
    """Wait until a note is old enough to be cached: the cache skips files whose mtime or
    ctime is in the last 2 s, and ctime cannot be set back (``utime`` moves it to now)."""
    info = file.stat()
    os.utime(file, ns=(info.st_atime_ns - HOUR_AGO_NS, info.st_mtime_ns - HOUR_AGO_NS))
    settled_at = file.stat().st_ctime_ns + SETTLE_NS + 50_000_000
    time.sleep(max(0.0, (settled_at - time.time_ns()) / 1e9))


def bodies(notes: Notes) -> dict[str, str]:
    found = notes.json("notes_search", query="value", scope="human")
    return {f["path"]: f["matches"][0]["text"] for f in found["files"]}


def test_a_write_by_another_process_is_seen_at_once(notes: Notes) -> None:
    CACHE.clear()
    notes.call("notes_write", path="a.md", content="value one", scope="human")
    file = notes.store().physical_path("human", "a.md")
    age(file)
    assert bodies(notes) == {"a.md": "value one"}
    assert bodies(notes) == {"a.md": "value one"}, "second call served from the cache"
    command = [sys.executable, "-m", "pi_context", "tool", "notes_write"]
    command += ["--notes-home", str(notes.ctx.notes_home)]
    args = {"path": "a.md", "content": "value two", "scope": "human"}
    done = subprocess.run(
        [*command, "--args", json.dumps(args)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert bodies(notes) == {"a.md": "value two"}
    listed = notes.json("notes_list", scope="human")
    assert [f["path"] for f in listed["files"]] == ["a.md"]
    assert load_snapshot(notes.store()).notes[0].body == "value two"


FORGER = textwrap.dedent(
    """
    import os, sys
    path = sys.argv[1]
    info = os.stat(path)
    with open(path, "r+b") as handle:           # same inode, same size, new bytes
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"value one", b"value 1!!"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # forge the old mtime back
    """
)


def test_an_in_place_rewrite_with_a_forged_mtime_is_seen(notes: Notes) -> None:
    CACHE.clear()
    notes.call("notes_write", path="b.md", content="value one", scope="human")
    file = notes.store().physical_path("human", "b.md")
    age(file)
    assert bodies(notes) == {"b.md": "value one"}
    before = file.stat()
    subprocess.run([sys.executable, "-c", FORGER, str(file)], check=True, timeout=60)
    after = file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    ), "inode, size and mtime all look unchanged"
    assert bodies(notes) == {"b.md": "value 1!!"}, "the ctime gave it away"


def test_a_deleted_or_hard_linked_note_is_never_served_from_the_cache(
    notes: Notes, tmp_path: Path
) -> None:
    CACHE.clear()
    notes.call("notes_write", path="c.md", content="value c", scope="human")
    notes.call("notes_write", path="d.md", content="value d", scope="human")
    for name in ("c.md", "d.md"):
        age(notes.store().physical_path("human", name))
    assert set(bodies(notes)) == {"c.md", "d.md"}
    notes.store().physical_path("human", "c.md").unlink()
    os.link(notes.store().physical_path("human", "d.md"), tmp_path / "outside-link")
    listed = notes.json("notes_list", scope="human")
    assert listed["files"] == [] and "hard links" in listed["refused"][0]["reason"]
