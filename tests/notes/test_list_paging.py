"""``notes_list`` and ``notes_search`` paging while notes are written, edited and deleted between
pages (issue 31: findings 5 and 6 for the notes tools).

Most recently updated first means an edit moves a note to the front: an offset cursor skipped a
note edited before its page came; search pages in path order, where a note created before the
cursor's place shifted every later file (one came twice). A walk now follows the order it took
at its first page, held by its process and recorded in the cache, so a walk of all pages — in
one process, or page by page in fresh processes (``pi-context tool``) — lists every note present
at its start exactly once (but those deleted meanwhile) and ends. With the cache off, a fresh
process resumes ``notes_list`` by keyset: nothing is skipped, only a note edited during the walk
may come again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import list_cursor
from pi_context.bindings.notes import walks as walks_module
from pi_context.bindings.tools import ToolContext

from .conftest import Notes

SCOPES = ("session", "project", "agent")
Op = tuple[str, int, str]

change = st.tuples(
    st.sampled_from(["write", "edit", "delete"]), st.integers(0, 30), st.sampled_from(SCOPES)
)


def make_notes(tmp: Path, clock: bool = True) -> Notes:
    project = tmp / "project"
    project.mkdir()
    (tmp / "root").mkdir()
    ticks = count(1_700_000_000_000, 7)  # a host clock that moves on every reading
    return Notes(
        ToolContext(
            notes_home=tmp / "root",
            cwd=project,
            session_id="0190f1a2-aaaa-7bbb-8ccc-000000000001",
            agent_name="pi",
            model_id="anthropic/claude-test",
            clock=(lambda: next(ticks)) if clock else None,
        )
    )


def apply(notes: Notes, op: Op) -> None:
    kind, number, scope = op
    path = f"n{number:02d}.md"
    if kind == "write":
        result = notes.call("notes_write", path=path, scope=scope, content="body")
    elif kind == "edit":
        edit = [{"oldText": "body", "newText": "body+"}]
        result = notes.call("notes_edit", path=path, scope=scope, edits=edit, replace_all=True)
    else:  # another tool deletes the note file
        (notes.store().home(scope) / path).unlink(missing_ok=True)
        return
    assert not result.is_error or "not found" in result.text.lower(), result.text


def listed(notes: Notes) -> list[tuple[str, str]]:
    return [(f["scope"], f["path"]) for f in notes.json("notes_list", max_results=1000)["files"]]


Page = Callable[[int | str], dict[str, Any]]


def walk(page_of: Page, limit: int, changes: list[list[Op]], notes: Notes, forget: bool) -> list:
    rows: list[tuple[str, str]] = []
    cursor: int | str | None = 0
    pages = 0
    while cursor is not None:
        page = page_of(cursor)
        assert page["files"] or cursor == 0 or pages > 0, "a first page names its walk"
        rows += [(f["scope"], f["path"]) for f in page["files"]]
        cursor = page["next_cursor"]
        for op in changes[pages] if pages < len(changes) else []:
            apply(notes, op)
        if forget:
            list_cursor.forget_snapshots()  # as a fresh process resuming the walk would
        pages += 1
        assert pages < 500, "the walk ends"
    return rows


def tool_page(notes: Notes, name: str, limit: int, **fixed: Any) -> Page:
    def page_of(cursor: int | str) -> dict[str, Any]:
        size = {"max_results": limit} if name == "notes_list" else {"max_files": limit}
        result = notes.call(name, cursor=cursor, **size, **fixed)
        assert not result.is_error, result.text
        return json.loads(result.text)

    return page_of


def check(
    present: list[tuple[str, str]], rows: list[tuple[str, str]], changes: list[list[Op]]
) -> None:
    deleted = {(s, f"n{n:02d}.md") for page in changes for kind, n, s in page if kind == "delete"}
    assert set(rows) <= set(present), "a note written during the walk is not listed"
    assert set(present) - deleted <= set(rows), "no note present at the start is skipped"
    assert len(rows) == len(set(rows)), "every note is listed once"
    if not any(changes):
        assert rows == present, "an undisturbed walk is the listing itself"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    start=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(SCOPES)), min_size=1, max_size=12),
    limit=st.integers(1, 5),
    changes=st.lists(st.lists(change, max_size=3), max_size=10),
    forget=st.booleans(),
    tool=st.sampled_from(["notes_list", "notes_search"]),
)
def test_a_walk_during_writes_edits_and_deletes_lists_each_note_of_its_start_once(
    start: list[tuple[int, str]],
    limit: int,
    changes: list[list[Op]],
    forget: bool,
    tool: str,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        notes = make_notes(Path(tmp))
        for number, scope in start:
            apply(notes, ("write", number, scope))
        if tool == "notes_list":
            present = listed(notes)
            page_of = tool_page(notes, tool, limit)
        else:
            everything = notes.json("notes_search", query="body", max_files=1000)["files"]
            present = [(f["scope"], f["path"]) for f in everything]
            page_of = tool_page(notes, tool, limit, query="body")
        check(present, walk(page_of, limit, changes, notes, forget), changes)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    start=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(SCOPES)), min_size=1, max_size=12),
    limit=st.integers(1, 5),
    changes=st.lists(st.lists(change, max_size=3), max_size=10),
)
def test_with_the_cache_off_a_fresh_process_resumes_a_listing_by_keyset(
    start: list[tuple[int, str]], limit: int, changes: list[list[Op]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_CONTEXT_NOTES_CACHE", "0")
        notes = make_notes(Path(tmp))
        for number, scope in start:
            apply(notes, ("write", number, scope))
        present = listed(notes)
        rows = walk(tool_page(notes, "notes_list", limit), limit, changes, notes, forget=True)
        edited = {
            (s, f"n{n:02d}.md") for page in changes for kind, n, s in page if kind != "delete"
        }
        deleted = {
            (s, f"n{n:02d}.md") for page in changes for kind, n, s in page if kind == "delete"
        }
        assert set(rows) <= set(present)
        assert set(present) - deleted <= set(rows), "nothing is skipped"
        assert {row for row in rows if rows.count(row) > 1} <= edited


@pytest.mark.parametrize("mode", ["held", "fresh", "keyset"])
def test_a_note_edited_before_its_page_is_still_listed(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported case: an offset cursor skipped the note edited between pages."""
    if mode == "keyset":
        monkeypatch.setenv("PI_CONTEXT_NOTES_CACHE", "0")
    notes = make_notes(tmp_path)
    for number in range(6):
        apply(notes, ("write", number, "session"))
    first = notes.json("notes_list", max_results=2)
    assert [f["path"] for f in first["files"]] == ["n05.md", "n04.md"]
    apply(notes, ("edit", 0, "session"))  # the oldest note: not listed yet, now the newest
    apply(notes, ("edit", 5, "session"))  # listed already, edited again
    rows = [f["path"] for f in first["files"]]
    cursor = first["next_cursor"]
    while cursor is not None:
        if mode != "held":
            list_cursor.forget_snapshots()
        page = notes.json("notes_list", max_results=2, cursor=cursor)
        rows += [f["path"] for f in page["files"]]
        cursor = page["next_cursor"]
    if mode == "keyset":  # the edited notes follow at the end, by path: the listed one again
        assert rows == ["n05.md", "n04.md", "n03.md", "n02.md", "n01.md", "n00.md", "n05.md"]
    else:
        assert rows == ["n05.md", "n04.md", "n03.md", "n02.md", "n01.md", "n00.md"]


def test_a_note_created_before_the_search_cursor_does_not_repeat_a_file(notes: Notes) -> None:
    """The reported case for search: an offset into path order showed a file twice."""
    for name in ("b.md", "c.md", "d.md", "e.md"):
        notes.call("notes_write", path=name, content="needle")
    first = notes.json("notes_search", query="needle", max_files=2)
    assert ([f["path"] for f in first["files"]], first["next_cursor"]) == (["b.md", "c.md"], 2)
    notes.call("notes_write", path="a.md", content="needle")  # sorts before the cursor
    list_cursor.forget_snapshots()  # and resumed by a fresh process
    rest = notes.json("notes_search", query="needle", max_files=2, cursor=2)
    assert ([f["path"] for f in rest["files"]], rest["next_cursor"]) == (["d.md", "e.md"], None)


def test_published_offsets_are_accepted_and_foreign_cursors_refused(tmp_path: Path) -> None:
    notes = make_notes(tmp_path)
    for number in range(5):
        apply(notes, ("write", number, "session"))
    everything = [f["path"] for f in notes.json("notes_list")["files"]]
    offset = notes.json("notes_list", cursor=2, max_results=2)
    assert [f["path"] for f in offset["files"]] == everything[2:4]
    assert isinstance(offset["next_cursor"], str)
    rest = notes.json("notes_list", cursor=offset["next_cursor"])
    assert [f["path"] for f in rest["files"]] == everything[4:]
    for bad in ("n1:", "p3.00000000", "n1:1:2:3:4:[1]", "n1:x:1:0:0:[]"):
        error: Any = notes.error("notes_list", cursor=bad)
        assert "next_cursor exactly as notes_list returned it" in error["error"], (bad, error)


def test_a_recorded_walk_that_is_damaged_or_foreign_is_never_trusted(
    tmp_path: Path, own_cache_dir: Path
) -> None:
    notes = make_notes(tmp_path)
    for number in range(6):
        apply(notes, ("write", number, "session"))
    first = notes.json("notes_list", max_results=2)
    magic = walks_module.MAGIC
    walks = [p for p in (own_cache_dir / "notes").glob("*.bin") if p.read_bytes()[:8] == magic]
    assert len(walks) == 1, "a walk with a second page is recorded"
    walks[0].write_bytes(walks[0].read_bytes()[:-3] + b"]]]")  # damaged: its CRC fails
    list_cursor.forget_snapshots()
    rows = [f["path"] for f in first["files"]]
    cursor = first["next_cursor"]
    while cursor is not None:  # resumed by keyset: still every note
        page = notes.json("notes_list", max_results=2, cursor=cursor)
        rows += [f["path"] for f in page["files"]]
        cursor = page["next_cursor"]
    assert rows == [f"n{n:02d}.md" for n in range(5, -1, -1)]


# --- across fresh processes: ``pi-context tool`` per page -----------------------------------


def cli_page(root: Path, cwd: Path, name: str, limit: int, **fixed: Any) -> Page:
    def page_of(cursor: int | str) -> dict[str, Any]:
        size = {"max_results": limit} if name == "notes_list" else {"max_files": limit}
        args = {"cursor": cursor, **size, **fixed}
        done = subprocess.run(
            [sys.executable, "-m", "pi_context", "tool", name, "--notes-home", str(root),
             "--cwd", str(cwd), "--args", json.dumps(args)],
            capture_output=True, text=True, timeout=120, env=os.environ.copy(),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    return page_of


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    start=st.lists(st.integers(0, 12), min_size=3, max_size=8),
    changes=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["write", "edit", "delete"]), st.integers(0, 12), st.just("project")
            ),
            max_size=2,
        ),
        max_size=4,
    ),
    tool=st.sampled_from(["notes_list", "notes_search"]),
)
@example(  # every note edited after the first page: a keyset resume would list two again
    start=[0, 1, 2, 3, 4, 5],
    changes=[[("edit", n, "project") for n in range(6)]],
    tool="notes_list",
)
@example(  # a note created before the cursor: an offset would show a file twice
    start=[1, 2, 3, 4, 5], changes=[[("write", 0, "project")]], tool="notes_search"
)
def test_a_walk_page_by_page_in_fresh_processes_lists_each_note_once(
    start: list[int], changes: list[list[Op]], tool: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        notes = make_notes(Path(tmp), clock=False)
        for number in start:
            apply(notes, ("write", number, "project"))
        root, cwd = Path(tmp) / "root", Path(tmp) / "project"
        fixed = {"query": "body"} if tool == "notes_search" else {}
        first = cli_page(root, cwd, tool, 1000, **fixed)(0)
        present = [(f["scope"], f["path"]) for f in first["files"]]
        page_of = cli_page(root, cwd, tool, 2, **fixed)
        check(present, walk(page_of, 2, changes, notes, forget=False), changes)
