"""Each hostile-filesystem attack from issue 15, reproduced against the real tools.

Links planted in a home (hard links, a lock-folder symlink, a home or root that is a symlink),
a directory swapped for a symlink while tools run (a bounded rename race with a real second
process), a writer killed mid-write, NFC/NFD spellings and a FIFO posing as a note. Every case
ends in a named error or a clean result, with nothing read or written outside the home.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from pi_context.bindings.notes.jail import LOCK_DIR, TEMP_PREFIX
from pi_context.bindings.tools import ToolContext, ToolError

from .conftest import TOOL_BY_NAME, Notes

SECRET = "outside secret: must never be read through a home"


def outside_tree(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text(SECRET, encoding="utf-8")
    return outside, snapshot_tree(outside)


def snapshot_tree(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else b"<dir>")
        for p in sorted(directory.rglob("*"))
    }


def run_tool(ctx: ToolContext, name: str, **args: object) -> tuple[bool, str]:
    """(is_error, text) of one tool call; an argument error counts as an error."""
    try:
        result = TOOL_BY_NAME[name].run(ctx, args)
    except ToolError as exc:
        return True, str(exc)
    return result.is_error, result.text


def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(
    notes: Notes, tmp_path: Path
) -> None:
    outside, before = outside_tree(tmp_path)
    home = notes.store().home("human")
    home.mkdir(parents=True)
    os.link(outside / "victim.md", home / "linked.md")
    failed, text = run_tool(notes.ctx, "notes_read", path="linked.md", scope="human")
    assert failed and "hard links" in json.loads(text)["error"] and SECRET not in text
    failed, text = run_tool(notes.ctx, "notes_write", path="linked.md", scope="human", content="x")
    assert failed and "hard links" in json.loads(text)["error"]
    failed, text = run_tool(
        notes.ctx,
        "notes_edit",
        path="linked.md",
        scope="human",
        edits=[{"oldText": "outside", "newText": "pwned"}],
    )
    assert failed and "hard links" in json.loads(text)["error"]
    listed = notes.json("notes_list", scope="human")
    assert listed["files"] == [] and "hard links" in listed["refused"][0]["reason"]
    found = notes.json("notes_search", query="secret", scope="human")
    assert found["files"] == [] and SECRET not in json.dumps(found)
    assert snapshot_tree(outside) == before


def test_a_lock_folder_symlink_cannot_move_locks_outside(notes: Notes, tmp_path: Path) -> None:
    outside, before = outside_tree(tmp_path)
    home = notes.store().home("human")
    home.mkdir(parents=True)
    (home / LOCK_DIR).symlink_to(outside, target_is_directory=True)
    failed, text = run_tool(notes.ctx, "notes_write", path="a.md", scope="human", content="x")
    assert failed and "symbolic link" in json.loads(text)["error"]
    assert snapshot_tree(outside) == before, "no lock file landed outside"
    assert not (home / "a.md").exists()


@pytest.mark.parametrize("level", ["home", "root"])
def test_a_home_or_root_that_is_a_symlink_is_not_trusted(
    notes: Notes, tmp_path: Path, level: str
) -> None:
    outside, before = outside_tree(tmp_path)
    store = notes.store()
    if level == "home":
        home = store.home("human")
        home.parent.mkdir(parents=True, exist_ok=True)
        home.symlink_to(outside, target_is_directory=True)
    else:
        root = Path(notes.ctx.notes_home or "")
        root.rmdir()
        root.symlink_to(outside, target_is_directory=True)
    failed, text = run_tool(notes.ctx, "notes_write", path="new.md", scope="human", content="x")
    assert failed and "symbolic link" in json.loads(text)["error"]
    failed, text = run_tool(notes.ctx, "notes_read", path="victim.md", scope="human")
    assert failed and SECRET not in text and "symbolic link" in text
    listed = notes.json("notes_list", scope="human")
    assert listed["files"] == [] and "symbolic link" in listed["unreadable_homes"][0]["error"]
    assert snapshot_tree(outside) == before


def test_a_fifo_posing_as_a_note_does_not_hang(notes: Notes) -> None:
    home = notes.store().home("human")
    home.mkdir(parents=True)
    os.mkfifo(home / "pipe.md")
    failed, text = run_tool(notes.ctx, "notes_read", path="pipe.md", scope="human")
    assert failed and "not a regular file" in text
    failed, text = run_tool(notes.ctx, "notes_write", path="pipe.md", scope="human", content="x")
    assert failed and "not a regular file" in text
    assert notes.json("notes_list", scope="human")["files"] == []


def test_nfc_and_nfd_spellings_are_one_note(notes: Notes) -> None:
    nfc, nfd = (
        unicodedata.normalize("NFC", "café/résumé"),
        unicodedata.normalize("NFD", "café/résumé"),
    )
    assert nfc != nfd
    notes.call("notes_write", path=nfd, content="one", scope="human")
    notes.call("notes_edit", path=nfc, scope="human", edits=[{"oldText": "one", "newText": "two"}])
    assert notes.read(path=nfd, scope="human").content.endswith("two")
    listed = notes.json("notes_list", scope="human")
    assert [f["path"] for f in listed["files"]] == [nfc + ".md"]
    home = notes.store().home("human")
    assert [p.name for p in home.iterdir() if not p.name.startswith(".")] == ["café"]


def test_a_note_written_in_nfd_by_another_tool_is_found_by_its_nfc_name(notes: Notes) -> None:
    home = notes.store().home("human")
    decomposed = unicodedata.normalize("NFD", "naïve.md")
    home.mkdir(parents=True)
    (home / decomposed).write_text("from elsewhere", encoding="utf-8")
    assert notes.read(path="naïve.md", scope="human").content == "from elsewhere"
    notes.call("notes_write", path="naïve.md", content="rewritten", scope="human")
    assert sorted(p.name for p in home.iterdir() if p.is_file()) == [decomposed], "same file"
    # Both spellings on disk (only another tool can do that): one note, the twin refused.
    (home / unicodedata.normalize("NFC", "naïve.md")).write_text("twin", encoding="utf-8")
    listed = notes.json("notes_list", scope="human")
    assert [f["path"] for f in listed["files"]] == ["naïve.md"]
    assert "another spelling" in listed["refused"][0]["reason"]


# --- the rename race: a real second process swaps a folder for a symlink -------------------

SWAPPER = textwrap.dedent(
    """
    import os, sys, time
    home, outside, rounds, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    hold = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0005  # how long the link stands
    folder, parked = os.path.join(home, "d"), os.path.join(home, "d.parked")
    end = time.monotonic() + seconds
    done = 0
    while done < rounds and time.monotonic() < end:
        try:
            os.rename(folder, parked)          # the real folder steps aside ...
            os.symlink(outside, folder)        # ... and a link to the outside takes its name
            time.sleep(hold)
            os.unlink(folder)
            os.rename(parked, folder)          # then the real folder comes back
        except OSError:
            pass
        done += 1
    print(done)
    """
)


def test_a_rename_race_never_reads_or_writes_outside_the_home(tmp_path: Path) -> None:
    root = tmp_path / "root"
    project = tmp_path / "project"
    project.mkdir()
    ctx = ToolContext(notes_home=root, cwd=project, session_id="race", agent_name="pi")
    outside, before = outside_tree(tmp_path)
    (outside / "x-0.md").write_text(SECRET, encoding="utf-8")
    before = snapshot_tree(outside)
    TOOL_BY_NAME["notes_write"].run(
        ctx, {"path": "d/x-0.md", "content": "inside", "scope": "human"}
    )
    home = root / "human"
    outcomes: dict[str, int] = {"ok": 0, "refused": 0}
    leaks: list[str] = []
    stop = threading.Event()

    def hammer(worker: int) -> None:
        index = 0
        while not stop.is_set():
            index += 1
            calls = [
                ("notes_write", {"path": f"d/x-{worker}-{index}.md", "content": "in"}),
                ("notes_write", {"path": "d/x-0.md", "content": "inside"}),
                ("notes_read", {"path": "d/x-0.md"}),
                ("notes_edit", {"path": "d/x-0.md", "edits": [{"oldText": "in", "newText": "in"}]}),
                ("notes_list", {}),
                ("notes_search", {"query": "secret"}),
            ]
            for name, args in calls:
                try:
                    failed, text = run_tool(ctx, name, scope="human", **args)
                except Exception as exc:  # a tool must answer with a named error, never raise
                    escaped.append(f"{name}: {exc!r}")
                    return
                outcomes["refused" if failed else "ok"] += 1
                if SECRET in text:
                    leaks.append(f"{name}: {text[:200]}")

    escaped: list[str] = []
    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    swaps = 0
    try:
        # Under a loaded machine a burst of tight swaps may land between the tools' calls; more
        # bursts run (a bounded number), each leaving the link standing four times longer than
        # the last (0.5 ms up to 0.5 s), until the race has shown both outcomes.
        for burst in range(6):
            hold = str(0.0005 * 4**burst)
            swapper = subprocess.Popen(
                [sys.executable, "-c", SWAPPER, str(home), str(outside), "1500", "8", hold],
                stdout=subprocess.PIPE,
                text=True,
            )
            swaps += int(swapper.communicate(timeout=60)[0].strip() or 0)
            if swaps > 50 and outcomes["ok"] > 0 and outcomes["refused"] > 0:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert escaped == [], escaped[:3]
    assert swaps > 50, "the race really ran"
    assert outcomes["ok"] > 0 and outcomes["refused"] > 0, (outcomes, swaps)
    assert leaks == [], leaks[:3]
    assert snapshot_tree(outside) == before, "nothing written, replaced or locked outside"
    leftovers = [p for p in home.rglob(f"{TEMP_PREFIX}*")]
    assert leftovers == [], "every temp file was renamed or removed"


def test_a_rename_race_through_the_cli_prints_no_traceback(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside, before = outside_tree(tmp_path)
    home = root / "human"
    (home / "d").mkdir(parents=True)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(home), str(outside), "100000", "6"],
        stdout=subprocess.PIPE,
        text=True,
    )
    runs = 0
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and runs < 24:
            name, args = [
                ("notes_write", {"path": f"d/n{runs}.md", "content": "x", "scope": "human"}),
                ("notes_read", {"path": "d/n0.md", "scope": "human"}),
                ("notes_list", {"scope": "human"}),
            ][runs % 3]
            command = [sys.executable, "-m", "pi_context", "tool", name, "--notes-home", str(root)]
            done = subprocess.run(
                [*command, "--args", json.dumps(args)],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=tmp_path,
            )
            assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]
            assert SECRET not in done.stdout
            runs += 1
    finally:
        swapper.send_signal(signal.SIGTERM)
        swapper.communicate(timeout=30)
    assert runs >= 3
    assert snapshot_tree(outside) == before


# --- crash and reopen ----------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pi_context.bindings.notes.homes import NotesHomes
    from pi_context.bindings.notes.store import NoteStore
    store = NoteStore(NotesHomes(Path(sys.argv[1]), "crash", Path(sys.argv[1]), "pi", None))
    body = "x" * 900_000
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        store.write("human", "deep/big.md", body + str(n))
    """
)


def test_temp_files_of_killed_writers_are_swept_on_reopen(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = root / "human" / "deep"
    stranded = 0
    for _cycle in range(12):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root)], stdout=subprocess.PIPE, text=True
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # kill -9 the moment a temp file exists
            if folder.is_dir() and any(n.startswith(TEMP_PREFIX) for n in os.listdir(folder)):
                break
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        if any(n.startswith(TEMP_PREFIX) for n in os.listdir(folder)):
            stranded += 1
        if stranded >= 3:
            break
    assert stranded >= 1, "at least one kill -9 landed mid-write"
    # Reopen: the next writer in that folder sweeps what the dead ones left.
    reopened = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "tool",
            "notes_write",
            "--notes-home",
            str(root),
            "--args",
            json.dumps({"path": "deep/big.md", "content": "after the crash", "scope": "human"}),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert reopened.returncode == 0, reopened.stderr
    assert [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)] == []
    assert (folder / "big.md").read_text(encoding="utf-8").endswith("after the crash")


def test_sweep_clears_a_whole_home_and_spares_live_writers(notes: Notes) -> None:
    store = notes.store()
    store.write("human", "a/b/c.md", "x")
    home = store.home("human")
    dead = home / "a" / "b" / f"{TEMP_PREFIX}999999999.abc"
    dead.write_bytes(b"half")
    live = home / "a" / f"{TEMP_PREFIX}{os.getppid()}.def"
    live.write_bytes(b"in progress")
    assert store.sweep("human") == 1
    assert not dead.exists() and live.exists(), "a live writer's temp file is kept"
