"""Persisted-write verification: what the session holds in memory must be what is on disk.

A checkpoint that exists only in memory (a failed or torn write) must never be trusted by a
later step. Every memory payload on the branch — note, state, background, handoff and
automatic-handoff events, the relay message's content and compaction memory details — is
compared with the entry of the same id re-read from the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.bindings.session.jsonl import JSONLineError, encode, js_trim, parse

from .automatic import AUTO_HANDOFF_EVENT
from .errors import HandoffError
from .notes import BACKGROUND_EVENT, NOTE_EVENT, STATE_EVENT
from .relay import HANDOFF_IN, HANDOFF_OUT, RELAY_MESSAGE

MEMORY_EVENTS = frozenset(
    {NOTE_EVENT, STATE_EVENT, BACKGROUND_EVENT, HANDOFF_IN, HANDOFF_OUT, AUTO_HANDOFF_EVENT}
)
_ABSENT = object()


def memory_payload(entry: Any) -> Any:
    """The memory payload an entry carries, or ``_ABSENT``."""
    if not isinstance(entry, dict):
        return _ABSENT
    kind = entry.get("type")
    if kind == "custom" and entry.get("customType") in MEMORY_EVENTS:
        return entry.get("data", _ABSENT)
    if kind == "custom_message" and entry.get("customType") == RELAY_MESSAGE:
        return entry.get("content", _ABSENT)
    details = entry.get("details")
    if kind == "compaction" and isinstance(details, dict):
        return details.get("piContextMemory", _ABSENT)
    return _ABSENT


def has_payload(entry: Any) -> bool:
    return memory_payload(entry) is not _ABSENT


def verify_persisted_memory(entries: Sequence[Any], session_file: Path | str | None) -> None:
    """Raise ``storage_failed`` unless every memory payload in ``entries`` is on disk as is."""
    if session_file is None:
        return
    expected = [e for e in entries if has_payload(e)]
    if not expected:
        return
    try:
        text = Path(session_file).read_bytes().decode("utf-8", "replace")
        persisted = [
            parse(line.removesuffix("\r"))
            for line in text.split("\n")
            if js_trim(line.removesuffix("\r"))
        ]
    except (OSError, JSONLineError):
        raise HandoffError(
            "storage_failed",
            f"the saved session {session_file} could not be re-read to verify it; "
            "reopen a valid saved session",
        ) from None
    by_id = {p["id"]: p for p in persisted if isinstance(p, dict) and "id" in p}
    for entry in expected:
        on_disk = memory_payload(by_id.get(entry.get("id")))
        if on_disk is _ABSENT or encode(on_disk) != encode(memory_payload(entry)):
            raise HandoffError(
                "storage_failed",
                f"entry {entry.get('id')} exists only in memory or differs from {session_file}; "
                "reopen the persisted session",
            )
