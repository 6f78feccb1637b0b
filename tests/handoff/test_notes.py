"""Structured task notes: every validation rule and error code, updates, eviction, replay."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import HistoryRecord, extract_records
from pi_context.bindings.handoff.notes import (
    BACKGROUND_EVENT,
    KINDS,
    MAX_NOTES,
    NOTE_EVENT,
    STATE_EVENT,
    NoteState,
    apply_updates,
    compile_notes,
    memory_status,
    read_state,
    render_notes,
    restore_notes,
    validate_note,
)
from pi_context.bindings.session import Session

from .conftest import new_session, user

RECORDS = [
    HistoryRecord("u1", "user", "t1", "the user"),
    HistoryRecord("a1", "assistant", "t2", "the assistant"),
    HistoryRecord("s1", "summary", "t3", "a summary"),
    HistoryRecord("t1", "toolResult", "t4", "a tool result"),
]


def note(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "key": "goal-1",
        "kind": "goal",
        "text": "Port the parser",
        "sourceIds": ["u1"],
        "inference": False,
        "status": "active",
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not ...}


VALID = [
    ("plain", note()),
    ("key 64 chars", note(key="k" * 64)),
    ("key charset", note(key="aZ09_-")),
    ("text exactly 1600 bytes", note(text="é" * 800)),
    ("eight sources", note(sourceIds=["u1", "a1", "t1", "u1", "a1", "t1", "u1", "a1"])),
    ("confirmed constraint cites user", note(kind="constraint", sourceIds=["a1", "u1"])),
    ("inferred constraint without user", note(kind="constraint", sourceIds=["a1"], inference=True)),
    ("resolved", note(status="resolved")),
    *[(f"kind {k}", note(kind=k, sourceIds=["u1"])) for k in KINDS],
]

INVALID = [
    ("not an object", ["x"], "invalid_note"),
    ("empty key", note(key=""), "invalid_note"),
    ("key 65 chars", note(key="k" * 65), "invalid_note"),
    ("key with space", note(key="a b"), "invalid_note"),
    ("key with dot", note(key="a.b"), "invalid_note"),
    ("key not a string", note(key=5), "invalid_note"),
    ("unknown kind", note(kind="task"), "invalid_note"),
    ("blank text", note(text=" \n\t "), "invalid_note"),
    ("text 1601 bytes", note(text="a" * 1601), "invalid_note"),
    ("text not a string", note(text=["x"]), "invalid_note"),
    ("inference missing", note(inference=...), "invalid_note"),
    ("inference not bool", note(inference=1), "invalid_note"),
    ("bad status", note(status="done"), "invalid_note"),
    ("no sources", note(sourceIds=[]), "invalid_note"),
    ("nine sources", note(sourceIds=["u1"] * 9), "invalid_note"),
    ("sources not a list", note(sourceIds="u1"), "invalid_note"),
    ("unknown source", note(sourceIds=["nope"]), "invalid_source"),
    ("non-string source", note(sourceIds=[1]), "invalid_source"),
    (
        "confirmed constraint without user",
        note(kind="constraint", sourceIds=["a1"]),
        "invalid_source",
    ),
]


@pytest.mark.parametrize(("name", "value"), VALID, ids=[v[0] for v in VALID])
def test_valid_notes(name: str, value: dict[str, Any]) -> None:
    n = validate_note(value, RECORDS)
    assert n.key == value["key"] and n.kind == value["kind"]
    assert len(n.source_ids) == len(set(value["sourceIds"]))


@pytest.mark.parametrize(("name", "value", "code"), INVALID, ids=[v[0] for v in INVALID])
def test_invalid_notes(name: str, value: Any, code: str) -> None:
    with pytest.raises(HandoffError) as err:
        validate_note(value, RECORDS)
    assert err.value.code == code


def test_text_is_trimmed_and_summary_forces_inference() -> None:
    n = validate_note(note(text="  keep it  ", sourceIds=["s1", "u1"]), RECORDS)
    assert n.text == "keep it" and n.inference is True
    assert validate_note(note(), RECORDS).inference is False


def test_revisions_chain() -> None:
    s1 = apply_updates(NoteState(), [note()], RECORDS, budget=10_000)
    s2 = apply_updates(s1, [note(text="Port it faster")], RECORDS, budget=10_000)
    s3 = apply_updates(s2, [note(status="resolved")], RECORDS, budget=10_000)
    assert [(n.revision, n.previous_revision) for n in s3.notes] == [(3, 2)]
    assert s1.notes[0].to_json().get("previousRevision") is None
    assert s3.version == 2


@pytest.mark.parametrize("kind", ["constraint", "failed_attempt"])
def test_protected_kind_cannot_change_live(kind: str) -> None:
    first = apply_updates(NoteState(), [note(kind=kind, sourceIds=["u1"])], RECORDS, 10_000)
    with pytest.raises(HandoffError) as err:
        apply_updates(first, [note(kind="decision")], RECORDS, 10_000)
    assert err.value.code == "invalid_note"
    # replay (no budget) applies what was persisted
    assert apply_updates(first, [note(kind="decision")], RECORDS).notes[0].kind == "decision"


def test_unprotected_kind_may_change_live() -> None:
    first = apply_updates(NoteState(), [note(kind="decision")], RECORDS, 10_000)
    assert apply_updates(first, [note(kind="goal")], RECORDS, 10_000).notes[0].kind == "goal"


def test_duplicate_keys_and_too_many_updates() -> None:
    with pytest.raises(HandoffError, match="invalid_note"):
        apply_updates(NoteState(), [note(), note()], RECORDS, 10_000)
    with pytest.raises(HandoffError, match="invalid_note"):
        apply_updates(NoteState(), [note(key=f"k{i}") for i in range(33)], RECORDS)


def _full(n: int, status: str = "resolved", kind: str = "decision") -> NoteState:
    return apply_updates(
        NoteState(),
        [note(key=f"k{i}", status=status, kind=kind) for i in range(n)],
        RECORDS,
        100_000,
    )


def test_count_limit_evicts_old_resolved_ordinary_notes_only() -> None:
    state = _full(MAX_NOTES)
    grown = apply_updates(state, [note(key="new")], RECORDS, 100_000)
    assert len(grown.notes) == MAX_NOTES and "k0" not in {n.key for n in grown.notes}
    for kind in ("constraint", "failed_attempt"):
        protected = _full(MAX_NOTES, kind=kind)
        with pytest.raises(HandoffError) as err:
            apply_updates(protected, [note(key="new")], RECORDS, 100_000)
        assert err.value.code == "notes_budget" and err.value.details is not None
        assert err.value.details.reason == "note_count" and err.value.details.actual == 33
    active = _full(MAX_NOTES, status="active")
    with pytest.raises(HandoffError, match="notes_budget"):
        apply_updates(active, [note(key="new")], RECORDS, 100_000)


def test_byte_budget_evicts_then_fails_loudly() -> None:
    state = apply_updates(
        NoteState(),
        [
            note(key="old", text="x" * 500, status="resolved", kind="decision"),
            note(key="rule", text="y" * 500, kind="constraint"),
        ],
        RECORDS,
        10_000,
    )
    budget = len(render_notes(state).encode()) + 50
    evicted = apply_updates(state, [note(key="fresh", text="z" * 300)], RECORDS, budget)
    assert [n.key for n in evicted.notes] == ["rule", "fresh"]
    with pytest.raises(HandoffError) as err:
        apply_updates(evicted, [note(key="more", text="w" * 900)], RECORDS, budget)
    assert err.value.code == "notes_budget" and err.value.details is not None
    assert err.value.details.reason == "note_bytes"


def test_compile_never_drops_a_constraint() -> None:
    state = apply_updates(NoteState(), [note(kind="constraint", text="c" * 1000)], RECORDS, 9_999)
    with pytest.raises(HandoffError, match="notes_budget"):
        compile_notes(state, 500)
    assert "c" * 1000 in compile_notes(state, 2_000)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([f"k{i}" for i in range(40)]),
            st.sampled_from(KINDS),
            st.sampled_from(["active", "resolved"]),
            st.integers(1, 600),
        ),
        min_size=1,
        max_size=50,
    ),
    st.integers(1_500, 20_000),
)
def test_live_updates_never_lose_protected_or_active_notes(
    steps: list[tuple[str, str, str, int]], budget: int
) -> None:
    state = NoteState()
    for key, kind, status, size in steps:
        try:
            nxt = apply_updates(
                state, [note(key=key, kind=kind, status=status, text="t" * size)], RECORDS, budget
            )
        except HandoffError as exc:
            assert exc.code in {"notes_budget", "invalid_note"}
            continue
        kept = {n.key for n in nxt.notes}
        for old in state.notes:
            if old.key not in kept:
                assert old.status == "resolved" and old.kind not in {"constraint", "failed_attempt"}
        assert len(nxt.notes) <= MAX_NOTES
        assert len(render_notes(nxt).encode()) <= budget
        # persisted and replayed unchanged
        assert read_state(nxt.to_json(), RECORDS) == nxt
        state = nxt


# ------------------------------------------------------------------------------- replay


def _session_with(*events: tuple[str, Any]) -> tuple[Session, list[HistoryRecord]]:
    s = new_session()
    s.append_message(user("goal: port the parser"))
    s.append_message(user("constraint: keep the API"))
    for custom_type, data in events:
        s.append_custom(custom_type, data)
    return s, extract_records(s.branch())


def test_replay_note_events_and_state() -> None:
    s = new_session()
    u1 = s.append_message(user("goal"))
    u2 = s.append_message(user("later"))
    records = extract_records(s.branch())
    s.append_custom(NOTE_EVENT, note(sourceIds=[u1]))
    s.append_custom(NOTE_EVENT, note(text="goal v2", sourceIds=[u2]))
    state = restore_notes(s.branch(), extract_records(s.branch()))
    assert state.notes[0].revision == 2 and state.notes[0].text == "goal v2"
    snap = NoteState(2, state.notes)
    s.append_custom(STATE_EVENT, snap.to_json())
    assert restore_notes(s.branch(), records) == snap


def test_replay_state_event_must_not_move_coverage() -> None:
    s = new_session()
    u1 = s.append_message(user("goal"))
    records = extract_records(s.branch())
    s.append_custom(STATE_EVENT, {"version": 2, "notes": [], "throughEntryId": u1})
    with pytest.raises(HandoffError) as err:
        restore_notes(s.branch(), records)
    assert err.value.code == "invalid_checkpoint"


def test_replay_state_event_needs_v2() -> None:
    s = new_session()
    s.append_message(user("goal"))
    s.append_custom(STATE_EVENT, {"version": 1, "notes": []})
    with pytest.raises(HandoffError, match="invalid_checkpoint"):
        restore_notes(s.branch(), extract_records(s.branch()))


def test_replay_compaction_details_and_background_coverage() -> None:
    s = new_session()
    u1 = s.append_message(user("one"))
    u2 = s.append_message(user("two"))
    u3 = s.append_message(user("three"))
    base = {"version": 2, "notes": [note(sourceIds=[u1])], "throughEntryId": u1}
    s.append_compaction("sum", u2, 10, details={"piContextMemory": base})
    records = extract_records(s.branch())
    assert restore_notes(s.branch(), records).through_entry_id == u1
    bg = dict(base, notesThroughEntryId=u3)
    s.append_custom(BACKGROUND_EVENT, {"state": bg})
    assert restore_notes(s.branch(), records).notes_through_entry_id == u3
    # a second background event that does not advance is refused
    s.append_custom(BACKGROUND_EVENT, {"state": dict(base, notesThroughEntryId=u2)})
    with pytest.raises(HandoffError, match="invalid_checkpoint"):
        restore_notes(s.branch(), extract_records(s.branch()))


@pytest.mark.parametrize(
    "data",
    [
        {"version": 3, "notes": []},
        {"version": 2, "notes": "x"},
        {"version": 2, "notes": [], "throughEntryId": "missing"},
        {"version": 2, "notes": [note(), note()]},
        {"version": 2, "notes": [note(key=f"k{i}") for i in range(33)]},
        {"version": True, "notes": []},
    ],
)
def test_read_state_rejects(data: Any) -> None:
    records = [*RECORDS, HistoryRecord("m", "user", "", "x")]
    with pytest.raises(HandoffError) as err:
        read_state(data, records)
    assert err.value.code == "invalid_checkpoint"


def test_read_state_refuses_summary_as_boundary() -> None:
    with pytest.raises(HandoffError, match="invalid_checkpoint"):
        read_state({"version": 2, "notes": [], "throughEntryId": "s1"}, RECORDS)


def test_memory_status() -> None:
    s = new_session()
    u1 = s.append_message(user("one"))
    s.append_message(user("two"))
    records = extract_records(s.branch())
    s.append_custom(NOTE_EVENT, note(sourceIds=[u1]))
    s.append_custom("context-memory-attempt", {"code": "checkpoint_timeout"})
    state = restore_notes(s.branch(), records)
    status = memory_status(s.branch(), state).to_json()
    assert status["savedNotes"] == 1
    assert status["coverage"]["pendingMessages"] == 2  # no coverage yet: everything pending
    assert status["lastFailure"]["code"] == "checkpoint_timeout"
    assert status["lastSavedAt"] == s.branch()[2]["timestamp"]
    covered = NoteState(2, state.notes, through_entry_id=u1)
    status = memory_status(s.branch(), covered).to_json()
    assert status["coverage"]["pendingMessages"] == 1
    assert status["coverage"]["pendingUserMessages"] == 1
    lost = NoteState(2, state.notes, through_entry_id="elsewhere")
    assert memory_status(s.branch(), lost).to_json()["coverage"]["pendingMessages"] is None


def test_error_codes_map() -> None:
    from pi_context.bindings.handoff.errors import CODES, Cancelled, error_code

    assert error_code(HandoffError("stale_scope", "x")) == "stale_scope"
    assert error_code(Cancelled()) == "aborted"
    assert error_code(ValueError("x")) == "operation_failed"
    assert {"aborted", "operation_failed", "storage_failed", "handoff_binding"} <= CODES
    assert str(HandoffError("invalid_note", "bad key")) == "invalid_note: bad key"
