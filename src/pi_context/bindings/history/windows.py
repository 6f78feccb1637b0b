"""Split a branch into context windows: the reset marker is the only boundary.

Identity comes from the session binding's ``windows`` module when it is present (one owner
for the marker predicate and the root id); this module only turns it into index spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RESET_MARKER_TYPE = "pi-context/reset-marker"


def is_reset_marker(entry: Mapping[str, Any]) -> bool:
    """A ``custom`` entry of the marker type whose data names a non-empty window id."""
    if entry.get("type") != "custom" or entry.get("customType") != RESET_MARKER_TYPE:
        return False
    data = entry.get("data")
    if not isinstance(data, Mapping):
        return False
    window_id = data.get("windowId")
    return isinstance(window_id, str) and len(window_id) > 0


def root_window_id(session_id: str) -> str:
    return f"pcw:{session_id[:8]}:root"


@dataclass(frozen=True, slots=True)
class Span:
    """Branch entries ``[start, end)`` form window ``window_id``; ``start`` is its marker."""

    window_id: str
    start: int
    end: int
    marker_id: str | None
    created_at: str | None


def window_spans(branch: Sequence[Mapping[str, Any]], session_id: str) -> list[Span]:
    """Windows of a root-to-leaf branch, oldest first; the root window always exists."""
    spans: list[Span] = []
    window_id = root_window_id(session_id)
    start = 0
    marker_id: str | None = None
    first = branch[0] if branch else None
    created = first.get("timestamp") if isinstance(first, Mapping) else None
    created_at = created if isinstance(created, str) else None
    for index, entry in enumerate(branch):
        if not isinstance(entry, Mapping) or not is_reset_marker(entry):
            continue
        spans.append(Span(window_id, start, index, marker_id, created_at))
        window_id = entry["data"]["windowId"]
        start = index
        marker = entry.get("id")
        marker_id = marker if isinstance(marker, str) else None
        stamp = entry.get("timestamp")
        created_at = stamp if isinstance(stamp, str) else None
    spans.append(Span(window_id, start, len(branch), marker_id, created_at))
    return spans
