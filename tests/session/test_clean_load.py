"""The clean-load shortcut (``runs.py``) builds what the per-entry loop of ``Session._load``
builds, and its branch walk by runs finds the path ``tree.branch_path`` walks, on generated
files: clean ones, and ones with repeated or missing ids, extra headers, non-objects, message
entries without a message, forward and dangling parents and parent cycles."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import Durability, Session
from pi_context.bindings.session import tree as tr
from pi_context.bindings.session.lazy import LazyEntries
from pi_context.bindings.session.runs import run_path, runs_of
from pi_context.bindings.session.store import RawFile, decode_value, parse_raw

HEADER = {"type": "session", "version": 3, "id": "s0", "timestamp": "t", "cwd": "/"}
IDS = [f"e{n}" for n in range(12)]


@st.composite
def _files(draw: st.DrawFn) -> bytes:
    """A session file: mostly children of the line before, with side branches, and (when
    ``hostile``) the cases that must send the load back to its loop."""
    hostile = draw(st.booleans())
    count = draw(st.integers(0, 30))
    lines = [json.dumps(HEADER)]
    previous: Any = draw(st.sampled_from([None, "s0"]))  # a first parent naming the header
    fresh = iter(f"id{n}" for n in range(1000))
    for _ in range(count):
        entry_id: Any = next(fresh)
        roll = draw(st.integers(0, 9))
        parent: Any = previous
        if roll == 0:
            parent = None  # a new root
        elif roll == 1:
            parent = draw(st.sampled_from([*IDS, "s0", "nowhere"]))  # a jump, maybe forward
        kind = draw(st.sampled_from(["message", "label", "custom", "thinking_level_change"]))
        value: Any = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "t"}
        if kind == "message":
            value["message"] = {"role": "user", "content": entry_id}
        if kind == "label":
            value["targetId"] = draw(st.sampled_from(IDS))
            value["label"] = draw(st.sampled_from(["x", "", None]))
        if hostile and draw(st.integers(0, 4)) == 0:
            trouble = draw(st.integers(0, 6))
            if trouble == 0:
                value["id"] = draw(st.sampled_from(IDS))  # may repeat
            elif trouble == 1:
                value["id"] = draw(st.sampled_from(["", 7, None]))
            elif trouble == 2:
                value["type"] = "session"
            elif trouble == 3:
                value = draw(st.sampled_from([[1], "text", 5, True]))
            elif trouble == 4:
                value = {"type": "message", "id": entry_id, "parentId": parent, "message": 3}
            elif trouble == 5:
                parent = draw(st.sampled_from(IDS))
                value["parentId"] = parent  # a forward parent: a cycle is possible
            else:
                value["parentId"] = 12  # not a string
        elif draw(st.integers(0, 5)) == 0:
            entry_id = draw(st.sampled_from(IDS))  # ids the jumps above can reach
            value["id"] = entry_id
        lines.append(json.dumps(value))
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            previous = value["id"]
    return ("\n".join(lines) + "\n").encode()


def _session(raw: RawFile, *, shortcut: bool) -> Session:
    session = Session(
        header=raw.values[0], path=None, persist=False, now=None, uuids=None,
        durability=Durability.NONE, readonly=True,
    )  # fmt: skip
    if shortcut:
        session._load(raw.values, raw.lines, raw.problems, raw.clean, raw.kinds)
    else:
        session._load(raw.values, raw.lines, raw.problems)
    return session


@settings(max_examples=400, deadline=None)
@given(data=_files())
def test_the_shortcut_builds_what_the_loop_builds(data: bytes) -> None:
    fast, slow = _session(parse_raw(data), shortcut=True), _session(parse_raw(data), shortcut=False)
    assert isinstance(fast._entries, LazyEntries) == (fast._runs is not None)
    assert isinstance(slow._entries, list)
    assert fast.entries == slow.entries
    assert list(fast._lines) == list(slow._lines)
    assert list(fast._by_id.items()) == list(slow._by_id.items())
    assert [(p.kind, p.line, p.message) for p in fast.problems] == [
        (p.kind, p.line, p.message) for p in slow.problems
    ]
    assert (fast.leaf_id, fast.labels, fast._label_stamps) == (
        slow.leaf_id,
        slow.labels,
        slow._label_stamps,
    )
    assert fast.branch() == slow.branch()
    assert fast.projection() == slow.projection()
    for entry_id in fast._by_id:
        assert fast.branch(entry_id) == slow.branch(entry_id)


@settings(max_examples=400, deadline=None)
@given(data=_files())
def test_runs_walk_the_path_the_parent_links_walk(data: bytes) -> None:
    raw = parse_raw(data)
    runs = runs_of(raw.clean) if raw.clean is not None else None
    if runs is None:
        return
    entries = [decode_value(raw, index) for index in range(1, len(raw.values))]
    by_id = {entry["id"]: entry for entry in entries}
    for last, entry in enumerate(entries):
        path = [entries[index] for index in run_path(runs, last)]
        assert path == tr.branch_path(entry, by_id)


def test_a_clean_file_takes_the_shortcut_and_a_repeated_id_does_not() -> None:
    rows = [HEADER, *({"type": "custom", "id": f"a{n}", "parentId": None} for n in range(3))]
    clean = parse_raw(b"".join(json.dumps(r).encode() + b"\n" for r in rows)).clean
    assert clean is not None and runs_of(clean) is not None
    rows.append({"type": "custom", "id": "a1", "parentId": "a2"})
    clean = parse_raw(b"".join(json.dumps(r).encode() + b"\n" for r in rows)).clean
    assert clean is not None and runs_of(clean) is None


def test_an_append_extends_the_runs() -> None:
    rows = [HEADER, {"type": "custom", "id": "a", "parentId": None}]
    rows.append({"type": "custom", "id": "b", "parentId": "a"})
    session = _session(
        parse_raw(b"".join(json.dumps(r).encode() + b"\n" for r in rows)), shortcut=True
    )
    assert session._runs is not None
    assert [e["id"] for e in session.branch()] == ["a", "b"]
    session._readonly = False
    session.move_leaf("a")
    new = session.append_custom("x", {"n": 1})
    assert session._runs is not None and session._runs.size == 3
    assert [e["id"] for e in session.branch()] == ["a", new]


@settings(max_examples=300, deadline=None)
@given(
    data=_files(),
    steps=st.lists(st.tuples(st.integers(0, 40), st.booleans(), st.booleans()), max_size=12),
)
def test_appends_walk_the_path_the_parent_links_walk(
    data: bytes, steps: list[tuple[int, bool, bool]]
) -> None:
    """Appends after a clean load (at the leaf, at a moved leaf, as a new root, with an id a
    loaded entry names as its missing parent) keep the runs where they can follow, and every
    branch is the path the parent links walk."""
    session = _session(parse_raw(data), shortcut=True)
    session._readonly = False
    loaded = session._runs is not None
    for target, root, taken in steps:
        ids = [e["id"] for e in session.entries]
        if root or not ids:
            session.reset_leaf()
        elif target % 3:
            session.move_leaf(ids[target % len(ids)])
        entry = session._base("custom")
        if taken:
            entry["id"] = "nowhere"  # the files' dangling parent, when it is new here
        if entry["id"] in session._by_id:
            continue
        entry["customType"] = "t"
        session._append_entry(entry)
    by_id = {e["id"]: e for e in session.entries}
    for entry_id in by_id:
        assert session.branch(entry_id) == tr.branch_path(by_id[entry_id], by_id)
    leaf = session.leaf_id
    assert session.branch() == (tr.branch_path(by_id[leaf], by_id) if leaf else [])
    if loaded and not any(taken for _, _, taken in steps):
        assert session._runs is not None, "appends with new ids keep the runs"


def test_an_appended_id_a_loaded_entry_names_as_its_parent_drops_the_runs() -> None:
    """``b`` names a parent no entry has; once an entry with that id is appended, ``b`` is its
    child, and a branch through ``b`` goes on to it (the runs, which took ``b`` as a root,
    are dropped)."""
    rows = [HEADER, {"type": "custom", "id": "a", "parentId": None}]
    rows.append({"type": "custom", "id": "b", "parentId": "nowhere"})
    session = _session(
        parse_raw(b"".join(json.dumps(r).encode() + b"\n" for r in rows)), shortcut=True
    )
    session._readonly = False
    assert session._runs is not None
    session.reset_leaf()
    first = session._base("custom")
    first.update(id="nowhere", customType="t")
    session._append_entry(first)
    assert session._runs is None
    session.move_leaf("b")
    last = session.append_custom("x", {"n": 1})
    assert [e["id"] for e in session.branch()] == ["nowhere", "b", last]
