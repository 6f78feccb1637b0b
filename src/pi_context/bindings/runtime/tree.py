"""Tree navigation: keeping Pi's branch summary from carrying erased history back.

Pi's ``/tree`` can summarize the branch being left and attach the summary where the navigation
lands. Its summarizer reads raw entries, outside the context hook that cuts a window at its
boot, so a summary of a branch that was reset would bring the erased conversation back. When the
source or the destination branch holds a reset marker, pi-context answers the host's
``session_before_tree`` hook with an empty summary (Pi then writes no summary entry) and tells the
user why; navigation itself and the raw history stay available. Without a marker on either
branch Pi's native summary is left alone.

``navigate`` performs a whole navigation the way Pi's ``navigateTree`` does, for hosts that do
not run Pi (and for the demo): decide, summarize or not, move the leaf, then the runtime's
``session_tree`` handling (clear the machine, ensure the boot of the destination's window).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.context import text_blocks
from pi_context.bindings.session.windows import is_reset_marker

Entry = dict[str, Any]
Summarizer = Callable[[Sequence[Entry]], str]
"""The host's (Pi's) native branch summarizer: abandoned entries in order -> summary text."""

MarkerSide = Literal["neither", "source", "destination", "both"]

SUPPRESSED_NOTICE = (
    "pi-context: no branch summary was written, because a branch on either side of this "
    "navigation was reset and a summary would bring erased history back; the history itself "
    "stays available."
)


@dataclass(frozen=True)
class TreeSummaryDecision:
    """The answer to the host's tree-navigation hook."""

    markers: MarkerSide
    """Which of the two branches (root to leaf) holds a reset marker."""
    wants_summary: bool
    suppress: bool
    """Replace the summary with an empty one (so no summary entry is written)."""
    notice: str | None = None

    @property
    def hook_result(self) -> dict[str, Any] | None:
        """What a Pi ``session_before_tree`` handler returns: None leaves Pi's summary alone."""
        return {"summary": {"summary": ""}} if self.suppress else None


def _has_marker(branch: Sequence[Entry]) -> bool:
    return any(is_reset_marker(entry) for entry in branch)


def decide(
    source_branch: Sequence[Entry], destination_branch: Sequence[Entry], wants_summary: bool
) -> TreeSummaryDecision:
    """The pi-context decision for one navigation (pure; branches run root -> leaf)."""
    source, destination = _has_marker(source_branch), _has_marker(destination_branch)
    side: MarkerSide = (
        "both"
        if source and destination
        else "source"
        if source
        else "destination"
        if destination
        else "neither"
    )
    # Only a requested summary can leak anything; a plain move needs no intervention.
    suppress = wants_summary and side != "neither"
    return TreeSummaryDecision(
        side, wants_summary, suppress, SUPPRESSED_NOTICE if suppress else None
    )


def branch_of(session: Session, leaf_id: str | None, what: str) -> Sequence[Entry]:
    """The root -> leaf path of ``leaf_id`` (None: the session's current leaf)."""
    if leaf_id is None:
        return session.branch()
    if session.get(leaf_id) is None:
        raise SessionError(f"tree navigation: {what} entry {leaf_id!r} is not in this session")
    return session.branch(leaf_id)


def abandoned_entries(session: Session, source_id: str | None, target_id: str) -> list[Entry]:
    """Entries from the common ancestor (exclusive) to the source leaf: what Pi summarizes."""
    if source_id is None:
        return []
    target_path = {entry["id"] for entry in session.branch(target_id)}
    source_path = session.branch(source_id)
    for index in range(len(source_path) - 1, -1, -1):
        if source_path[index]["id"] in target_path:
            return list(source_path[index + 1 :])
    return list(source_path)


def landing_leaf(session: Session, target_id: str) -> tuple[str | None, str | None]:
    """Where Pi puts the leaf for a target, and the text it hands back to the editor.

    Selecting a user message or a custom message lands on its parent with that text in the
    editor (to edit and resend); any other entry becomes the leaf itself.
    """
    entry = session.get(target_id)
    if entry is None:
        raise SessionError(f"tree navigation: target entry {target_id!r} is not in this session")
    message = entry.get("message") if entry.get("type") == "message" else None
    if isinstance(message, dict) and message.get("role") == "user":
        return _parent(entry), text_blocks(message.get("content"), "")
    if entry.get("type") == "custom_message":
        return _parent(entry), text_blocks(entry.get("content"), "")
    return target_id, None


def _parent(entry: Entry) -> str | None:
    parent = entry.get("parentId")
    return parent if isinstance(parent, str) and parent else None


@dataclass(frozen=True)
class Navigation:
    """The outcome of ``Runtime.navigate_tree``."""

    decision: TreeSummaryDecision
    leaf_id: str | None
    summary_entry_id: str | None = None
    editor_text: str | None = None
