"""What the notes store hands out: a note, a listing's record of one, a refused file, the
result of reading a home or of a write, and the small conversions they share."""

from __future__ import annotations

import os
from functools import lru_cache

from pi_context.bindings.notes import diskcache
from pi_context.bindings.notes.address import (
    NoteAddressError,
)
from pi_context.bindings.notes.cache import (
    Entry,
)
from pi_context.bindings.notes.errors import (
    NoteError,
)
from pi_context.bindings.notes.frontmatter import (
    NoteMeta,
    ParsedNote,
    crumpled_at,
)
from pi_context.bindings.notes.note_address import address_path
from pi_context.support.frozen import frozen, record

NOTE_MAX_BYTES = 1_000_000
"""Largest note body, in UTF-8 bytes."""

TWIN_REASON = "another spelling (NFC/NFD) of this name is the note"
"""Why a second spelling of one name in a folder is refused (the first one is the note)."""

MIGRATE_HINT = "run `pi-context notes migrate` to preview and `--apply` to rename them"


@frozen
class Note:
    scope: str
    path: str
    text: str
    """The whole file, metadata block included: what ``notes_read`` windows over."""
    parsed: ParsedNote

    @property
    def meta(self) -> NoteMeta:
        return self.parsed.meta

    @property
    def body(self) -> str:
        return self.parsed.body

    @property
    def size_bytes(self) -> int:
        return len(self.parsed.body.encode("utf-8", "surrogatepass"))

    @property
    def crumpled_at(self) -> str | None:
        """When the note was crumpled (``crumpledAt``), ``None`` for a live note."""
        return crumpled_at(self.parsed.extra_lines)


@frozen
class NoteRecord:
    """What a listing knows about a note without reading its body."""

    scope: str
    path: str
    meta: NoteMeta
    size_bytes: int
    crumpled_at: str | None = None


@frozen
class Refused:
    """A file in a home that cannot be used as a note, and why."""

    scope: str
    path: str
    reason: str


@frozen
class HomeScan:
    scope: str
    records: tuple[NoteRecord, ...]
    refused: tuple[Refused, ...]


@record
class HomeRead:
    """One read of one home: notes built as entries, then notes served straight from the
    disk cache's rows (``rows_served``: (path, row)). Index ``i`` counts entries first."""

    scope: str
    entries: list[tuple[str, Entry]]
    rows: diskcache.Rows | None
    rows_served: list[tuple[str, int]]
    refused: list[Refused]

    def __len__(self) -> int:
        return len(self.entries) + len(self.rows_served)

    def paths(self) -> list[str]:
        return [path for path, _ in self.entries] + [path for path, _ in self.rows_served]

    def updated_at(self) -> list[int]:
        column = self.rows.updated_at if self.rows is not None else []
        return [entry.meta.updated_at for _, entry in self.entries] + [
            column[row] for _, row in self.rows_served
        ]

    def crumpled(self) -> list[bool]:
        """Whether each note (by index) is crumpled (``crumpledAt`` among its extra lines)."""
        rows = self.rows
        marks = [crumpled_at(entry.extra_lines) is not None for _, entry in self.entries]
        if rows is not None:
            marks += [crumpled_at(rows.extra_lines(row)) is not None for _, row in self.rows_served]
        return marks

    def record(self, index: int) -> NoteRecord:
        """Note ``index`` as a listing record (built on request)."""
        if index < len(self.entries):
            path, entry = self.entries[index]
            key = ("record", self.scope)
            record: NoteRecord | None = entry.memo.get(key)
            if record is None or record.path != path:
                record = NoteRecord(
                    self.scope, path, entry.meta, entry.size_bytes, crumpled_at(entry.extra_lines)
                )
                entry.memo[key] = record
            return record
        path, row = self.rows_served[index - len(self.entries)]
        assert self.rows is not None
        rows = self.rows
        crumpled = crumpled_at(rows.extra_lines(row))
        return NoteRecord(self.scope, path, rows.meta(row), rows.size_bytes(row), crumpled)


def note_of(scope: str, path: str, entry: Entry) -> Note:
    """The note an entry (with its body) holds at ``path`` of ``scope``, built once."""
    key = ("note", scope)
    note: Note | None = entry.memo.get(key)
    if note is None or note.path != path:
        note = Note(scope, path, entry.text(), entry.parsed())
        entry.memo[key] = note
    return note


@frozen
class HomeLoad:
    scope: str
    notes: tuple[Note, ...]
    refused: tuple[Refused, ...]


@frozen
class WriteOutcome:
    note: Note
    created: bool
    applied: int = 0
    uncrumpled: bool = False
    """A write that smoothed a crumpled note (the newest contract's ``uncrumpled`` outcome)."""
    change_kind: str = "body"
    """``none``, ``body``, ``metadata`` or ``file`` (a rename), as the newest contract says."""
    renamed_from: str | None = None
    replaced_crumpled: bool = False


def _legacy_reason(parsed: ParsedNote | Entry) -> str:
    keys = ", ".join(parsed.legacy_keys)
    return f"note uses legacy snake_case metadata ({keys}); {MIGRATE_HINT}"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NoteError(f"{what} is not valid Unicode (it contains a lone surrogate)") from exc


def _mtime_ms(info: os.stat_result) -> int:
    return info.st_mtime_ns // 1_000_000


@lru_cache(maxsize=1 << 17)
def _path_problem(path: str) -> str | None:
    """Why a listed path is not addressable (pure, so a listing of 50k notes asks once each)."""
    try:
        address_path(path)
    except NoteAddressError as exc:
        return str(exc)
    return None
