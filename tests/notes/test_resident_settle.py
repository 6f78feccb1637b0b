"""A long-lived host freezes what it holds after a whole read, and only a long-lived host.

``heap.long_lived_host`` is the one declaration that a process is a long-lived host (the MCP
server): with it, a history index is held as resident from its first call, and a resident
notes view's whole read of a home (with the watches added before it) is settled: collected
once and frozen out of the collector's passes. A library call (and this test process) never
freezes. What a view freezes must be acyclic: when the view drops a read (a home replaced, a
view evicted), reference counting frees it at once, since a frozen cycle would never be
collected.
"""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from pi_context.bindings.notes import resident
from pi_context.bindings.notes.cache import Entry
from pi_context.bindings.notes.records import HomeRead, Refused
from pi_context.bindings.notes.watch import Home
from pi_context.support import heap

from .conftest import Notes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
SESSION = Path(__file__).resolve().parents[1] / "fixtures" / "pi-sessions" / "s0005.jsonl"

HOST = r"""
import json, sys
from pathlib import Path
from pi_context.bindings.history import resident as history_resident
from pi_context.bindings.notes import resident
from pi_context.bindings.tools import ToolContext
from pi_context.mcp.server import call, served_tools
from pi_context.support import heap
import gc

if sys.argv[1] == "declared":
    heap.long_lived_host()
resident.SETTLE_NOTES = 3
settles = []
settle = heap.settle_after_load
def counted():
    settles.append(1)
    settle()
heap.settle_after_load = counted
ctx = ToolContext(
    notes_home=Path(sys.argv[2]), cwd=Path(sys.argv[3]), session_path=Path(sys.argv[4]),
    agent_name="pi", model_id="m",
)
tools = served_tools()
def run(name, **args):
    result = call(name, args, ctx, tools)
    assert not result.is_error, result.text
    return result.text
for n in range(5):
    run("notes_write", path=f"f{n}/n.md", content=f"body {n}", scope="human")
assert resident.enable()
out = {"frozen_before": gc.get_freeze_count()}
run("notes_list", scope="human")
out["frozen_after_whole_read"] = gc.get_freeze_count()
run("notes_search", query="body", scope="human")  # the whole read with bodies: made once
out["settles_after_whole_read"] = len(settles)
run("notes_list", scope="human")  # held
run("notes_write", path="f1/n.md", content="changed", scope="human")
assert "changed" in run("notes_search", query="changed", scope="human")  # patched, filtered
run("notes_list", scope="human")
out["settles_after_held_calls"] = len(settles) - out["settles_after_whole_read"]
run("history_search", query="the")
out["history_resident"] = [index.resident for index in history_resident._held.values()]
resident.shutdown()
print(json.dumps(out))
"""


def host(notes: Notes, tmp_path: Path, declared: bool) -> dict[str, object]:
    session = tmp_path / "session.jsonl"
    shutil.copyfile(SESSION, session)
    root, cwd = notes.ctx.notes_home, notes.ctx.cwd
    assert root is not None and cwd is not None
    argv = ["declared" if declared else "library", str(root), str(cwd), str(session)]
    done = subprocess.run(
        [sys.executable, "-c", HOST, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_the_one_declaration_makes_a_host_long_lived(notes: Notes, tmp_path: Path) -> None:
    """Declared once (``heap.long_lived_host``): the first history call holds its index as
    resident, and each whole read of a home is settled (frozen) once, never a held, patched
    or filtered read."""
    got = host(notes, tmp_path, declared=True)
    assert got["frozen_before"] == 0
    assert isinstance(got["frozen_after_whole_read"], int) and got["frozen_after_whole_read"] > 0
    assert got["settles_after_whole_read"] == 2, "the listing's and the bodies' whole reads"
    assert got["settles_after_held_calls"] == 0, "a held or patched read is never settled"
    assert got["history_resident"] == [True]


def test_an_undeclared_process_never_freezes(notes: Notes, tmp_path: Path) -> None:
    """The same calls in a process that never declared itself long-lived (a library user, a
    one-off command): nothing is frozen, and the first history call reads in place."""
    got = host(notes, tmp_path, declared=False)
    assert got["frozen_before"] == 0 and got["frozen_after_whole_read"] == 0
    assert got["history_resident"] == [False]


def test_a_library_call_with_the_view_on_never_freezes_this_process(
    notes: Notes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident, "SETTLE_NOTES", 1)
    for n in range(3):
        notes.call("notes_write", path=f"f{n}/n.md", content=f"body {n}", scope="human")
    assert not heap.long_lived()
    assert resident.enable()
    try:
        notes.json("notes_list", scope="human")
        notes.json("notes_search", query="body", scope="human")
        assert gc.get_freeze_count() == 0
    finally:
        resident.shutdown()


def test_what_a_view_drops_is_freed_without_the_collector(notes: Notes) -> None:
    """A view's reads (listing, whole read, filtered searches, patched reads) are acyclic:
    dropping the view frees them by reference counting alone, so freezing them never keeps
    garbage alive."""
    for n in range(6):
        notes.call("notes_write", path=f"f{n % 3}/n{n}.md", content=f"body {n}", scope="human")
    (notes.store().home("human") / "bad.md").write_bytes(b"---\nunclosed: [\n")
    assert resident.enable()
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        notes.json("notes_list", scope="human")
        notes.json("notes_search", query="body 1", scope="human")
        notes.call("notes_write", path="f1/n1.md", content="body 1 again", scope="human")
        notes.call("notes_write", path="f9/new.md", content="a new folder", scope="human")
        notes.json("notes_list", scope="human")
        notes.json("notes_search", query="again", scope="human")
        (view,) = resident._views.values()
        assert len(view.reads) >= 3
        gone = weakref.ref(view)
        old_home = weakref.ref(view.home)
        del view
        resident._views.clear()  # what evicting the view does
        assert gone() is None, "the view is freed by reference counting"
        home = notes.store().home("human")
        home.rename(home.with_name("human-replaced"))  # the watcher forgets the old home
        home.mkdir()
        (home / "n.md").write_text("another home")
        assert [f["path"] for f in notes.json("notes_list", scope="human")["files"]] == ["n.md"]
        assert old_home() is None, "a forgotten home (and its watches) is freed at once"
        gc.collect()
        held = (HomeRead, Entry, Refused, resident._View, Home)
        leaked = [type(o).__name__ for o in gc.garbage if isinstance(o, held)]
        assert leaked == [], "a read the view dropped waited on the collector"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
        resident.shutdown()
