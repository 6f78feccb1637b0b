"""The hidden boot message of a window, rendered purely from one closed notes snapshot.

Two layouts. ``shelves`` (the default) is the newest extension's: identity, protocol, then one
shelf of notes per home (``boot_shelves.py``). ``pocket`` is the seeds' (pi-context 0.25/0.26),
rendered here; in both the reset prose is the continuation's, not the boot's:

1. the ``<context_window>`` identity block: the agent's and the model's home names (their
   slugs, as the extension derives them), first, current and (after a reset) previous window
   ids;
2. how notes are addressed (the five homes, and which named homes are ``@self`` and
   ``@model`` now);
3. the ``notes_list`` retry notice, only when a home could not be read;
4. the maps: the body of each fresh ``MAP.md`` of the human, project, agent and model homes,
   broadest first (a session ``MAP.md`` is an ordinary note);
5. the pocket: metadata lines only (address, lines, UTF-8 bytes, when it was updated) of the
   most recently updated fresh notes, with a quota per home so session churn cannot crowd out
   the durable homes; bodies never appear here and maps take no seat;
6. the static protocol block.

Everything comes from one ``NotesSnapshot`` (each home read once), so a boot can never mix two
reads of the filesystem; rendering reads no file and no clock (the snapshot's opening time is an
input). The text stays within ``BOOT_MAX_BYTES``: maps give way first (cut with a pointer to the
rest), then pocket lines (with a pointer to ``notes_list``).

Every note the boot names (pocket lines, map headings, pointers to a cut map) is written as
its address (``note_address.format_address``), exactly the string ``notes_read`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_context.bindings.addresses import described
from pi_context.bindings.notes.frontmatter import local_iso
from pi_context.bindings.notes.homes import DEFAULT_MODEL_SLUG
from pi_context.bindings.notes.note_address import format_address
from pi_context.bindings.notes.snapshot import NotesSnapshot, SnapshotNote

from .protocol import (
    CONTEXT_WINDOW_CLOSE_TAG,
    CONTEXT_WINDOW_OPEN_TAG,
    NOTES_HOMES_TEXT,
    PROTOCOL_TEXT,
)

BOOT_MAX_BYTES = 24_000
"""Upper bound on a boot's UTF-8 size."""
MAP_PATH = "MAP.md"
MAP_SCOPES = ("human", "project", "agent", "model")
"""Homes whose fresh map is resident in the boot, broadest first."""
POCKET_QUOTAS: tuple[tuple[str, int], ...] = (
    ("session", 5),
    ("project", 2),
    ("human", 2),
    ("agent", 1),
    ("model", 1),
)
"""Pocket seats per home, in the order the pocket lists them."""


@dataclass(frozen=True)
class BootInput:
    """Everything a boot shows; nothing else is consulted."""

    agent_name: str
    """The running agent's home name (its slug): shown as the agent, and ``@self``'s home."""
    first_window_id: str
    current_window_id: str
    previous_window_id: str | None = None
    """Set only for a reset: it adds the previous-id line."""
    notes: NotesSnapshot | None = None
    model_name: str = DEFAULT_MODEL_SLUG
    """The running model's home name (its slug, ``default`` when the host does not know it):
    shown as the model, and ``@model``'s home."""
    opened_ms: int | None = None
    """When the snapshot was taken: pocket times are shown relative to it (else as local time)."""
    layout: str = "shelves"
    """``shelves``: the newest extension's notes index (``boot_shelves``), the default;
    ``pocket``: the seeds' maps and pocket (0.25/0.26), this module's."""


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def identity_block(data: BootInput) -> str:
    # Ids come whole or not at all: one read from a hand-edited marker may be unaddressable.
    lines = [
        f"Agent name: {data.agent_name} (brain: {data.model_name})",
        f"First context window id: {described(data.first_window_id, 'window id')}",
        f"Current context window id: {described(data.current_window_id, 'window id')}",
    ]
    if data.previous_window_id is not None:
        previous = described(data.previous_window_id, "window id")
        lines.append(f"Previous context window id: {previous}")
    return "\n".join([CONTEXT_WINDOW_OPEN_TAG, *lines, CONTEXT_WINDOW_CLOSE_TAG])


def relative_time(then_ms: int, now_ms: int) -> str:
    """``5m ago`` / ``in 2h``: the largest whole unit, truncated toward zero."""
    seconds = int((then_ms - now_ms) / 1000)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)):
        if abs(seconds) >= size or unit == "s":
            amount = f"{abs(int(seconds / size))}{unit}"
            return f"in {amount}" if seconds > 0 else f"{amount} ago"
    raise AssertionError("unreachable")


def maps(snapshot: NotesSnapshot) -> list[SnapshotNote]:
    """The resident maps: each home's fresh, non-empty ``MAP.md``, broadest home first."""
    found = {
        note.scope: note
        for note in snapshot.notes
        if note.path == MAP_PATH and note.scope in MAP_SCOPES and not note.stale
    }
    return [found[scope] for scope in MAP_SCOPES if scope in found and found[scope].body]


def pocket(snapshot: NotesSnapshot) -> list[SnapshotNote]:
    """Recent fresh notes under the per-home quotas, newest first within each home."""
    chosen: list[SnapshotNote] = []
    for scope, seats in POCKET_QUOTAS:
        fresh = [
            note
            for note in snapshot.notes  # already newest first
            if note.scope == scope and note.path != MAP_PATH and not note.stale
        ]
        chosen.extend(fresh[:seats])
    return chosen


def address(data: BootInput, note: SnapshotNote) -> str:
    """The address ``notes_read`` takes for ``note``."""
    who = {"agent": data.agent_name, "model": data.model_name}.get(note.scope)
    return format_address(note.scope, note.path, who, who)


def notes_homes_text(data: BootInput) -> str:
    """How notes are addressed, naming the homes ``@self`` and ``@model`` stand for now."""
    mine = format_address("agent", "", data.agent_name)
    model = format_address("model", "", data.model_name)
    return f"{NOTES_HOMES_TEXT} Now @self/ is {mine} (yours) and @model/ is {model} (your model's)."


def pocket_line(data: BootInput, note: SnapshotNote) -> str:
    lines = note.body.count("\n") + 1
    updated, opened_ms = note.updated_at, data.opened_ms
    when = local_iso(updated) if opened_ms is None else relative_time(updated, opened_ms)
    return f"- {address(data, note)} ({lines} lines, {note.size_bytes} UTF-8 bytes, updated {when})"


def _pocket_header(count: int) -> str:
    quotas = ", ".join(f"{seats} {scope}" for scope, seats in POCKET_QUOTAS)
    return (
        f"In your pocket: {count} recently updated note{'s' if count != 1 else ''} (newest "
        f"first within each home; at most {quotas}). Only names are shown, never contents, so "
        "a note's name should say what it holds:"
    )


def _map_section(data: BootInput, note: SnapshotNote, budget: int) -> str | None:
    """A map with its heading, cut to ``budget`` bytes (None when not even a stub fits)."""
    heading = f"Map of the {note.scope} home ({address(data, note)}):"
    whole = f"{heading}\n{note.body}"
    if _utf8(whole) <= budget:
        return whole
    pointer = f"\n… (cut here; notes_read {address(data, note)} for the rest)"
    room = budget - _utf8(heading) - 1 - _utf8(pointer)
    if room < 64:
        return None
    body = note.body.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return f"{heading}\n{body}{pointer}"


def _map_stub(data: BootInput, note: SnapshotNote) -> str:
    return f"(The {note.scope} map did not fit here: notes_read {address(data, note)}.)"


def notes_sections(data: BootInput, budget: int) -> list[str]:
    """Retry notice, maps and pocket, within ``budget`` UTF-8 bytes (joined by blank lines)."""
    snapshot = data.notes
    if snapshot is None:
        return []
    sections: list[str] = []
    notice = snapshot.recovery_notice()
    if notice:
        sections.append(notice)
    used = sum(_utf8(s) + 2 for s in sections)

    # The pocket is small and points at every durable home: it is sized first.
    seats = pocket(snapshot)
    lines = [pocket_line(data, note) for note in seats]
    pocket_text = "\n".join([_pocket_header(len(seats)), *lines]) if seats else ""
    while pocket_text and used + _utf8(pocket_text) + 2 > budget:
        if not lines:
            pocket_text = ""
            break
        lines.pop()
        hidden = len(seats) - len(lines)
        more = f"({hidden} more not shown here; notes_list shows every note.)"
        pocket_text = "\n".join([_pocket_header(len(seats)), *lines, more])
    pocket_bytes = _utf8(pocket_text) + 2 if pocket_text else 0

    resident = maps(snapshot)
    stubs = [_map_stub(data, note) for note in resident]
    for position, note in enumerate(resident):
        # Keep room for a pointer to every later map, so a big map never hides the others.
        later = sum(_utf8(stub) + 2 for stub in stubs[position + 1 :])
        section = _map_section(data, note, budget - used - pocket_bytes - later - 2)
        if section is None:
            section = stubs[position]
            if used + pocket_bytes + _utf8(section) + 2 > budget:
                continue
        sections.append(section)
        used += _utf8(section) + 2
    if pocket_text:
        sections.append(pocket_text)
    return sections


def render_pocket(data: BootInput, max_bytes: int = BOOT_MAX_BYTES) -> str:
    """The boot text for one window in the seeds' layout (a pure function of ``data``);
    ``boot_shelves.render_boot`` renders the layout ``data`` names."""
    head = [identity_block(data), notes_homes_text(data)]
    fixed = _utf8("\n\n".join([*head, PROTOCOL_TEXT]))
    notes = notes_sections(data, max_bytes - fixed - 2)
    text = "\n\n".join([*head, *notes, PROTOCOL_TEXT])
    if _utf8(text) > max_bytes:
        raise ValueError(f"boot of {_utf8(text)} bytes exceeds the {max_bytes}-byte bound")
    return text
