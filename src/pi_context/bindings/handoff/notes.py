"""Structured task notes: validated, cited, revisioned, budgeted, and replayed from a session.

A note is a keyed statement of one of six kinds that cites 1–8 history records of the current
branch. Notes change only through updates (each bumps the revision and remembers the previous
one); a live update may evict old resolved ordinary notes to fit a byte budget, and the
resulting snapshot is what gets persisted, so replay never repeats a budget-dependent decision.
Rendering never drops a note: over budget it fails with ``notes_budget``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from pi_context.bindings.addresses import address_problem
from pi_context.bindings.session.jsonl import js_trim
from pi_context.support.json_fields import json_fields

from .errors import BudgetDetails, HandoffError
from .history import HistoryRecord, safe_int
from .text import MAX_NOTE_TEXT_BYTES, MAX_NOTES, MAX_NOTES_BYTES, byte_cost

NoteKind = Literal["goal", "constraint", "decision", "failed_attempt", "open_item", "reference"]
NoteStatus = Literal["active", "resolved"]
KINDS: tuple[NoteKind, ...] = (
    "goal",
    "constraint",
    "decision",
    "failed_attempt",
    "open_item",
    "reference",
)
PROTECTED_KINDS: frozenset[str] = frozenset({"constraint", "failed_attempt"})
KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_SOURCES = 8

NOTE_EVENT = "context-memory-note"
STATE_EVENT = "context-memory-state-v2"
BACKGROUND_EVENT = "context-memory-background-v1"
ATTEMPT_EVENTS = ("context-memory-attempt", "context-memory-background-attempt")


@dataclass(frozen=True)
class Note:
    key: str
    kind: NoteKind
    text: str
    source_ids: tuple[str, ...]
    inference: bool
    status: NoteStatus
    revision: int = 1
    previous_revision: int | None = None

    def to_json(self) -> dict[str, Any]:
        return json_fields(self, omit_none=("previous_revision",))


@dataclass(frozen=True)
class NoteState:
    version: Literal[1, 2] = 1
    notes: tuple[Note, ...] = ()
    through_entry_id: str | None = None
    notes_through_entry_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = json_fields(self, omit_none=("through_entry_id", "notes_through_entry_id"))
        out["notes"] = [n.to_json() for n in self.notes]
        return out

    @property
    def coverage(self) -> str | None:
        return self.notes_through_entry_id or self.through_entry_id


def _where(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("key"), str):
        key = value["key"]
        # A cut key would look like a valid one; an over-long key is named by its length.
        return f"note {key!r}" if len(key) <= 64 else f"note with a {len(key)}-character key"
    return "note"


def validate_note(value: Any, records: Sequence[HistoryRecord]) -> Note:
    """A note from untrusted JSON, checked against the records of the current branch."""
    where = _where(value)
    if not isinstance(value, dict):
        raise HandoffError("invalid_note", "a note must be a JSON object")
    key, kind, text = value.get("key"), value.get("kind"), value.get("text")
    problem = None
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        problem = "key must be 1-64 of A-Z a-z 0-9 _ -"
    elif kind not in KINDS:
        problem = f"kind must be one of {', '.join(KINDS)}"
    elif not isinstance(text, str) or not js_trim(text):
        problem = "text must be a non-empty string"
    elif byte_cost(text) > MAX_NOTE_TEXT_BYTES:
        problem = f"text is {byte_cost(text)} UTF-8 bytes (at most {MAX_NOTE_TEXT_BYTES})"
    elif type(value.get("inference")) is not bool:
        problem = "inference must be true or false"
    elif value.get("status") not in ("active", "resolved"):
        problem = "status must be active or resolved"
    elif not isinstance(value.get("sourceIds"), list) or not (
        1 <= len(value["sourceIds"]) <= MAX_SOURCES
    ):
        problem = f"sourceIds must list 1-{MAX_SOURCES} record ids"
    if problem is not None:
        raise HandoffError("invalid_note", f"{where}: {problem}")
    by_id = {r.id: r for r in records}
    for source in value["sourceIds"]:
        # An id no tool delivers whole (over the address limit) cannot be cited either.
        if not isinstance(source, str) or address_problem(source) or source not in by_id:
            raise HandoffError(
                "invalid_source",
                f"{where}: source {source!r} is not an indexed record of the current branch",
            )
    sources = tuple(dict.fromkeys(value["sourceIds"]))
    roles = {by_id[s].role for s in sources}
    if kind == "constraint" and value["inference"] is False and "user" not in roles:
        raise HandoffError(
            "invalid_source", f"{where}: a confirmed constraint must cite a user message"
        )
    revision = safe_int(value.get("revision"))
    previous = safe_int(value.get("previousRevision"))
    return Note(
        key=cast(str, key),
        kind=cast(NoteKind, kind),
        text=js_trim(cast(str, text)),
        source_ids=sources,
        # A compaction summary is derived evidence: anything resting on it is an inference.
        inference=value["inference"] or "summary" in roles,
        status=cast(NoteStatus, value["status"]),
        revision=revision if revision is not None and revision > 0 else 1,
        previous_revision=previous,
    )


# ---------------------------------------------------------------------------------------------
# rendering

NOTES_HEADING = (
    "Task notes: derived from the history, so check their sources and let the latest user "
    "instruction win. Earlier details: context_history_search / context_history_read."
)


def render_notes(state: NoteState) -> str:
    lines = [NOTES_HEADING]
    for n in state.notes:
        tag = f"{n.kind}/{n.status}{'/inference' if n.inference else ''}"
        lines.append(f"[{tag}] {n.key}: {n.text} [sources: {', '.join(n.source_ids)}]")
    return "\n".join(lines)


def compile_notes(state: NoteState, budget: int) -> str:
    """The rendered notes, or ``notes_budget`` — never a silently shortened list."""
    text = render_notes(state)
    size = byte_cost(text)
    if size > budget:
        raise HandoffError(
            "notes_budget",
            f"the notes render to {size} bytes, over the {budget}-byte budget; nothing was dropped",
            BudgetDetails("note_bytes", size, budget),
        )
    return text


# ---------------------------------------------------------------------------------------------
# updates


def apply_updates(
    state: NoteState,
    updates: Sequence[Any],
    records: Sequence[HistoryRecord],
    budget: int | None = None,
) -> NoteState:
    """Apply note updates. ``budget`` marks a live update: protected kinds keep their kind,
    old resolved ordinary notes may be evicted to fit, and the result is a version-2 state.
    Without a budget (replay) nothing is evicted: the persisted snapshot already decided."""
    if len(updates) > MAX_NOTES:
        raise HandoffError("invalid_note", f"{len(updates)} updates at once (at most {MAX_NOTES})")
    notes: dict[str, Note] = {n.key: n for n in state.notes}
    seen: set[str] = set()
    for update in updates:
        note = validate_note(update, records)
        if note.key in seen:
            raise HandoffError("invalid_note", f"note {note.key!r} appears twice in one update")
        seen.add(note.key)
        previous = notes.get(note.key)
        if (
            budget is not None
            and previous is not None
            and previous.kind in PROTECTED_KINDS
            and previous.kind != note.kind
        ):
            raise HandoffError(
                "invalid_note",
                f"note {note.key!r} is a {previous.kind}; a live update cannot change its kind",
            )
        notes[note.key] = replace(
            note,
            revision=previous.revision + 1 if previous else 1,
            previous_revision=previous.revision if previous else note.previous_revision,
        )
    candidate = replace(
        state, version=state.version if budget is None else 2, notes=tuple(notes.values())
    )
    if budget is not None:
        for old in state.notes:
            if len(candidate.notes) <= MAX_NOTES and byte_cost(render_notes(candidate)) <= budget:
                break
            if old.key in seen or old.status != "resolved" or old.kind in PROTECTED_KINDS:
                continue
            candidate = replace(
                candidate, notes=tuple(n for n in candidate.notes if n.key != old.key)
            )
    if len(candidate.notes) > MAX_NOTES:
        raise HandoffError(
            "notes_budget",
            f"{len(candidate.notes)} notes stored (at most {MAX_NOTES}); update existing keys",
            BudgetDetails("note_count", len(candidate.notes), MAX_NOTES),
        )
    if budget is not None:
        compile_notes(candidate, budget)
    return candidate


# ---------------------------------------------------------------------------------------------
# replay


def read_state(data: Any, records: Sequence[HistoryRecord]) -> NoteState:
    """A persisted note state, validated against the current branch's records."""
    if (
        not isinstance(data, dict)
        or type(data.get("version")) not in (int, float)
        or data["version"] not in (1, 2)
        or not isinstance(data.get("notes"), list)
    ):
        raise HandoffError("invalid_checkpoint", "a note state needs version 1 or 2 and a list")
    if len(data["notes"]) > MAX_NOTES:
        raise HandoffError(
            "invalid_checkpoint", f"{len(data['notes'])} notes (at most {MAX_NOTES})"
        )
    boundaries = {r.id for r in records if r.role != "summary"}
    for name in ("throughEntryId", "notesThroughEntryId"):
        if name in data and (not isinstance(data[name], str) or data[name] not in boundaries):
            raise HandoffError(
                "invalid_checkpoint",
                f"{name} {data[name]!r} is not an archived message of the current branch",
            )
    notes = tuple(validate_note(n, records) for n in data["notes"])
    if len({n.key for n in notes}) != len(notes):
        raise HandoffError("invalid_checkpoint", "the state holds one key twice")
    state = NoteState(
        version=1 if data["version"] == 1 else 2,
        notes=notes,
        through_entry_id=data.get("throughEntryId"),
        notes_through_entry_id=data.get("notesThroughEntryId"),
    )
    if state.version == 2:
        compile_notes(state, MAX_NOTES_BYTES)
    return state


def _record_index(records: Sequence[HistoryRecord], record_id: str | None) -> int:
    for i, r in enumerate(records):
        if r.id == record_id:
            return i
    return -1


def restore_notes(entries: Sequence[Any], records: Sequence[HistoryRecord]) -> NoteState:
    """Replay the notes of a branch: note updates, state snapshots (which may not move
    coverage), background snapshots (which may only advance note coverage) and compaction
    details, in branch order."""
    state = NoteState()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        kind, custom = entry.get("type"), entry.get("customType")
        if kind == "custom" and custom == NOTE_EVENT:
            state = apply_updates(state, [entry.get("data")], records)
        elif kind == "custom" and custom == STATE_EVENT:
            data = entry.get("data")
            if not isinstance(data, dict) or data.get("version") != 2:
                raise HandoffError("invalid_checkpoint", f"state event {entry.get('id')} is not v2")
            nxt = read_state(data, records)
            if (nxt.through_entry_id, nxt.notes_through_entry_id) != (
                state.through_entry_id,
                state.notes_through_entry_id,
            ):
                raise HandoffError(
                    "invalid_checkpoint",
                    f"state event {entry.get('id')} moves coverage; only checkpoints may",
                )
            state = nxt
        elif kind == "custom" and custom == BACKGROUND_EVENT:
            data = entry.get("data")
            if not isinstance(data, dict):
                raise HandoffError("invalid_checkpoint", f"background event {entry.get('id')}")
            nxt = read_state(data.get("state"), records)
            before = state.coverage
            if (
                nxt.version != 2
                or nxt.through_entry_id != state.through_entry_id
                or not nxt.notes_through_entry_id
                or (
                    before is not None
                    and _record_index(records, nxt.notes_through_entry_id)
                    <= _record_index(records, before)
                )
            ):
                raise HandoffError(
                    "invalid_checkpoint",
                    f"background event {entry.get('id')} must advance note coverage only",
                )
            state = nxt
        elif kind == "compaction" and isinstance(entry.get("details"), dict):
            memory = entry["details"].get("piContextMemory")
            if memory is not None:
                state = read_state(memory, records)
    return state


@dataclass(frozen=True)
class MemoryStatus:
    saved_notes: int
    last_saved_at: str | None
    through_entry_id: str | None
    through_at: str | None
    pending_messages: int | None
    pending_user_messages: int | None
    last_failure: dict[str, Any] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "savedNotes": self.saved_notes,
            "lastSavedAt": self.last_saved_at,
            "coverage": {
                "throughEntryId": self.through_entry_id,
                "throughAt": self.through_at,
                "pendingMessages": self.pending_messages,
                "pendingUserMessages": self.pending_user_messages,
            },
            "lastFailure": self.last_failure,
        }


def _saves_notes(entry: dict[str, Any]) -> bool:
    if entry.get("type") == "custom":
        return entry.get("customType") in (NOTE_EVENT, STATE_EVENT, BACKGROUND_EVENT)
    details = entry.get("details")
    return (
        entry.get("type") == "compaction"
        and isinstance(details, dict)
        and details.get("piContextMemory") is not None
    )


def memory_status(entries: Sequence[Any], state: NoteState) -> MemoryStatus:
    """Saved notes, how far they cover the branch, what came after, and the last failure.
    Pending counts are unknown (None) when the coverage boundary is not on this branch."""
    objects = [e for e in entries if isinstance(e, dict)]
    through = state.coverage
    position = next((i for i, e in enumerate(objects) if e.get("id") == through), -1)
    pending: list[dict[str, Any]] | None = None
    if not (through and position < 0):
        pending = [
            e
            for e in objects[position + 1 :]
            if e.get("type") == "message"
            and isinstance(e.get("message"), dict)
            and e["message"].get("role") in ("user", "assistant", "toolResult")
        ]
    saved = next((e for e in reversed(objects) if _saves_notes(e)), None)
    failure = next(
        (
            e
            for e in reversed(objects)
            if e.get("type") == "custom" and e.get("customType") in ATTEMPT_EVENTS
        ),
        None,
    )
    last_failure = None
    if failure is not None and isinstance(failure.get("data"), dict):
        code = failure["data"].get("code")
        last_failure = {
            "code": code if isinstance(code, str) else "unknown",
            "at": failure.get("timestamp"),
        }
    return MemoryStatus(
        saved_notes=len(state.notes),
        last_saved_at=saved.get("timestamp") if saved else None,
        through_entry_id=through,
        through_at=objects[position].get("timestamp") if position >= 0 else None,
        pending_messages=None if pending is None else len(pending),
        pending_user_messages=None
        if pending is None
        else sum(1 for e in pending if e["message"].get("role") == "user"),
        last_failure=last_failure,
    )
