"""The columns ``notes_list`` and ``notes_search`` pages are cut from (``columns.py``): each
home's notes sorted once per read, the homes merged per call (``merge_runs``), search rows
built only for the page. Whatever changes between calls, a resident host's answer (its held
reads patched by change notification, its memoized columns) equals a fresh process's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import columns, resident
from pi_context.bindings.notes.homes import SCOPES

from .conftest import Notes

# --- merge_runs: one sort by time, ties ordered by path and scope ---------------------------

item = st.tuples(
    st.integers(0, 3), st.sampled_from(["a.md", "b.md", "c/a.md", "é.md"]), st.sampled_from(SCOPES)
)


@given(items=st.lists(item, max_size=40), data=st.data())
@example(items=[(1, "b.md", "human"), (1, "a.md", "self"), (1, "a.md", "human")], data=None)
def test_merged_runs_are_the_published_list_order(
    items: list[tuple[int, str, str]], data: Any
) -> None:
    updated = [u for u, _p, _s in items]
    paths = [p for _u, p, _s in items]
    scopes = [s for _u, _p, s in items]
    if data is None:
        order = list(range(len(items)))
    else:
        order = data.draw(st.permutations(range(len(items))))
    given_order = list(order)
    columns.merge_runs(order, updated, paths, scopes)
    assert sorted(order) == list(range(len(items))), "every note once"

    def key(index: int) -> tuple[int, str, str]:
        return -updated[index], paths[index], scopes[index]

    # Newest first, then path, then scope; a tie beyond that keeps the given order.
    assert order == sorted(given_order, key=key)


# --- a resident host answers as a fresh process, after any changes --------------------------


def fresh(notes: Notes, name: str, **args: Any) -> Any:
    """The answer of a process that holds nothing (no view, no memoized columns); the
    resident view's watcher keeps running, so its held reads still see every change."""
    watcher = resident._watcher
    resident._watcher = None
    saved = dict(columns._memo)
    columns.forget()
    try:
        return notes.json(name, **args)
    finally:
        resident._watcher = watcher
        columns._memo.update(saved)


HOMES = ["human", "project", "session"]
change = st.tuples(
    st.sampled_from(["write", "edit", "crumple", "smooth", "delete"]),
    st.sampled_from(HOMES),
    st.sampled_from(["n1.md", "d/n2.md", "d/e/n3.md", "n4.md"]),
    st.booleans(),
)


def perform(notes: Notes, op: tuple[str, str, str, bool]) -> None:
    kind, scope, path, needle = op
    body = "one needle here\nend" if needle else "nothing\nend"
    if kind == "write":
        notes.call("notes_write", path=path, scope=scope, content=body)
    elif kind == "edit":
        notes.call(
            "notes_update", path=path, scope=scope, edits=[{"oldText": "end", "newText": "end."}]
        )
    elif kind in ("crumple", "smooth"):
        notes.call("notes_update", path=path, scope=scope, crumpled=kind == "crumple")
    else:
        notes.store().physical_path(scope, path).unlink(missing_ok=True)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(change, min_size=1, max_size=10))
def test_a_resident_listing_and_search_equal_a_fresh_process_after_any_changes(
    resident_host: None, notes: Notes, ops: list[tuple[str, str, str, bool]]
) -> None:
    for n in range(3):
        for scope in HOMES:
            notes.call("notes_write", path=f"base-{n}.md", scope=scope, content="a needle\n")
    for op in ops:
        perform(notes, op)
        for wastebasket in (False, True):
            listed = notes.json("notes_list", max_results=1000, wastebasket=wastebasket)
            expected = fresh(notes, "notes_list", max_results=1000, wastebasket=wastebasket)
            del listed["next_cursor"], expected["next_cursor"]  # a walk's name is its own
            assert listed == expected
            args = {"query": "needle", "max_files": 3, "wastebasket": wastebasket}
            assert notes.json("notes_search", **args) == fresh(notes, "notes_search", **args)
            paged = notes.json("notes_list", max_results=2, wastebasket=wastebasket)
            assert paged["files"] == listed["files"][:2]


def test_identities_sharing_a_root_each_get_their_own_listing(
    resident_host: None, notes: Notes
) -> None:
    """A listing reused because no home changed is still told in the caller's addresses: a
    second identity (another session and agent) over the same root sees its own homes."""
    other = notes.other(session_id="0190f1a2-aaaa-7bbb-8ccc-000000000002", agent_name="other")
    for scope in ("human", "project", "agent", "model"):
        notes.call("notes_write", path=f"{scope}-note.md", scope=scope, content="a needle\n")
    other.call("notes_write", path="theirs.md", scope="agent", content="a needle\n")
    args = {"query": "needle", "max_files": 10}
    for _round in range(2):  # both identities answered back to back, then checked
        listed = [caller.json("notes_list", max_results=100) for caller in (notes, other)]
        found = [caller.json("notes_search", **args) for caller in (notes, other)]
        for caller, page, hits in zip((notes, other), listed, found, strict=True):
            expected = fresh(caller, "notes_list", max_results=100)
            del page["next_cursor"], expected["next_cursor"]
            assert page == expected
            assert hits == fresh(caller, "notes_search", **args)
