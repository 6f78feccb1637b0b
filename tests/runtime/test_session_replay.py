"""Session-stored notes: ``pi-context/note`` operations written by the real Pi, replayed here.

Only supported operations with safe paths, representable timestamps and results within the
UTF-8 limit are applied; every other operation is skipped with its reason, and a skipped
operation never replaces or changes a note that was valid before it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes.session_replay import (
    MAX_NOTE_BYTES,
    MAX_TIMESTAMP_MS,
    MIN_TIMESTAMP_MS,
    NOTE_OPERATION_TYPE,
    ReplayedNote,
    replay_notes,
)
from pi_context.bindings.session import Session

T0 = 1_790_000_000_000


def op(kind: str = "write", path: str = "plan.md", **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"op": kind, "path": path, "createdAt": T0, "updatedAt": T0, **fields}
    return {k: v for k, v in data.items() if v is not _ABSENT}


_ABSENT = object()


def _pi_session(run_pi: Any, tmp_path: Path, operations: list[Any]) -> Session:
    """The real Pi writes a session with a user message and one custom entry per operation."""
    ops = [{"op": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}]
    ops += [
        {"op": "custom", "customType": NOTE_OPERATION_TYPE, "data": data} for data in operations
    ]
    (built,) = run_pi(
        [
            {
                "kind": "build",
                "cwd": str(tmp_path / "project"),
                "dir": str(tmp_path / "sessions"),
                "ops": ops,
                "leafRefs": [],
            }
        ]
    )
    assert "error" not in built, built
    return Session.open(Path(built["path"]))


VALID = [
    op(text="first draft", createdAt=T0, updatedAt=T0),
    op("append", text="\nmore", updatedAt=T0 + 10),
    op(stale=True, updatedAt=T0 + 20),  # mark only
    op("write", "done/ünïcødé.md", text="日本語 ✓", createdAt=T0 + 5, updatedAt=T0 + 5),
]


def test_valid_operations_replay_in_branch_order(run_pi, tmp_path):
    replay = replay_notes(_pi_session(run_pi, tmp_path, VALID).branch())
    assert replay.skipped == []
    assert replay.notes["plan.md"] == ReplayedNote(
        "plan.md", "first draft\nmore", True, T0, T0 + 20
    )
    assert replay.notes["done/ünïcødé.md"].text == "日本語 ✓"
    revived = replay_notes(
        _pi_session(
            run_pi, tmp_path / "b", [*VALID, op("append", text="!", updatedAt=T0 + 30)]
        ).branch()
    )
    assert revived.notes["plan.md"].stale is False, "new text revives a stale note"
    assert revived.notes["plan.md"].created_ms == T0, "creation time is kept"


# Each rejection class, aimed at the valid note "plan.md" (or at a missing one).
INVALID: dict[str, list[Any]] = {
    "unsupported": [
        op("delete"),
        op("edit", text="x"),
        op(None, text="x"),
        {"path": "plan.md", "text": "x", "createdAt": T0, "updatedAt": T0},
        "write plan.md",
        ["write", "plan.md"],
        None,
        op(text=42),
        op(text=["x"]),
        op(stale="yes", text="x"),
        op(),  # neither text nor stale
    ],
    "unsafe-path": [
        op(path="../plan.md", text="x"),
        op(path="/etc/passwd", text="x"),
        op(path="a/../plan.md", text="x"),
        op(path="./plan.md", text="x"),
        op(path="", text="x"),
        op(path="a\\b.md", text="x"),
        op(path="a//b.md", text="x"),
        op(path=".pi-notes-locks/plan.md", text="x"),
        op(path="bad\u0007name.md", text="x"),
        op(path="x" * 1100, text="x"),
        op(path=None, text="x"),
        op(path=7, text="x"),
    ],
    "timestamp": [
        op(text="x", updatedAt="2026-01-01T00:00:00Z"),
        op(text="x", createdAt=None),
        op(text="x", createdAt=True),
        op(text="x", updatedAt=1e300),
        op(text="x", updatedAt=-1e300),
        op(text="x", updatedAt=MAX_TIMESTAMP_MS + 1),
        op(text="x", createdAt=MIN_TIMESTAMP_MS - 1),
        op(text="x", updatedAt=8.64e15 + 1),
        op(text="x", updatedAt=_ABSENT),
    ],
    "oversized": [
        op(text="x" * (MAX_NOTE_BYTES + 1)),
        op(text="é" * (MAX_NOTE_BYTES // 2 + 1)),  # few characters, too many bytes
        op("append", text="y" * (MAX_NOTE_BYTES - len("first draft") + 1)),
    ],
    "no-note": [op(path="missing.md", stale=True)],
}


@pytest.mark.parametrize("kind", sorted(INVALID))
def test_every_rejection_class_is_skipped_and_never_replaces_a_valid_note(run_pi, tmp_path, kind):
    bad = INVALID[kind]
    session = _pi_session(run_pi, tmp_path, [VALID[0], *bad])
    replay = replay_notes(session.branch())
    assert replay.notes == {"plan.md": ReplayedNote("plan.md", "first draft", False, T0, T0)}
    assert [s.kind for s in replay.skipped] == [kind] * len(bad)
    ids = [e["id"] for e in session.branch() if e.get("customType") == NOTE_OPERATION_TYPE][1:]
    assert [s.entry_id for s in replay.skipped] == ids, "each skip names its entry"
    assert all(s.reason for s in replay.skipped)


def test_a_note_at_the_size_limit_is_accepted(run_pi, tmp_path):
    exact = op(text="é" * (MAX_NOTE_BYTES // 2))
    replay = replay_notes(_pi_session(run_pi, tmp_path, [exact]).branch())
    assert len(replay.notes["plan.md"].text.encode()) == MAX_NOTE_BYTES
    assert replay.skipped == []


def test_text_that_is_not_valid_unicode_is_skipped():
    # A lone surrogate survives JSON (as an escape) but no UTF-8 note file can hold it.
    raw = (
        '{"type":"custom","customType":"pi-context/note","data":'
        + json.dumps(op(text="bad \ud800 text"))
        + ',"id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}'
    )
    entry = json.loads(raw)
    replay = replay_notes(
        [{"type": "custom", "customType": NOTE_OPERATION_TYPE, "data": op(text="ok")}, entry]
    )
    assert replay.notes["plan.md"].text == "ok"
    assert [s.kind for s in replay.skipped] == ["oversized"]


def test_replay_is_branch_local(run_pi, tmp_path):
    ops = [
        {"op": "message", "message": {"role": "user", "content": "root", "timestamp": 1}},
        {"op": "custom", "customType": NOTE_OPERATION_TYPE, "data": op(text="shared")},
        {"op": "custom", "customType": NOTE_OPERATION_TYPE, "data": op(path="left.md", text="L")},
        {"op": "branch", "target": 1},
        {"op": "custom", "customType": NOTE_OPERATION_TYPE, "data": op(path="right.md", text="R")},
    ]
    (built,) = run_pi(
        [
            {
                "kind": "build",
                "cwd": str(tmp_path),
                "dir": str(tmp_path / "s"),
                "ops": ops,
                "leafRefs": [],
            }
        ]
    )
    session = Session.open(Path(built["path"]))
    left, right = built["refs"][2], built["refs"][3]
    assert set(replay_notes(session.branch(left)).notes) == {"plan.md", "left.md"}
    assert set(replay_notes(session.branch(right)).notes) == {"plan.md", "right.md"}


def test_other_entries_are_not_operations():
    entries = [
        {"type": "custom", "customType": "other", "data": op(text="x")},
        {"type": "custom_message", "customType": NOTE_OPERATION_TYPE, "content": "x"},
        {"type": "message", "message": {"role": "user", "content": "x"}},
    ]
    replay = replay_notes(entries)
    assert replay.notes == {} and replay.skipped == []


_paths = st.sampled_from(["plan.md", "a/b.md", "c.md"])
_valid_ops = st.builds(
    lambda kind, path, text, stale, t: op(
        kind, path, text=text, stale=stale, createdAt=t, updatedAt=t
    ),
    st.sampled_from(["write", "append"]),
    _paths,
    st.one_of(st.just(_ABSENT), st.text(max_size=20)),
    st.one_of(st.just(_ABSENT), st.booleans()),
    st.integers(MIN_TIMESTAMP_MS, MAX_TIMESTAMP_MS),
)
# Invalid whatever comes before them (an oversized append could fit after a short note).
_ALWAYS_INVALID = [
    bad
    for kind, group in INVALID.items()
    for bad in group
    if kind != "no-note" and not (isinstance(bad, dict) and bad.get("op") == "append")
]
_invalid_ops = st.sampled_from(_ALWAYS_INVALID)


def _entries(datas: list[Any]) -> list[dict[str, Any]]:
    return [{"type": "custom", "customType": NOTE_OPERATION_TYPE, "data": d} for d in datas]


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    valid=st.lists(_valid_ops, max_size=8),
    invalid=st.lists(st.tuples(st.integers(0, 8), _invalid_ops), max_size=6),
)
def test_inserting_invalid_operations_anywhere_changes_no_note(valid, invalid):
    clean = replay_notes(_entries(valid))
    mixed = list(valid)
    for position, bad in invalid:
        mixed.insert(min(position, len(mixed)), bad)
    dirty = replay_notes(_entries(mixed))
    assert dirty.notes == clean.notes
    assert len(dirty.skipped) == len(clean.skipped) + len(invalid)
