"""The writes of a handoff: the offer on the source, the new destination session, and the
automatic-handoff records.

The destination is assembled in memory (relay message, receipt, imported notes), then written
in one exclusive create with fsync — Pi would defer the file until a first user or assistant
message, and a handoff must not depend on that — and re-opened from disk, so everything after
it works on what was actually persisted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Durability, Session
from pi_context.bindings.session.errors import SessionError
from pi_context.bindings.session.ids import Clock, UuidSource
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.session.store import create_exclusive

from .automatic import AUTO_HANDOFF_EVENT
from .durability import verify_persisted_memory
from .errors import HandoffError
from .history import HistoryRecord
from .notes import STATE_EVENT, NoteState, compile_notes, read_state
from .relay import HANDOFF_IN, HANDOFF_OUT, RELAY_MESSAGE, entry_digest


def append_offer(source: Session, packet: dict[str, Any]) -> str:
    """Append the offer (the packet) to the source, right after the packet's leaf."""
    if source.leaf_id != packet["source"]["leafId"]:
        raise HandoffError("stale_scope", "the source moved on before the relay was saved")
    try:
        offer_id = source.append_custom(HANDOFF_OUT, packet)
        source.sync()
    except (SessionError, OSError) as exc:
        raise HandoffError("storage_failed", f"cannot save the relay offer: {exc}") from None
    return offer_id


def imported_state(packet: dict[str, Any], relay_message_id: str) -> NoteState:
    """The packet's notes as local inferences citing the local relay message; the original
    citations stay inside the packet, readable only through the verified binding."""
    relay = HistoryRecord(relay_message_id, "custom", "", "relay")
    citing = [
        dict(n, sourceIds=[relay_message_id], inference=True) for n in packet["state"]["notes"]
    ]
    return read_state({"version": 2, "notes": citing}, [relay])


def create_destination(
    *,
    source_file: Path,
    cwd: Path,
    session_dir: Path,
    packet: dict[str, Any],
    offer: dict[str, Any],
    body: str,
    notes_budget: int,
    automatic: dict[str, Any] | None = None,
    now: Clock | None = None,
    uuids: UuidSource | None = None,
) -> Session:
    """Create, persist (exclusively, fsynced) and re-open the destination session.

    ``offer`` is the offer entry as it was verified on the source's disk; ``automatic`` the
    automatic-handoff record the destination starts with (the seed always writes one)."""
    offer_id = offer["id"]
    dest = Session.create(
        cwd,
        session_dir,
        parent_session=os.path.abspath(source_file),
        now=now,
        uuids=uuids,
        durability=Durability.ALWAYS,
    )
    message_id = dest.append_custom_message(RELAY_MESSAGE, body, True)
    dest.append_custom(
        HANDOFF_IN,
        {
            "packet": packet,
            "offerId": offer_id,
            "destinationId": dest.session_id,
            "offerDigest": entry_digest(offer),
        },
    )
    imported = imported_state(packet, message_id)
    compile_notes(imported, notes_budget)
    dest.append_custom(STATE_EVENT, imported.to_json())
    if automatic is not None:
        dest.append_custom(AUTO_HANDOFF_EVENT, automatic)
    path = dest.path
    if path is None:
        raise HandoffError("storage_failed", "the destination has no file")
    data = b"".join(encode_line(v) for v in [dest.header, *dest.entries])
    if os.path.lexists(path):
        raise HandoffError("storage_failed", f"the destination {path} already exists")
    try:
        create_exclusive(path, data, sync=True)
        return Session.open(path, now=now, uuids=uuids, durability=Durability.ALWAYS)
    except (SessionError, OSError) as exc:
        # Never leave a torn destination behind: this call created the file, so remove it.
        remove_destination(path)
        raise HandoffError("storage_failed", f"cannot create the destination: {exc}") from None


def append_record(session: Session, record: dict[str, Any]) -> str:
    """Append an automatic-handoff record to ``session``, fsync it and verify it on disk."""
    try:
        entry_id = session.append_custom(AUTO_HANDOFF_EVENT, record)
        session.sync()
    except (SessionError, OSError) as exc:
        raise HandoffError(
            "storage_failed", f"cannot save the automatic-handoff state: {exc}"
        ) from None
    verify_persisted_memory(session.branch(), session.path)
    return entry_id


def remove_destination(path: Path) -> None:
    """Remove a destination file this handoff created (best effort; it never held user data)."""
    try:
        if path.is_file():
            path.unlink()
    except OSError:
        pass
