"""Packed columns for the history index: string tables and checksummed parts.

A column is a byte string stored in SQLite as parts: each append adds a part with its CRC-32,
and a column with too many parts is merged into one, so an append writes only what is new and a
reader checks every part it loads. A string table is two columns: the strings as UTF-8, each
after a newline (the data starts with one), and the offset where each starts.
"""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from operator import add

from pi_context.support.sqlite import sqlite3

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

MAX_PARTS = 16  # a column with more parts than this is merged into one on the next append


class Strings:
    """Strings packed as UTF-8, each preceded and followed by a newline, with their offsets:
    a lookup is a byte search confirmed by the offsets, so no dict of every id is ever built."""

    def __init__(self, offsets: array[int], data: bytes) -> None:
        self.offsets = offsets  # start of each string in ``data``
        self.data = data

    def __len__(self) -> int:
        return len(self.offsets)

    def _end(self, index: int) -> int:
        offsets = self.offsets
        return (offsets[index + 1] if index + 1 < len(offsets) else len(self.data)) - 1

    def __getitem__(self, index: int) -> str:
        return _text(self.data[self.offsets[index] : self._end(index)])

    def positions(self, text: str, last: bool = False) -> list[int]:
        """Indexes holding exactly ``text`` (ascending; only the last one with ``last``)."""
        needle = b"\n" + text.encode("utf-8", "surrogatepass") + b"\n"
        data, offsets = self.data, self.offsets
        found: list[int] = []
        at = data.rfind(needle) if last else data.find(needle)
        while at >= 0:
            index = bisect_right(offsets, at + 1) - 1
            if index >= 0 and offsets[index] == at + 1 and self._end(index) == at + len(needle) - 1:
                found.append(index)
                if last:
                    return found
            # A string holding a newline can fake a boundary: look on, one byte further.
            at = data.rfind(needle, 0, at + len(needle) - 1) if last else data.find(needle, at + 1)
        return found

    def all(self) -> list[str]:
        if not self.offsets:
            return []
        text = _text(self.data[1:-1])
        values = text.split("\n")
        if len(values) == len(self.offsets):
            return values
        return [self[i] for i in range(len(self.offsets))]  # some string holds a newline


class CorruptIndex(Exception):
    """The cache disagrees with itself or with the session file: rebuild it."""


def _text(data: bytes) -> str:
    """Stored string bytes as text; bytes that are not what ``pack_strings`` wrote (a
    forged part, or damage its checksum could not see) make the index corrupt."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise CorruptIndex("a string table is not UTF-8") from exc


def pack_strings(values: Sequence[str], base: int) -> tuple[bytes, bytes]:
    """(offsets, data) for ``values`` appended to a table whose data is ``base`` bytes long."""
    if base == 0:
        prefix, base = b"\n", 1
    else:
        prefix = b""
    text = "\n".join(values)
    end = b"\n" if values else b""
    if text.isascii():
        data = prefix + text.encode("ascii") + end
        lengths = list(map(len, values))
    else:
        encoded = [value.encode("utf-8", "surrogatepass") for value in values]
        data = prefix + b"\n".join(encoded) + end
        lengths = list(map(len, encoded))
    # Each string starts after the ones before it and their newlines.
    starts: Iterable[int]
    if lengths and min(lengths) == max(lengths):  # ids, stamps: one width
        width = lengths[0] + 1
        starts = range(base, base + width * len(lengths), width)
    else:
        starts = map(add, accumulate(lengths, initial=base), range(len(lengths)))
    offsets = array("q", starts)
    return offsets.tobytes(), data


def checksums(data: bytes, values: Sequence[str], first: bool) -> list[int]:
    """CRC-32 of each string of a packed table part (``data`` as ``pack_strings`` made it;
    ``first``: the table's first part, which starts with the leading newline)."""
    pieces = data.split(b"\n")
    pieces = pieces[1:-1] if first else pieces[:-1]
    if len(pieces) != len(values):  # a string holds a newline: encode one by one
        pieces = [value.encode("utf-8", "surrogatepass") for value in values]
    return list(map(zlib.crc32, pieces))


def add_part(db: sqlite3.Connection, meta: dict[str, Any], name: str, data: bytes) -> None:
    """Append ``data`` to column ``name`` as a new part; too many parts are merged into one."""
    if not data:
        return
    lengths = list(meta["parts"].get(name, []))
    meta["sizes"][name] = int(meta["sizes"].get(name, 0)) + len(data)
    if len(lengths) >= MAX_PARTS:
        rows = db.execute("SELECT data FROM parts WHERE name = ? ORDER BY part", (name,)).fetchall()
        merged = b"".join(row[0] for row in rows) + data
        if name == "e_keys":  # a sorted column stays sorted
            merged = array("I", sorted(array("I", merged))).tobytes()
        db.execute("DELETE FROM parts WHERE name = ?", (name,))
        db.execute("INSERT INTO parts VALUES (?, 0, ?, ?)", (name, merged, zlib.crc32(merged)))
        meta["parts"][name] = [len(merged)]
        return
    db.execute(
        "INSERT INTO parts VALUES (?, ?, ?, ?)", (name, len(lengths), data, zlib.crc32(data))
    )
    meta["parts"][name] = [*lengths, len(data)]


def put_whole(db: sqlite3.Connection, meta: dict[str, Any], name: str, data: bytes) -> None:
    db.execute("DELETE FROM parts WHERE name = ?", (name,))
    db.execute("INSERT INTO parts VALUES (?, 0, ?, ?)", (name, data, zlib.crc32(data)))
    meta["parts"][name] = [len(data)]
    meta["sizes"][name] = len(data)
