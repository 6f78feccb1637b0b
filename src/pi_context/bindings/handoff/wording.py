"""The panel's wording, shared by ``session panel``, ``session export`` and ``session report``:
every label says what it counts (task notes, not note files; "1 active goal", "2 active
goals"; coverage that is absent says so)."""

from __future__ import annotations

from typing import Any


def count(n: int | None, noun: str, plural: str | None = None) -> str:
    """``1 active goal``, ``2 active goals``, ``unknown active goals``."""
    if n is None:
        return f"unknown {plural or noun + 's'}"
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def number(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def memory_lines(memory: dict[str, Any]) -> list[str]:
    if "error" in memory:
        return [f"task notes: unreadable ({memory['error']}: {memory['message']})"]
    failure = memory["last_failure"]
    failed = f"{failure['code']} at {failure['at']}" if failure else "none recorded"
    saved = memory["last_saved_at"] or "never"
    cov = memory["coverage"]
    after = "after it"
    if cov["through_entry_id"] is None:
        covered = "note coverage: none (no task note covers an entry of this branch)"
        after = "not covered"
    elif cov["through_at"] is None:
        covered = f"note coverage: through entry {cov['through_entry_id']} (not on this branch)"
    else:
        covered = f"note coverage: through {cov['through_at']} (entry {cov['through_entry_id']})"
    since = cov["pending_messages"]
    users = cov["pending_user_messages"]
    return [
        f"task notes: {count(memory['saved_task_notes'], 'saved task note')} · last saved "
        f"{saved} · last note failure {failed} (native compaction is not a task-note save)",
        f"{covered} · {count(since, 'message')} {after} ({number(users)} from the user; "
        "tool exchanges included, not a count of missed meaning)",
    ]


def handoff_line(handoff: dict[str, Any]) -> str:
    verdict = handoff["verdict"]
    if verdict == "no_handoff":
        return "handoff: none (this session was not started by a handoff)"
    if "message" in handoff:
        return f"handoff: REFUSED {verdict} — {handoff['message']}"
    return (
        f"handoff: {verdict} · source {handoff['sourceSessionId']} leaf {handoff['leafId']} "
        f"· digest {handoff['digest'][:16]}… · "
        f"{count(handoff['inheritedRecords'], 'source record')} readable"
    )


def quality_line(q: dict[str, Any]) -> str:
    return (
        f"task notes by kind: {count(q['active_goals'], 'active goal')} · "
        f"{count(q['active_constraints'], 'active constraint')} · "
        f"{count(q['active_open_items'], 'active open item')} · "
        f"{count(q['pending_approval_hints'], 'approval hint')} · "
        f"{count(q['invalid_citations'], 'invalid citation')}"
    )


def sources_line(q: dict[str, Any]) -> str:
    line = f"citations: {q['sources']} · semantic completeness needs a human check"
    last = q.get("last_handoff")
    if last:
        line += (
            f" · at the last handoff {count(last['missing_active'], 'active note')} dropped / "
            f"{last['changed_active']} rewritten"
        )
    return line


def snake_memory(memory: dict[str, Any]) -> dict[str, Any]:
    if "error" in memory:
        return {"error": memory["error"], "message": memory["message"]}
    cov = memory["coverage"]
    return {
        "saved_task_notes": memory["savedNotes"],
        "last_saved_at": memory["lastSavedAt"],
        "last_failure": memory["lastFailure"],
        "coverage": {
            "through_entry_id": cov["throughEntryId"],
            "through_at": cov["throughAt"],
            "pending_messages": cov["pendingMessages"],
            "pending_user_messages": cov["pendingUserMessages"],
        },
    }


QUALITY_KEYS = {
    "goals": "active_goals",
    "constraints": "active_constraints",
    "openItems": "active_open_items",
    "pendingApprovalHints": "pending_approval_hints",
    "missingActive": "missing_active",
    "changedActive": "changed_active",
    "invalidCitations": "invalid_citations",
    "sources": "sources",
}
