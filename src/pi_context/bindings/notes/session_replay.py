"""Notes stored in a session: replaying ``pi-context/note`` operations from a branch (pure).

Older pi-context versions persisted note operations as custom session entries; a session
written that way still carries its notes. Replay folds the operations on one branch, root to
leaf, into the notes they leave behind. It is strict about what it accepts, because a session
file is untrusted input: an operation is applied only if

* it is a supported operation (``write`` or ``append``) of the expected shape, carrying text,
  a stale flag or both;
* its path is a safe virtual note path (``address.validate_path``);
* both timestamps are numbers a date can represent (years 1 to 9999, so also within the range
  of a JavaScript ``Date``);
* the note it produces is valid Unicode within the size limit.

Anything else is skipped and reported; a skipped operation never replaces or changes a note
already replayed. Reading a branch replays it afresh, so a sibling branch's notes never show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from .address import NoteAddressError, validate_path

NOTE_OPERATION_TYPE = "pi-context/note"
"""``customType`` of a custom entry carrying one note operation in its ``data``."""
SUPPORTED_OPERATIONS = ("write", "append")
MAX_NOTE_BYTES = 1_000_000
"""Largest replayed note, in UTF-8 bytes (the note store's limit)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_TIMESTAMP_MS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
MAX_TIMESTAMP_MS = (datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC) - _EPOCH) // timedelta(
    milliseconds=1
)

Rejection = Literal["unsupported", "unsafe-path", "timestamp", "oversized", "no-note"]


@dataclass(frozen=True)
class ReplayedNote:
    path: str
    text: str
    stale: bool
    created_ms: int
    """When the note was first written (kept across later operations)."""
    updated_ms: int
    """The timestamp of the last operation applied to it."""


@dataclass(frozen=True)
class Skipped:
    """An operation that was not applied, and why."""

    entry_id: str | None
    kind: Rejection
    reason: str


@dataclass(frozen=True)
class Replay:
    notes: dict[str, ReplayedNote]
    skipped: list[Skipped]


def _timestamp(value: Any) -> int | None:
    """Whole epoch milliseconds of a representable timestamp, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not MIN_TIMESTAMP_MS <= value <= MAX_TIMESTAMP_MS:
        return None
    return int(value)  # a JavaScript Date drops the fraction the same way (toward zero)


def _utf8_size(text: str) -> int | None:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None  # a lone surrogate: not text any note file could hold


class _Skip(Exception):
    def __init__(self, kind: Rejection, reason: str) -> None:
        super().__init__(reason)
        self.kind: Rejection = kind
        self.reason = reason


def _shape(data: Any) -> tuple[str, str, str | None, bool | None, int, int]:
    """Check an operation's shape; returns op, path, text, stale, created, updated."""
    if not isinstance(data, Mapping):
        raise _Skip("unsupported", "the operation is not a JSON object")
    op = data.get("op")
    if op not in SUPPORTED_OPERATIONS:
        raise _Skip("unsupported", f"unsupported operation {op!r}; replay knows write and append")
    text, stale = data.get("text"), data.get("stale")
    if text is not None and not isinstance(text, str):
        raise _Skip("unsupported", "text must be a string")
    if stale is not None and not isinstance(stale, bool):
        raise _Skip("unsupported", "stale must be true or false")
    if text is None and stale is None:
        raise _Skip("unsupported", "the operation carries neither text nor a stale flag")
    path = data.get("path")
    try:
        validate_path(path)
    except NoteAddressError as exc:
        raise _Skip("unsafe-path", f"path {path!r}: {exc}") from None
    assert isinstance(path, str)
    created, updated = _timestamp(data.get("createdAt")), _timestamp(data.get("updatedAt"))
    if created is None or updated is None:
        field = "createdAt" if created is None else "updatedAt"
        raise _Skip("timestamp", f"{field} {data.get(field)!r} is not a representable timestamp")
    return op, path, text, stale, created, updated


def _apply(notes: Mapping[str, ReplayedNote], data: Any) -> ReplayedNote:
    """The note one operation leaves behind; raises ``_Skip`` when it must be ignored."""
    op, path, text, stale, created, updated = _shape(data)
    previous = notes.get(path)
    if text is None:
        # Only marks the note stale or fresh: it needs a note to mark.
        if previous is None:
            raise _Skip("no-note", f"{path!r} has no note to mark stale or fresh")
        body, flag = previous.text, stale if stale is not None else previous.stale
    else:
        body = (previous.text if previous is not None else "") + text if op == "append" else text
        flag = bool(stale)  # new text revives a stale note unless it says otherwise
    size = _utf8_size(body)
    if size is None:
        raise _Skip("oversized", f"{path!r} would not be valid UTF-8 text")
    if size > MAX_NOTE_BYTES:
        raise _Skip(
            "oversized", f"{path!r} would be {size} UTF-8 bytes; the limit is {MAX_NOTE_BYTES}"
        )
    first = previous.created_ms if previous is not None else created
    return ReplayedNote(path, body, flag, first, updated)


def replay_notes(branch: Iterable[Mapping[str, Any]]) -> Replay:
    """Fold the note operations on ``branch`` (root to leaf) into the notes they produce."""
    notes: dict[str, ReplayedNote] = {}
    skipped: list[Skipped] = []
    for entry in branch:
        if entry.get("type") != "custom" or entry.get("customType") != NOTE_OPERATION_TYPE:
            continue
        entry_id = entry.get("id") if isinstance(entry.get("id"), str) else None
        try:
            note = _apply(notes, entry.get("data"))
        except _Skip as skip:
            skipped.append(Skipped(entry_id, skip.kind, skip.reason))
            continue
        notes[note.path] = note
    return Replay(notes, skipped)
