"""The history index's stored format: its schema, entry flags, metadata, content file name,
and its packed columns as a call reads them back (whole and checksummed, or one value in place).

``index.py`` checks this store against the session file and answers from it; ``build.py``
writes it; ``views.py`` projects branches from its entry columns.
"""

from __future__ import annotations

import json
import mmap
import zlib
from array import array
from collections.abc import Callable
from pathlib import Path

from pi_context.support.frozen import field, record
from pi_context.support.sqlite import sqlite3

from .columns import CorruptIndex, Strings
from .items import ROLE_CODES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

VIEW_MEMO_MAX = 32
SCHEMA = 8  # 8: notesoup/* entries are the extension's too (7: a digest of every indexed byte;
# 6: both window namings flagged; 5: packed columns in checksummed parts)
_DEVELOPER = ROLE_CODES["developer"]
_SYSTEM = ROLE_CODES["system"]
_FLIP, _UPSTREAM, _STAMP, _WHOLE = 1, 2, 4, 8  # entry flag bits (_STAMP: the timestamp is a
# string; _UPSTREAM, _WHOLE: the session's own boot or marker in the extension's window naming,
# or in the fork-safe whole-id naming)

# Packed columns: name -> array type code ("" marks a string table, stored as name.o + name.d).
_ARRAYS = {
    "e_off": "q",  # byte offset of the entry's line
    "e_len": "q",  # its length (without the newline)
    "e_item0": "q",  # number of its first item
    "e_flags": "B",
    "i_start": "q",  # content offset of each item (a leading 0: one more value than items)
    "i_role": "B",
    "i_nchars": "q",  # length of the item's content in characters
    "i_seq": "q",  # the entry each item belongs to
    "i_tool": "I",  # 0: no tool; k: the k-th name of the t_name table
    "e_keys": "I",  # CRC-32 of every id and of each parent that is not the id before it (those
    # are there already), each part sorted: a membership filter
}


class Unindexable(Exception):
    """This call must be answered by the unindexed path (the loader decides everything)."""


@record
class View:
    """The selected branch: its items (index numbers) in branch order, their roles, windows."""

    leaf_seq: int  # -1: the empty branch
    positions: array[int]  # item numbers in branch order
    roles: bytearray  # role code per position
    windows: list[tuple[str, str | None, str | None, int]]  # id, created_at, marker id, start
    ascending: bool = True  # positions in file order (the usual case): bisect finds an item
    naming: int = 0  # the session's own window naming seen so far: _NAMING_* (decides the root)
    memo: dict[Any, Any] = field(default_factory=dict)
    """Selections made over this view (position lists per filter, search hits), kept while a
    resident host holds the view, so a call costs what it returns."""

    def memoized(self, key: Any, make: Callable[[], Any]) -> Any:
        memo = self.memo
        if key in memo:
            return memo[key]
        if len(memo) >= VIEW_MEMO_MAX:
            memo.pop(next(iter(memo)))
        value = memo[key] = make()
        return value

    def window_ends(self) -> list[int]:
        starts = [w[3] for w in self.windows]
        return [*starts[1:], len(self.positions)]

    def to_blob(self) -> bytes:
        head = json.dumps([self.leaf_seq, self.windows, self.ascending, self.naming]).encode()
        return len(head).to_bytes(8, "little") + head + self.positions.tobytes() + self.roles

    @classmethod
    def from_blob(cls, blob: bytes) -> View:
        size = int.from_bytes(blob[:8], "little")
        leaf_seq, windows, ascending, naming = json.loads(blob[8 : 8 + size])
        rest = blob[8 + size :]
        count = len(rest) // 5
        positions = array("i")
        positions.frombytes(rest[: 4 * count])
        roles = bytearray(rest[4 * count :])
        if len(roles) != count:
            raise CorruptIndex("view arrays disagree")
        windows = [tuple(w) for w in windows]
        return cls(leaf_seq, positions, roles, windows, bool(ascending), int(naming))


@record
class _Entries:
    """Entry columns as plain lists, for walking branches (``first`` is the first seq held)."""

    first: int = 0
    ids: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)  # "" for none
    markers: list[str] = field(default_factory=list)  # "" for none
    stamps: list[str] = field(default_factory=list)
    flags: bytearray = field(default_factory=bytearray)
    item0: list[int] = field(default_factory=list)  # one more value than entries
    roles: bytes | bytearray = b""  # role codes of the items from number ``item_base`` on
    item_base: int = 0

    def __len__(self) -> int:
        return len(self.ids)


class _Stored:
    """What a history index holds open for one call, and its column readers."""

    source: Path
    directory: Path
    db: sqlite3.Connection | None
    _content: mmap.mmap | None
    _columns: dict[str, Any]
    _blobs: dict[tuple[str, int], sqlite3.Blob]
    meta: dict[str, Any]
    session_id: str
    file_view: View | None

    def _parts(self, name: str) -> list[bytes]:
        """A column's parts, each checked against its checksum, and together its length."""
        assert self.db is not None
        rows = self.db.execute(
            "SELECT data, crc FROM parts WHERE name = ? ORDER BY part", (name,)
        ).fetchall()
        for data, crc in rows:
            if type(data) is not bytes or zlib.crc32(data) != crc:
                raise CorruptIndex(f"a part of column {name} fails its checksum")
        parts = [row[0] for row in rows]
        if sum(map(len, parts)) != self.meta["sizes"].get(name, 0):
            raise CorruptIndex(f"column {name} has the wrong length")
        return parts

    def _blob(self, name: str) -> bytes:
        """A column's bytes (its parts joined)."""
        return b"".join(self._parts(name))

    def _read(self, name: str, at: int, size: int) -> bytes:
        """``size`` bytes at byte ``at`` of a column, read in place (no whole-column load, no
        checksum: only for values that the re-read of the session file confirms)."""
        assert self.db is not None
        lengths = self.meta["parts"].get(name, [])
        part = 0
        while part < len(lengths) and at >= lengths[part]:
            at -= lengths[part]
            part += 1
        if part == len(lengths):
            raise CorruptIndex(f"column {name} has no byte {at}")
        if at + size > lengths[part]:
            raise CorruptIndex(f"a value of column {name} crosses its part")
        blob = self._blobs.get((name, part))
        if blob is None:
            row = self.db.execute(
                "SELECT rowid FROM parts WHERE name = ? AND part = ?", (name, part)
            ).fetchone()
            if row is None:
                raise CorruptIndex(f"column {name} lost a part")
            # Kept open for the call: SQLite then reaches later offsets without re-walking.
            blob = self._blobs[name, part] = self.db.blobopen(
                "parts", "data", row[0], readonly=True
            )
        blob.seek(at)
        data = blob.read(size)
        if len(data) != size:
            raise CorruptIndex(f"column {name} is shorter than its metadata says")
        return data

    def _value(self, name: str, index: int) -> int:
        """One value of an array column (from the loaded column if this call has it)."""
        column = self._columns.get(name)
        if column is not None:
            value: int = column[index]
            return value
        code = _ARRAYS[name]
        width = array(code).itemsize
        return int(array(code, self._read(name, index * width, width))[0])

    def _string(self, name: str, index: int) -> str:
        """One string of a string table, read in place."""
        column = self._columns.get(name)
        if column is not None:
            text: str = column[index]
            return text
        (start,) = array("q", self._read(name + ".o", index * 8, 8))
        if (index + 1) * 8 < self.meta["sizes"].get(name + ".o", 0):
            (end,) = array("q", self._read(name + ".o", (index + 1) * 8, 8))
        else:
            end = self.meta["sizes"].get(name + ".d", 0)
        if not 0 < start < end:
            raise CorruptIndex(f"string {index} of {name} has a bad offset")
        data = self._read(name + ".d", start, end - 1 - start)
        try:
            # Read in place, unchecked by the part's CRC: damaged bytes must not escape as
            # a decoding error (the call then answers from the file and the index is rebuilt).
            return data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise CorruptIndex(f"string {index} of {name} is not UTF-8") from exc

    def _array(self, name: str) -> array[int]:
        column = self._columns.get(name)
        if column is None:
            column = array(_ARRAYS[name])
            try:
                column.frombytes(self._blob(name))
            except ValueError as exc:
                raise CorruptIndex(f"column {name} is not a whole number of values") from exc
            self._columns[name] = column
        result: array[int] = column
        return result

    def _strings(self, name: str) -> Strings:
        column = self._columns.get(name)
        if column is None:
            offsets = array("q")
            try:
                offsets.frombytes(self._blob(name + ".o"))
            except ValueError as exc:
                raise CorruptIndex(f"column {name} is not a whole number of values") from exc
            column = Strings(offsets, self._blob(name + ".d"))
            self._columns[name] = column
        result: Strings = column
        return result

    def _expect(self, name: str, count: int) -> None:
        got = len(self._array(name))
        if got != count:
            raise CorruptIndex(f"column {name} holds {got} values, not {count}")


def _content_file(directory: Path, meta: dict[str, Any]) -> Path:
    generation = str(meta["generation"])
    if not generation.isalnum():
        raise CorruptIndex("bad content generation")
    return directory / f"content-{generation}.bin"


def _state(meta: dict[str, Any]) -> tuple[Any, ...]:
    """What changes when the index does: its generation, indexed end and digest."""
    return meta.get("generation"), meta.get("end"), meta.get("digest"), meta.get("seen")


def _meta(db: sqlite3.Connection) -> dict[str, Any] | None:
    try:
        rows = db.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.OperationalError:
        return None
    try:
        meta = {key: json.loads(value) for key, value in rows}
    except (ValueError, TypeError):  # not JSON (or not text): not our metadata
        return None
    if any(type(meta.get(key)) is not kind for key, kind in _META_TYPES.items()):
        return None
    return meta


_META_TYPES: dict[str, type] = {
    "schema": int,
    "source": str,
    "dev": int,
    "ino": int,
    "end": int,
    "digest": str,
    "generation": str,
    "committed": int,
    "entries": int,
    "items": int,
    "pending": bool,
    "sizes": dict,
    "parts": dict,
}
"""What each stored metadata value must be; anything else is not an index to answer from
(checksums guard the columns, not this table)."""


def _store_meta(db: sqlite3.Connection, meta: dict[str, Any]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(key, json.dumps(value)) for key, value in meta.items()],
    )
