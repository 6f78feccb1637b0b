"""The hidden boot message of a window, rendered purely from an explicit snapshot.

Layout: the reset line (only after a reset), the ``<context_window>`` identity block, the notes
index of the closed notes snapshot (recent non-stale notes, most recently updated first, with
size, local update time and a preview), and the static protocol block. Rendering reads no file
and no clock, so one snapshot always renders the same boot; the whole text is bounded by
``BOOT_MAX_BYTES`` (the index gives way first, with a pointer to ``notes_list``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_context.bindings.notes.frontmatter import local_iso
from pi_context.bindings.notes.snapshot import NotesSnapshot, SnapshotNote

from .protocol import (
    CONTEXT_WINDOW_CLOSE_TAG,
    CONTEXT_WINDOW_OPEN_TAG,
    PROTOCOL_TEXT,
    RESET_LINE,
)

BOOT_MAX_BYTES = 24_000
"""Upper bound on a boot's UTF-8 size."""
INDEX_MAX_NOTES = 10
"""At most this many notes are indexed; the rest are reachable with notes_list."""
PREVIEW_HEAD = 80
PREVIEW_TAIL = 240
"""A body longer than head + tail code points shows its first 80 and last 240, joined by "…"."""


@dataclass(frozen=True)
class BootInput:
    """Everything a boot shows; nothing else is consulted."""

    agent_name: str
    first_window_id: str
    current_window_id: str
    previous_window_id: str | None = None
    """Set only for a reset: it adds the reset line and the previous-id line."""
    notes: NotesSnapshot | None = None


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def preview(body: str) -> str:
    """Short bodies whole; long ones head + "…" + tail, the two slices never overlapping."""
    if len(body) <= PREVIEW_HEAD + PREVIEW_TAIL:
        return body
    return f"{body[:PREVIEW_HEAD]}…{body[len(body) - PREVIEW_TAIL :]}"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.split("\n"))


def note_entry(note: SnapshotNote) -> str:
    """One index entry: the heading line, then the indented preview (if the body has text)."""
    lines = note.body.count("\n") + 1 if note.body else 0
    heading = (
        f"- {note.scope}:{note.path} ({lines} lines, {note.size_bytes} UTF-8 bytes, "
        f"updated {local_iso(note.meta.updated_at)})"
    )
    return f"{heading}\n{_indent(preview(note.body))}" if note.body else heading


def identity_block(data: BootInput) -> str:
    lines = [
        f"Agent name: {data.agent_name}",
        f"First context window id: {data.first_window_id}",
        f"Current context window id: {data.current_window_id}",
    ]
    if data.previous_window_id is not None:
        lines.append(f"Previous context window id: {data.previous_window_id}")
    return "\n".join([CONTEXT_WINDOW_OPEN_TAG, *lines, CONTEXT_WINDOW_CLOSE_TAG])


def notes_index(snapshot: NotesSnapshot | None, budget_bytes: int) -> str:
    """The index section within ``budget_bytes``; empty when nothing is indexed or noticed."""
    if snapshot is None:
        return ""
    parts: list[str] = []
    notice = snapshot.recovery_notice()
    if notice:
        parts.append(notice)
    indexed = snapshot.index()
    if indexed:
        parts.append(
            f"Recent notes when this window opened (up to {INDEX_MAX_NOTES}, newest first):"
        )
    used = _utf8("\n".join(parts))
    shown = 0
    for note in indexed[:INDEX_MAX_NOTES]:
        entry = note_entry(note)
        # Reserve room for the closing pointer line, so the bound holds whatever follows.
        if used + 1 + _utf8(entry) + 120 > budget_bytes:
            break
        parts.append(entry)
        used += 1 + _utf8(entry)
        shown += 1
    hidden = len(indexed) - shown
    if hidden > 0:
        parts.append(f"({hidden} more not shown here; call notes_list to see every note.)")
    return "\n".join(parts)


def render_boot(data: BootInput, max_bytes: int = BOOT_MAX_BYTES) -> str:
    """The boot text for one window (a pure function of ``data``)."""
    head = [RESET_LINE] if data.previous_window_id is not None else []
    head.append(identity_block(data))
    fixed = "\n\n".join([*head, PROTOCOL_TEXT])
    index = notes_index(data.notes, max_bytes - _utf8(fixed) - 4)
    sections = [*head, index, PROTOCOL_TEXT] if index else [*head, PROTOCOL_TEXT]
    text = "\n\n".join(sections)
    if _utf8(text) > max_bytes:
        raise ValueError(f"boot of {_utf8(text)} bytes exceeds the {max_bytes}-byte bound")
    return text
