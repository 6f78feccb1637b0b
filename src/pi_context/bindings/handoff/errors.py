"""Errors of the handoff binding: a stable machine-readable code plus an English message.

The codes are pi-context-management 0.6's, so a host can map a failure to the same meaning on
either implementation; the messages are ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pi_context.support.json_fields import FieldsJSON

BudgetReason = Literal["note_bytes", "note_count", "file_tracking"]

# Every code this binding raises (tests enumerate them).
CODES = frozenset(
    {
        "aborted",
        "checkpoint_timeout",
        "continuation_failed",
        "empty_checkpoint",
        "handoff_binding",
        "handoff_budget",
        "handoff_not_ready",
        "handoff_setup_failed",
        "handoff_source_changed",
        "handoff_source_limit",
        "handoff_source_unavailable",
        "handoff_unavailable",
        "invalid_checkpoint",
        "invalid_note",
        "invalid_offset",
        "invalid_query",
        "invalid_source",
        "notes_budget",
        "notes_request_limit",
        "operation_failed",
        "recall_budget",
        "source_not_found",
        "stale_scope",
        "storage_failed",
        "switch_cancelled",
    }
)


@dataclass(frozen=True)
class BudgetDetails(FieldsJSON):
    """Which budget was exceeded, by how much."""

    reason: BudgetReason
    actual: int
    limit: int


class HandoffError(Exception):
    """A named failure; ``str()`` is ``"code: message"``."""

    def __init__(self, code: str, message: str, details: BudgetDetails | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details


class Cancelled(Exception):
    """The host cancelled the operation (the seed's AbortError: code ``aborted``)."""


def error_code(error: BaseException) -> str:
    """The code to record for any failure, named or not."""
    if isinstance(error, HandoffError):
        return error.code
    if isinstance(error, Cancelled):
        return "aborted"
    return "operation_failed"


def outcome_of(error: BaseException | None) -> str:
    """The operation log's outcome for an operation or call that ended with ``error``
    (None: it succeeded)."""
    if error is None:
        return "ok"
    return "cancelled" if isinstance(error, Cancelled) else "failed"
