"""The boot's notes index as the newest extension lays it out: one shelf per home.

The boot is the identity block, the protocol (how notes are addressed included), then the
notes index: a shelf for each home in a fixed order (this session, the project, the agent, the
model, the human), each under an underlined heading, holding the home's ``MAP.md`` (its body
cut at ``MAP_MAX_CHARS`` characters with a pointer to the rest) and its ``FRESH_PER_HOME`` most
recently updated other notes, each announced by its first heading (or first line, shortened)
above its address and how long ago it was updated. A home without a map or notes has no shelf;
a home that could not be read says so and points at ``notes_list``; crumpled and stale notes are
left out (the snapshot holds no crumpled note). The wording is ours; the layout, the limits and
the order are the extension's (``src/boot/render.ts``, ``src/boot/text.ts``).

The seeds' layout (maps of the durable homes, then a pocket of addresses under per-home quotas)
stays available as ``RuntimeConfig(boot_layout="pocket")`` (``boot.py``); ``render_boot`` here
renders whichever layout a ``BootInput`` names.
"""

from __future__ import annotations

from pi_context.bindings.notes.snapshot import NotesSnapshot, SnapshotNote

from .boot import (
    BOOT_MAX_BYTES,
    MAP_PATH,
    BootInput,
    address,
    identity_block,
    notes_homes_text,
    relative_time,
    render_pocket,
)
from .protocol import PROTOCOL_TEXT

FRESH_PER_HOME = 3
"""Notes other than the map shown per home, most recently updated first."""
MAP_MAX_CHARS = 4096
"""A map's body is shown up to this many characters (code points)."""
TITLE_MAX_CHARS = 40
SHELF_ORDER: tuple[tuple[str, str], ...] = (
    ("session", "This session (bare paths)"),
    ("project", "This project (@project/)"),
    ("agent", "You (@self/ = {agent})"),
    ("model", "Your model (@model/ = {model})"),
    ("human", "Your human (@human/)"),
)
INDEX_HEADING = "Notes index"


def _underlined(label: str) -> str:
    return f"{label}\n{'-' * len(label)}"


def title(body: str) -> str | None:
    """A note as its own words announce it: its first Markdown heading, else its first
    non-blank line, shortened to ``TITLE_MAX_CHARS`` characters; ``None`` for a blank body."""
    lines = body.split("\n")
    heading = next((line for line in lines if line.lstrip("#") != line and _heading(line)), None)
    raw = heading.lstrip("#").strip() if heading else next((ln for ln in lines if ln.strip()), "")
    raw = raw.strip()
    if not raw:
        return None
    return raw if len(raw) <= TITLE_MAX_CHARS else raw[:TITLE_MAX_CHARS] + "…"


def _heading(line: str) -> bool:
    rest = line.lstrip("#")
    return rest[:1] in (" ", "\t") and bool(rest.strip())


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))


def _map_text(data: BootInput, note: SnapshotNote, cap: int) -> str:
    body = note.body
    if len(body) <= cap:
        return body
    return f"{body[:cap]}\n(map cut after {cap} characters; the whole map: {address(data, note)})"


def _shelf(data: BootInput, scope: str, notes: list[SnapshotNote], cap: int, fresh: int) -> str:
    label = dict(SHELF_ORDER)[scope].format(agent=data.agent_name, model=data.model_name)
    opened = data.opened_ms
    parts: list[str] = []
    mine = [note for note in notes if note.scope == scope and not note.stale]
    the_map = next((note for note in mine if note.path == MAP_PATH and note.body), None)
    if the_map is not None:
        map_text = _map_text(data, the_map, cap)
        parts.append(f"Map, {address(data, the_map)}:\n\n{_indented(map_text)}")
    recent = []
    for note in [note for note in mine if note.path != MAP_PATH][:fresh]:
        when = "" if opened is None else f" · updated {relative_time(note.updated_at, opened)}"
        where = f"  {address(data, note)}{when}"
        named = title(note.body)
        recent.append(where if named is None else f"  {named}\n{where}")
    if recent:
        parts.append("Recently updated:\n\n" + "\n\n".join(recent))
    if not parts:
        return ""
    return _underlined(label) + "\n\n" + "\n\n".join(parts)


def notes_index(data: BootInput, cap: int = MAP_MAX_CHARS, fresh: int = FRESH_PER_HOME) -> str:
    """The notes index of ``data``'s snapshot (maps cut at ``cap`` characters)."""
    snapshot: NotesSnapshot | None = data.notes
    shelves: list[str] = []
    failed = {failure.scope for failure in snapshot.failures} if snapshot else set()
    notes = list(snapshot.notes) if snapshot else []
    for scope, _label in SHELF_ORDER:
        if scope in failed:
            label = dict(SHELF_ORDER)[scope].format(agent=data.agent_name, model=data.model_name)
            could_not = f"  Not shown: the {scope} home could not be read; notes_list tries again."
            shelves.append(f"{_underlined(label)}\n\n{could_not}")
            continue
        shelf = _shelf(data, scope, notes, cap, fresh)
        if shelf:
            shelves.append(shelf)
    heading = _underlined(INDEX_HEADING).replace("-", "=")
    if not shelves:
        return f"{heading}\n\nNo notes yet: start one when there is something worth keeping."
    return "\n\n\n".join([heading, *shelves])


BOOT_LAYOUTS = ("shelves", "pocket")


def render_boot(data: BootInput, max_bytes: int = BOOT_MAX_BYTES) -> str:
    """The boot text for one window in ``data.layout`` (a pure function of ``data``)."""
    if data.layout not in BOOT_LAYOUTS:
        raise ValueError(f"boot layout must be one of {', '.join(BOOT_LAYOUTS)}: {data.layout!r}")
    if data.layout == "pocket":
        return render_pocket(data, max_bytes)
    return render_shelves_boot(data, max_bytes)


def render_shelves_boot(data: BootInput, max_bytes: int) -> str:
    """Identity, protocol, then the notes index, within ``max_bytes`` UTF-8 bytes: when the
    index does not fit, maps are cut shorter, then fewer recent notes are shown."""
    head = "\n\n".join([identity_block(data), notes_homes_text(data), PROTOCOL_TEXT])
    cap, fresh = MAP_MAX_CHARS, FRESH_PER_HOME
    while True:
        text = f"{head}\n\n{notes_index(data, cap, fresh)}"
        if len(text.encode("utf-8", "surrogatepass")) <= max_bytes:
            return text
        if cap > 0:
            cap //= 2
        elif fresh > 0:
            fresh -= 1
        else:
            raise ValueError(f"boot exceeds the {max_bytes}-byte bound without any notes")
