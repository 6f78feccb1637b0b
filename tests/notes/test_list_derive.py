"""A listing moved on by the changed notes equals one made afresh (``columns.py``): each home's
columns derived from an earlier read's (``ListColumns.derive``) and the merged listing derived
from the earlier listing (``Merged.derive``) list the same notes, in the same order, with the
same records, as columns and a listing built from nothing; and a walk's widest cursor counted
from its parts (``Walk.widest``) is the widest one encoded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import columns, list_cursor, list_merge, resident
from pi_context.bindings.notes.cache import Entry
from pi_context.bindings.notes.frontmatter import NoteMeta, parse_note, render_note
from pi_context.bindings.notes.records import HomeRead
from pi_context.bindings.tool_output import json_bytes

from .conftest import Notes

SCOPES = ["human", "project", "project"]
"""Three homes, two of one scope (named homes share a scope): ties end at the home."""
PATHS = ["a.md", "b.md", "c/a.md", "é.md", "z.md", "c/é.md"]
CHOSEN = "selection"


def pair(path: str, updated: int, crumpled: bool) -> tuple[str, Entry]:
    meta = NoteMeta("self", False, updated - 5, updated, updated, 0)
    extra = (f"crumpledAt: {updated}",) if crumpled else ()
    text = render_note(meta, "body\n", extra)
    parsed = parse_note(text, 0)
    return path, Entry.of((1, 2, len(text.encode()), 3, 4, 5), text, parsed)


put = st.tuples(
    st.just("put"),
    st.integers(0, 2),
    st.lists(
        st.tuples(st.sampled_from(PATHS), st.integers(0, 3), st.booleans()),
        min_size=1,
        max_size=3,
    ),
)
drop = st.tuples(st.just("drop"), st.integers(0, 2), st.lists(st.sampled_from(PATHS), max_size=3))
fresh = st.tuples(st.just("fresh"), st.integers(0, 2), st.randoms(use_true_random=False))
same = st.tuples(st.just("same"), st.integers(0, 2), st.none())
operation = st.one_of(put, put, drop, fresh, same)


def patched(read: HomeRead, gone: set[str], added: list[tuple[str, Entry]]) -> HomeRead:
    """What the resident view makes of a held read when note files changed: the others'
    very pairs, in their order, then the re-read ones."""
    kept = [entry for entry in read.entries if entry[0] not in gone]
    return HomeRead(read.scope, kept + added, None, [], [])


def listed(made: list_merge.Merged) -> list[Any]:
    return [
        (made.updated[i], made.paths[i], made.scope_column[i], made.home_of[i], made.record(i))
        for i in made.order
    ]


@pytest.fixture(autouse=True)
def forgotten() -> Iterator[None]:
    columns.forget()
    yield
    columns.forget()


@settings(max_examples=300, deadline=None)
@given(
    seed=st.lists(st.tuples(st.sampled_from(PATHS), st.integers(0, 3), st.booleans())),
    operations=st.lists(operation, min_size=1, max_size=20),
)
def test_a_derived_listing_equals_one_made_afresh(
    seed: list[tuple[str, int, bool]], operations: list[tuple[str, int, Any]]
) -> None:
    columns.forget()
    reads = []
    for number, scope in enumerate(SCOPES):
        first = {path: pair(path, updated, crumpled) for path, updated, crumpled in seed[number::3]}
        reads.append(HomeRead(scope, list(first.values()), None, [], []))
    derived = 0
    for kind, number, argument in operations:
        read = reads[number]
        before = columns.list_columns(read)
        if kind == "put":
            changed = {path: pair(path, updated, mark) for path, updated, mark in argument}
            read = patched(read, set(changed), list(changed.values()))
        elif kind == "drop":
            read = patched(read, set(argument), [])
        elif kind == "fresh":  # a whole home read again: new pairs, in another order
            again = [pair(p, e.meta.updated_at, e.extra_lines != ()) for p, e in read.entries]
            argument.shuffle(again)
            read = HomeRead(read.scope, again, None, [], [])
        else:
            read = HomeRead(read.scope, list(read.entries), None, [], [])
        reads[number] = read
        homes = [columns.list_columns(r) for r in reads]
        if kind in ("put", "drop", "same"):
            # A patched read is never sorted afresh: its columns move on from earlier ones
            # (of this home, or of the other home of its scope when they share no note); at
            # most 20 operations of 3 notes each stay within the columns' slack (``slack``).
            assert homes[number] is before or homes[number].lineage
            derived += homes[number] is not before
        anew = [columns.ListColumns(r) for r in reads]
        for home, made in zip(homes, anew, strict=True):
            for side in ("live", "crumpled_order"):
                ours = [home.sources[i] for i in getattr(home, side)]
                assert ours == [made.sources[i] for i in getattr(made, side)]
            assert len(home) == len(made)
        for wastebasket in (False, True):
            ours = list_merge.merged(CHOSEN, SCOPES, homes, wastebasket)
            expected = list_merge.Merged(CHOSEN, SCOPES, anew, wastebasket)
            assert listed(ours) == listed(expected)
            assert ours.excluded == expected.excluded
            assert ours.texts() == expected.texts()
    if any(kind == "put" for kind, _n, _a in operations):
        assert derived, "a changed note moved the held columns on"


def test_a_listing_follows_several_changes_of_a_home_between_two_calls() -> None:
    """Three reads of one home between two listings: the listing follows the lineage."""
    read = HomeRead("human", [pair(p, 1, False) for p in PATHS], None, [], [])
    first = list_merge.merged(CHOSEN, ["human"], [columns.list_columns(read)], False)
    for step in range(3):
        read = patched(read, {PATHS[step]}, [pair(PATHS[step], 5 + step, step == 1)])
        home = columns.list_columns(read)
    later = list_merge.merged(CHOSEN, ["human"], [home], False)
    assert later is not first and not later.fresh, "derived, not merged afresh"
    expected = list_merge.Merged(CHOSEN, ["human"], [columns.ListColumns(read)], False)
    assert listed(later) == listed(expected)
    assert [p for _u, p, *_rest in listed(later)][:2] == ["c/a.md", "a.md"]
    assert later.excluded == expected.excluded == 1


text = st.text(
    st.characters(codec="utf-8", exclude_categories=())
    | st.sampled_from(['"', "\\", "\n", "\ud800"]),
    max_size=12,
)


@given(
    start=st.integers(0, 10**13),
    name=text,
    offset=st.integers(0, 10**7),
    rows=st.lists(st.tuples(st.integers(0, 10**14), text, text), min_size=1, max_size=30),
)
def test_the_widest_cursor_is_counted_as_encoded(
    start: int, name: str, offset: int, rows: list[tuple[int, str, str]]
) -> None:
    walk = list_cursor.Walk(
        list(range(len(rows))), list_cursor._head(start, name), lambda i: (offset + i, rows[i])
    )
    for end in range(len(rows) + 1):
        encoded = [json_bytes(walk.cursor_of(i)) for i in range(1, end)]
        assert walk.widest(end) == max(encoded, default=0)


# --- through the tools: a resident host moves its listing on after a write ------------------


def test_a_write_moves_a_resident_listing_on_as_a_fresh_process_lists_it(
    resident_host: None, notes: Notes
) -> None:
    for n in range(30):
        scope = ("human", "project", "session")[n % 3]
        notes.call("notes_write", path=f"d{n % 4}/n{n}.md", scope=scope, content="a\n")
    first = notes.json("notes_list", max_results=100)
    notes.call("notes_write", path="d1/n4.md", scope="project", content="b\n")  # moves first
    notes.call("notes_update", path="d2/n2.md", scope="session", crumpled=True)
    later = notes.json("notes_list", max_results=100)
    made = list_merge._merged[-1]
    assert not made.fresh, "the held listing was moved on, not merged again"
    assert later["files"][0]["path"] == "d1/n4.md"
    assert later["crumpled_excluded"] == first["crumpled_excluded"] + 1
    watcher, resident._watcher = resident._watcher, None  # a process holding nothing
    columns.forget()
    try:
        again = notes.json("notes_list", max_results=100)
    finally:
        resident._watcher = watcher
    del later["next_cursor"], again["next_cursor"]  # a walk's name is its own
    assert later == again
