"""Quality counts of a handoff: what the new notes hold and what changed from the old ones.

These are heuristics for a human reviewer, not a proof of semantic completeness: goals,
constraints and open items that are active, active notes that disappeared or were rewritten,
notes that sound like they wait for an approval, and citations that are not indexed records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pi_context.support.json_fields import FieldsJSON

from .history import HistoryRecord
from .notes import NoteState

# The seed's pattern exactly: 审批 (approval), 待…确认 (awaiting confirmation), 等待…批准
# (waiting for approval), 待…决定 (awaiting a decision), and the English words.
APPROVAL_HINT = re.compile(
    r"审批|待.*确认|等待.*批准|待.*决定|\bapproval\b|\bpermission\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Quality(FieldsJSON):
    goals: int
    constraints: int
    open_items: int
    pending_approval_hints: int
    missing_active: int
    changed_active: int
    invalid_citations: int


def check_quality(before: NoteState, after: NoteState, records: Sequence[HistoryRecord]) -> Quality:
    indexed = {r.id for r in records}
    by_key = {n.key: n for n in after.notes}
    active_after = [n for n in after.notes if n.status == "active"]
    active_before = [n for n in before.notes if n.status == "active"]
    return Quality(
        goals=sum(1 for n in active_after if n.kind == "goal"),
        constraints=sum(1 for n in active_after if n.kind == "constraint"),
        open_items=sum(1 for n in active_after if n.kind == "open_item"),
        pending_approval_hints=sum(1 for n in active_after if APPROVAL_HINT.search(n.text)),
        missing_active=sum(1 for n in active_before if n.key not in by_key),
        changed_active=sum(
            1
            for n in active_before
            if n.key in by_key
            and (by_key[n.key].status != n.status or by_key[n.key].text != n.text)
        ),
        invalid_citations=sum(
            1 for n in after.notes for source in n.source_ids if source not in indexed
        ),
    )
