"""The demo's tree navigation: back across the last reset and home again.

After the scripted run the user opens ``/tree``, picks the last reply of the window before the
latest reset and asks for a branch summary. The branch being left holds reset markers, so
pi-context suppresses Pi's summary: the summarizer never runs and no summary entry is written.
The destination window's own boot serves its context, and the erased text of the windows left
behind does not reach the provider. Then the user navigates back to where the run ended.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session.windows import is_reset_marker


@dataclass(frozen=True)
class TreeTrip:
    target_id: str
    """The entry navigated to (the last assistant reply before the latest reset)."""
    target_window: str
    """The window the navigation landed in."""
    suppressed: tuple[bool, bool]
    """Whether the summary was suppressed going there and coming back."""
    summarizer_calls: int
    leaked: bool
    """Did any text of the abandoned windows reach the provider context there? (Must not.)"""
    summary_entries: int
    """``branch_summary`` entries written by the trip."""

    def as_json(self) -> dict[str, Any]:
        return {**self.__dict__, "suppressed": list(self.suppressed)}

    def line(self) -> str:
        there, back = ("suppressed" if s else "kept" for s in self.suppressed)
        return (
            f"tree navigation: to {self.target_id} in window {self.target_window} (before the "
            f"last reset) and back; branch summary {there} / {back}, summarizer calls "
            f"{self.summarizer_calls}, summary entries {self.summary_entries}, erased text in "
            f"context: {'yes' if self.leaked else 'no'}"
        )


def _is_reply(entry: dict[str, Any]) -> bool:
    message = entry.get("message") if entry.get("type") == "message" else None
    return isinstance(message, dict) and message.get("role") == "assistant"


def _reply_texts(entries: Sequence[dict[str, Any]]) -> set[str]:
    return {
        json.dumps(block["text"], ensure_ascii=False)[1:-1]
        for entry in entries
        if _is_reply(entry)
        for block in entry["message"].get("content") or []
        if isinstance(block, dict) and block.get("type") == "text" and block.get("text")
    }


def tree_round_trip(runtime: Runtime) -> TreeTrip | None:
    """Navigate into the window before the latest reset and back (None without a reset)."""
    session = runtime.session
    home = session.leaf_id
    branch = runtime.branch()
    markers = [index for index, entry in enumerate(branch) if is_reset_marker(entry)]
    if home is None or not markers:
        return None
    replies = [entry for entry in branch[: markers[-1]] if _is_reply(entry)]
    if not replies:
        return None
    target = replies[-1]["id"]
    abandoned = branch[markers[-1] :]
    calls: list[int] = []

    def summarize(entries: Sequence[dict[str, Any]]) -> str:
        calls.append(len(entries))  # Pi's summarizer would send these to a model
        return f"summary of {len(entries)} entries"

    before = len(session.entries)
    there = runtime.navigate_tree(target, summarize)
    window = runtime.window_id
    provider = json.dumps(runtime.context().messages, ensure_ascii=False)
    # Text that only the abandoned windows hold must not be in the request.
    erased = _reply_texts(abandoned) - _reply_texts(runtime.branch())
    leaked = any(text in provider for text in erased)
    # Back home: the hook decides again, then the host moves the leaf (session_tree).
    back = runtime.before_tree(home, wants_summary=True)
    runtime.tree(home)
    written = [e for e in session.entries[before:] if e.get("type") == "branch_summary"]
    return TreeTrip(
        target, window, (there.decision.suppress, back.suppress), len(calls), leaked, len(written)
    )
