"""pi-context's persisted entry types, defaults and the model-facing texts of the runtime.

Entry types and the window tags are the wire protocol shared with the TypeScript extension;
the sentences are this implementation's own.
"""

from __future__ import annotations

from pi_context.bindings.notes.note_address import ADDRESS_HELP
from pi_context.bindings.session.dialect import GUIDANCE, MANUAL_WIPE, WARNING, custom_type
from pi_context.bindings.session.windows import BOOT_TYPE, CONTINUATION_TYPE, RESET_MARKER_TYPE

__all__ = [
    "ALREADY_PENDING_STATUS",
    "REQUESTED_STATUS",
    "BOOT_TYPE",
    "CONTINUATION_TEXT",
    "CONTINUATION_TYPE",
    "DEFAULT_REMINDER_MARGIN_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "GUIDANCE_TYPE",
    "PI_CONTEXT_SETTINGS_KEY",
    "RESET_MARKER_TYPE",
    "WARNING_RUNWAY_TOKENS",
    "WARNING_TEXT",
    "WARNING_TYPE",
    "reminder_text",
]

REQUESTED_STATUS = "rollover_requested"
"""``wipe_memory``'s status when it records a new request (pi-context's wire string)."""
ALREADY_PENDING_STATUS = "rollover_already_pending"
"""``wipe_memory``'s status when this window already has a reset requested."""
RESET_RESULT_MESSAGE = "This window ends after the current tool batch; a fresh one follows."
"""The sentence ``RuntimeConfig.reset_result_details`` adds to the reset tool's result."""

GUIDANCE_TYPE = custom_type(GUIDANCE)
"""The early low-budget reminder (hidden custom message, once per window), default dialect."""
WARNING_TYPE = custom_type(WARNING)
"""The final close-out warning (hidden custom message, once per window), default dialect."""
MANUAL_WIPE_TYPE = custom_type(MANUAL_WIPE)
"""The user's manual reset command's close-out prompt (the warning's text), default dialect."""

CONTEXT_WINDOW_OPEN_TAG = "<context_window>"
CONTEXT_WINDOW_CLOSE_TAG = "</context_window>"
PROTOCOL_OPEN_TAG = "<context_window_protocol>"
PROTOCOL_CLOSE_TAG = "</context_window_protocol>"
GUIDANCE_OPEN_TAG = "<context_window_guidance>"
GUIDANCE_CLOSE_TAG = "</context_window_guidance>"

PI_CONTEXT_SETTINGS_KEY = "pi-context"
"""The earlier dialect's settings key; the newest reads ``notesoup`` (``dialect.SETTINGS_KEYS``)."""
DEFAULT_RESERVE_TOKENS = 16_384
"""Pi's default ``compaction.reserveTokens``: the hard reserve."""
DEFAULT_REMINDER_MARGIN_TOKENS = 24_576
"""Default ``pi-context.reminderMarginTokens``: the reminder sits this far above the reserve."""
WARNING_RUNWAY_TOKENS = 12_288
"""The final warning sits this far above the reserve: the model's runway to close out."""


def _guidance(text: str) -> str:
    return f"{GUIDANCE_OPEN_TAG}\n{text}\n{GUIDANCE_CLOSE_TAG}"


def reminder_text(left: int) -> str:
    """The early reminder; ``left`` is the countdown to the final warning when it was recorded."""
    return _guidance(
        f"Context is running low: {left} tokens were left before the final warning when this "
        "note was added. Bring your checkpoint note up to date now: the goal, what is decided, "
        "what is done, what comes next, and the window and item ids of the user requests you "
        "are serving. get_context_remaining reports the live figure."
    )


WARNING_TEXT = _guidance(
    "Final warning: this context window is almost full. Put everything you still need into "
    "your checkpoint note now, then call wipe_memory to go on in a fresh window. Start no new "
    "work here; if you keep going the window is reset for you."
)

RESET_LINE = (
    "The context window was reset: the earlier conversation is out of view and was not "
    "summarized. Your notes and the complete session history remain available."
)
CONTINUATION_TEXT = (
    RESET_LINE + "\n\nA fresh context window has begun. Read your checkpoint note, fetch only "
    "what it lacks with the history tools, then carry on with the task."
)
"""The hidden continuation after every reset: the reset prose (the extension's continuation
holds it from 0.38.0; the boot holds identity, protocol and notes), then what to do first."""

NOTES_HOMES_TEXT = (
    "Notes live in five homes: this session's own trip (the goal, progress, loose ends); "
    "@project for facts about this project, for whoever works on it next; @human for the "
    "human's standing preferences and lessons across projects; @self for your own, as the "
    "agent running now; @model for the current model's (how it behaves, its quirks). "
    f"{ADDRESS_HELP} Below, every note is named by its address, exactly as the notes tools "
    "take it. Each home's MAP.md, when fresh, is shown in full as that home's map."
)

_PROTOCOL_LINES = (
    "This context window is your working memory and it is reset when it fills up. "
    "Two things outlive a reset:",
    "- Notes: Markdown files you keep with notes_write and notes_update, read with notes_read and "
    "find with notes_list and notes_search. Keep one checkpoint note current: the goal, "
    "decisions, progress, open questions, the next step, and the window id and item id of each "
    "user request you are serving.",
    "- History: every earlier message stays in the session. history_windows lists the windows, "
    "history_list and history_search locate items, and history_read reads one item by its "
    "window id and item id.",
    "get_context_remaining tells you how many tokens remain before the final warning. When a "
    "reminder or the warning appears, update the checkpoint note; after the warning, call "
    "wipe_memory to continue in a fresh window, or the window is reset for you once it is full.",
    "When a previous context window id is shown above, a reset has just happened: read the "
    "checkpoint note first, then use the history tools for anything it does not cover.",
    "Notes and history are private bookkeeping; do not mention them to the user.",
)
PROTOCOL_TEXT = "\n".join((PROTOCOL_OPEN_TAG, *_PROTOCOL_LINES, PROTOCOL_CLOSE_TAG))


# --- user notices ----------------------------------------------------------------------------

REMINDER_NOTICE = (
    "pi-context: context budget low — a checkpoint reminder was recorded for the model "
    "(hidden from the chat)."
)
WARNING_NOTICE = (
    "pi-context: context budget critical — the final close-out warning was recorded for the model."
)


def cleared_notice(window_id: str) -> str:
    return f"pi-context: memory cleared · {window_id}"
