"""``notes_list`` paging while notes are written and edited between pages (issue 31, finding 6).

Most recently updated first means an edit moves a note to the front: an offset cursor skipped a
note edited before its page came. The walk now lists every note present at its start exactly
once and ends, whatever is written or edited between its pages; a process that no longer holds
the walk's order (another process, say) resumes by keyset: nothing is skipped.
"""

from __future__ import annotations

import json
import tempfile
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import list_cursor
from pi_context.bindings.tools import ToolContext

from .conftest import Notes

SCOPES = ("session", "project", "agent")

change = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 30), st.sampled_from(SCOPES)),
    st.tuples(st.just("edit"), st.integers(0, 30), st.sampled_from(SCOPES)),
)


def make_notes(tmp: Path) -> Notes:
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
            clock=lambda: next(ticks),
        )
    )


def apply(notes: Notes, op: tuple[str, int, str]) -> None:
    kind, number, scope = op
    path = f"n{number:02d}.md"
    if kind == "write":
        result = notes.call("notes_write", path=path, scope=scope, content="body")
    else:
        edit = [{"oldText": "body", "newText": "body+"}]
        result = notes.call("notes_edit", path=path, scope=scope, edits=edit)
    assert not result.is_error or "not found" in result.text.lower(), result.text


def listed(notes: Notes) -> list[tuple[str, str]]:
    return [(f["scope"], f["path"]) for f in notes.json("notes_list", max_results=1000)["files"]]


def walk(
    notes: Notes, limit: int, changes: list[list[tuple[str, int, str]]], forget: bool
) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    cursor: int | str | None = 0
    pages = 0
    while cursor is not None:
        result = notes.call("notes_list", max_results=limit, cursor=cursor)
        assert not result.is_error, result.text
        page = json.loads(result.text)
        assert page["files"] or cursor == 0, "a page before the end is never empty"
        rows += [(f["scope"], f["path"]) for f in page["files"]]
        cursor = page["next_cursor"]
        for op in changes[pages] if pages < len(changes) else []:
            apply(notes, op)
        if forget:
            list_cursor.forget_snapshots()  # as a fresh process resuming the walk would
        pages += 1
        assert pages < 500, "the walk ends"
    return rows


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    start=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(SCOPES)), min_size=1, max_size=12),
    limit=st.integers(1, 5),
    changes=st.lists(st.lists(change, max_size=2), max_size=10),
    forget=st.booleans(),
)
def test_a_walk_during_writes_and_edits_lists_every_note_present_at_its_start(
    start: list[tuple[int, str]],
    limit: int,
    changes: list[list[tuple[str, int, str]]],
    forget: bool,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        notes = make_notes(Path(tmp))
        for number, scope in start:
            apply(notes, ("write", number, scope))
        present = listed(notes)
        rows = walk(notes, limit, changes, forget)
        # A write to a note that exists rewrites it: an edit too.
        edited = {(s, f"n{n:02d}.md") for page in changes for _kind, n, s in page}
        assert set(present) <= set(rows), "no note present at the start is skipped"
        assert set(rows) <= set(present), "a note written during the walk is not listed"
        repeated = {row for row in rows if rows.count(row) > 1}
        if forget:
            assert repeated <= edited, "only a note edited during the walk may come again"
        else:
            assert not repeated, "the walk's own process lists every note exactly once"
        if not any(changes):
            assert rows == present, "an undisturbed walk is the listing itself"


@pytest.mark.parametrize("forget", [False, True], ids=["held", "keyset"])
def test_a_note_edited_before_its_page_is_still_listed(tmp_path: Path, forget: bool) -> None:
    """The reported case: an offset cursor skipped the note edited between pages."""
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
        if forget:
            list_cursor.forget_snapshots()
        page = notes.json("notes_list", max_results=2, cursor=cursor)
        rows += [f["path"] for f in page["files"]]
        cursor = page["next_cursor"]
    if forget:  # the edited notes follow at the end, by path: the listed one comes again
        assert rows == ["n05.md", "n04.md", "n03.md", "n02.md", "n01.md", "n00.md", "n05.md"]
    else:
        assert rows == ["n05.md", "n04.md", "n03.md", "n02.md", "n01.md", "n00.md"]


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
