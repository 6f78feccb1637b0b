"""The session report: memory status, the handoff binding's verdict and quality counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_context.bindings.session import Session

from .errors import HandoffError
from .history import extract_records
from .notes import NoteState, memory_status, read_state, restore_notes
from .quality import check_quality
from .relay import HANDOFF_IN, inherited_records, receipt
from .wording import (
    QUALITY_KEYS,
    handoff_line,
    memory_lines,
    quality_line,
    snake_memory,
    sources_line,
)


def _source_notes_before(grant: dict[str, Any]) -> NoteState | None:
    """The notes the source held at the packet's leaf (to count what the handoff dropped)."""
    try:
        source = Session.open(Path(grant["packet"]["source"]["file"]), readonly=True)
        branch = source.branch(grant["packet"]["source"]["leafId"])
        return restore_notes(branch, extract_records(branch))
    except Exception:  # noqa: BLE001 - an unreadable source only loses this comparison
        return None


def session_report(path: Path) -> dict[str, Any]:
    """Everything ``pi-context session report`` prints (raises SessionError for a non-session)."""
    session = Session.open(path, readonly=True)
    branch = session.branch()
    records = extract_records(branch)
    memory: dict[str, Any]
    try:
        state = restore_notes(branch, records)
        memory = memory_status(branch, state).to_json()
    except HandoffError as exc:
        state = NoteState()
        memory = {"error": exc.code, "message": exc.message}
    quality = check_quality(state, state, records).to_json()
    handoff: dict[str, Any] = {"verdict": "no_handoff"}
    parent_id = None
    if any(e.get("type") == "custom" and e.get("customType") == HANDOFF_IN for e in branch):
        try:
            grant = receipt(session)
            parent_records = inherited_records(session)
            packet = grant["packet"]
            parent_id = packet["source"]["sessionId"]
            indexed = {r.id for r in parent_records}
            notes = (
                packet.get("state", {}).get("notes")
                if isinstance(packet.get("state"), dict)
                else None
            )
            if not isinstance(notes, list) or not all(
                isinstance(n, dict) and isinstance(n.get("sourceIds"), list) for n in notes
            ):
                raise HandoffError("invalid_checkpoint", "the packet's notes are malformed")
            cited = [s for n in notes for s in n["sourceIds"]]
            verdict = "verified" if all(s in indexed for s in cited) else "invalid_citations"
            handoff = {
                "verdict": verdict,
                "source": packet["source"]["file"],
                "sourceSessionId": parent_id,
                "leafId": packet["source"]["leafId"],
                "digest": packet["source"]["digest"],
                "offerId": grant["offerId"],
                "packetId": packet["id"],
                "inheritedRecords": len(parent_records),
            }
            before = _source_notes_before(grant)
            if before is not None and verdict == "verified":
                try:
                    after = read_state(packet["state"], parent_records)
                except HandoffError:
                    after = None
                if after is not None:
                    moved = check_quality(before, after, parent_records)
                    quality["missingActive"] = moved.missing_active
                    quality["changedActive"] = moved.changed_active
        except HandoffError as exc:
            handoff = {"verdict": exc.code, "message": exc.message}
    quality["sources"] = handoff["verdict"]
    return {
        "file": str(session.path),
        "sessionId": session.session_id,
        "parentSession": session.header.get("parentSession"),
        "parentId": parent_id,
        "memory": memory,
        "handoff": handoff,
        "quality": quality,
    }


def render_report(report: dict[str, Any]) -> str:
    """The report as text, in the panel's wording (``session panel`` shows all of it)."""
    quality = {QUALITY_KEYS[k]: v for k, v in report["quality"].items() if k in QUALITY_KEYS}
    lines = [f"session {report['sessionId']}  ({report['file']})"]
    if report["parentSession"]:
        lines.append(f"parent: {report['parentSession']}")
    lines += memory_lines(snake_memory(report["memory"]))
    lines.append(handoff_line(report["handoff"]))
    lines.append(quality_line(quality))
    if report["handoff"]["verdict"] != "no_handoff":
        quality["last_handoff"] = {
            "missing_active": quality["missing_active"],
            "changed_active": quality["changed_active"],
        }
    lines.append(sources_line(quality))
    return "\n".join(lines) + "\n"


def report_exit_code(report: dict[str, Any]) -> int:
    """0: no handoff or a verified one; 1: a binding that does not verify."""
    return 0 if report["handoff"]["verdict"] in ("no_handoff", "verified") else 1
