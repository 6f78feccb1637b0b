"""What a handoff's end state means to the people and logs that hear about it.

The result code of an ending is the end stage's ``code`` field in ``handoff@0.6-auto``: a
fixed code (handoff_setup_failed, continuation_failed, aborted, switch_cancelled) or
``reported`` — the failing stage's own code, which the host kept. This module turns that
into the result code, the operation log's outcome and the English notice; it is the only
place outside the spec that spells those codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CODES, HandoffError, error_code

DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
OPERATION_OUTCOME = {DONE: "ok", FAILED: "failed", CANCELLED: "cancelled"}
BUSY_CODE = "handoff_unavailable"
BUSY_MESSAGE = "A handoff is already running; this request changed nothing."


def result_code(stage: str, spec_code: str | None, error: BaseException | None) -> str | None:
    """The code of an ending: the spec's fixed one, else the reported error's (done: None)."""
    if stage == DONE:
        return None
    if spec_code in CODES:
        return spec_code
    return error_code(error) if error is not None else "operation_failed"


def operation_outcome(stage: str) -> str:
    return OPERATION_OUTCOME.get(stage, "failed")


@dataclass(frozen=True)
class Ending:
    """How a handoff ended, as the notice describes it."""

    stage: str
    code: str | None
    error: BaseException | None = None
    destination: str | None = None
    source: str | None = None
    offer_kept: bool = False
    returned: bool | None = None
    """After a failed or cancelled setup: whether the host is back on the source (None: it
    never left it)."""


def ending_message(end: Ending) -> tuple[str, str]:
    """The notice level and text for an ending."""
    detail = f" ({end.error.message})" if isinstance(end.error, HandoffError) else ""
    if end.stage == DONE:
        return "info", f"Handoff complete: continuing in {end.destination}."
    if end.code == "continuation_failed":
        return "error", (
            "The handoff is saved, but the continuation did not start; continue here or "
            "return to the source session."
        )
    back = ""
    if end.returned is False:
        back = (
            " Returning to the source session was cancelled or failed; open it with "
            f"/resume {end.source}"
        )
    elif end.returned:
        back = " Returned to the source session."
    if end.stage == CANCELLED:
        if end.code == "switch_cancelled":
            return (
                "info",
                "Handoff switch cancelled; the source session and the relay offer are kept.",
            )
        kept = " The source keeps the verified relay offer." if end.offer_kept else ""
        return (
            "info",
            f"Handoff cancelled ({end.code}); the source session is unchanged.{kept}{back}",
        )
    if end.code == "handoff_setup_failed":
        return "error", (
            f"The handoff's new session could not be initialised{detail}.{back} "
            "The source session is intact."
        )
    return "error", f"Handoff failed: {end.code}{detail}.{back} The source session is intact."
