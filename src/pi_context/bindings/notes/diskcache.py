"""A per-home file of parsed notes that outlives the process, so a fresh CLI call or a new
host does not re-read and re-parse every note.

It lives in the cache directory (``$PI_CONTEXT_CACHE_DIR``, else ``$XDG_CACHE_HOME/pi-context``,
else ``~/.cache/pi-context``), under ``notes/<hash of the home's path>.bin``; deleting it only
costs a rebuild. ``PI_CONTEXT_NOTES_CACHE=0`` turns it off. A cache directory inside the notes
root is never used: the cache must never write into a home.

It is derived data and never trusted on its own:

* each row carries the file's stamp (device, inode, size, mtime, ctime, link count); the store
  uses a row only when the stamp its directory walk just saw is identical. ``ctime`` cannot be
  set by ``utime``, so a rewrite in place with the same size and a forged mtime still differs;
  a row is written only for a file untouched for ``SETTLE_NS`` (two writes inside one
  timestamp tick cannot look alike);
* the file is sealed: a magic, a version, section lengths, a CRC of each section and one of
  each body. A short, foreign or damaged file is ignored (and replaced by the next write),
  never half-used. Bodies are read only when used (a listing needs none, a boot a few): the
  rows keep the file open, so a body comes from the very version its row came from even after
  a rename replaced the file, and a body whose CRC fails is never returned.

Folder listings: the walk must also see notes added, removed or renamed, which it learns by
listing each folder. A folder's listing changes only together with the folder's own stamp
(creating, removing or renaming a name updates its mtime and ctime), so the file also keeps, per
folder, its stamp taken before it was listed and the names the walk kept (sub-folders, note
files). A later walk that finds the folder with exactly that stamp reuses the names instead of
listing it again; each note is still ``stat``-ed and matched to its row. A listing is stored
only for a folder untouched for ``SETTLE_NS``, as rows are.

Layout: a fixed header; the meta section (an int64 array, column after column; the byte length
of each text column; then each text column as NUL-terminated UTF-8 texts: path, origin, status,
header, ...); the bodies as UTF-8, back to back. Columns are decoded only when used: a listing
needs the paths, stamps and times of every row and the rest only for the rows it shows.
Then the listings section (an int64 array of the folders' stamps, column after column; the
byte length of each text column; the sub-folder names and the note names of each folder, each
folder's names joined by ``/`` and NUL-terminated). Rows whose texts hold a NUL are simply not
stored. The file is replaced atomically (a temp file
in the same folder, then ``rename``), so readers see one whole version.

This module is the format, where the file lives and how it is read (``load``, ``Rows``);
``diskcache_save.py`` writes it.
"""

from __future__ import annotations

import operator
import os
import struct
import sys
import weakref
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path

import pi_context.support.cache as cache
from pi_context.bindings.notes.cache import Entry, Stamp
from pi_context.bindings.notes.frontmatter import NoteMeta
from pi_context.support.cache_dir import cache_root
from pi_context.support.regular import open_regular

ENABLE_ENV = "PI_CONTEXT_NOTES_CACHE"

MAGIC = b"PINOTEC1"
VERSION = 4
# magic, version, rules, rows, meta bytes, body bytes, a CRC of each, then folders, listing
# bytes and their CRC
_HEADER = struct.Struct("<8sIIIQQIIIQI")
INT_COLUMNS = (
    "dev",
    "ino",
    "size",
    "mtime_ns",
    "ctime_ns",
    "nlink",
    "stale",
    "created_at",
    "updated_at",
    "last_accessed",
    "access_count",
    "size_bytes",
    "has_frontmatter",
    "extra_count",
    "addressable",
    "body_start",
    "body_end",
    "body_crc",
)
TEXT_COLUMNS = ("path", "origin", "status", "header", "legacy_keys", "malformed", "extra_lines")
"""Tuples of names or lines are stored joined by newlines (no line holds one)."""
LISTING_TEXT_COLUMNS = ("folders", "notes")
"""Per folder: its sub-folder names and its note file names, as the walk kept them."""
_LITTLE = sys.byteorder == "little"
SCAN_CHUNK = 1 << 20
"""Bytes of bodies read at a time by a search that did not load them."""
_START, _END = INT_COLUMNS.index("body_start"), INT_COLUMNS.index("body_end")
_CRC = INT_COLUMNS.index("body_crc")
_rules: int | None = None


def rules() -> int:
    """A fingerprint of the path rules (the ``address`` and ``note_address`` modules' source):
    a cache written under other rules is not used, since each row records whether its path
    was addressable."""
    global _rules
    if _rules is None:
        from pi_context.bindings.notes import address, note_address

        try:
            sources = Path(address.__file__).read_bytes(), Path(note_address.__file__).read_bytes()
            _rules = zlib.crc32(b"\0".join(sources))
        except (OSError, TypeError):
            _rules = 0  # unknown rules: a cache is then never reused across processes
    return _rules


def cache_file(notes_root: Path, home: str) -> Path | None:
    """Where the cache of ``home`` lives, or ``None`` when the disk cache must not be used."""
    if os.environ.get(ENABLE_ENV, "1") == "0":
        return None
    folder = cache_root() / "notes"
    try:
        real_folder = os.path.realpath(folder)
        real_root = os.path.realpath(notes_root)
        inside = os.path.commonpath([real_folder, real_root]) == real_root
    except (OSError, ValueError):
        return None
    if inside:
        return None  # a cache file there would sit in a home, or be listed as one
    cache.prune_if_due()
    try:
        cache.private_dir(folder)  # never a folder another user made or may write
    except OSError:
        return None
    return folder / f"{cache.key_of(os.path.abspath(home))}.bin"


class Rows:
    """The rows of one cache file, decoded column by column; an entry is built on request."""

    def __init__(
        self,
        count: int,
        ints: Sequence[int],
        blocks: list[memoryview],
        bodies: bytes | None,
        source: tuple[int, int] | None = None,
        listings: tuple[int, Sequence[int], list[memoryview]] | None = None,
        body_check: tuple[int, int] | None = None,
    ) -> None:
        self.count = count
        self._body_check = body_check
        """(length, CRC) of the bodies section when it was not read."""
        self._listings = listings
        """(folders, their stamp columns, their name blocks), decoded on first use."""
        self._folder_index: dict[tuple[int, int], int] | None = None
        self._folder_names: list[list[str]] = []
        self._source = source
        """(open descriptor of the cache file, offset of its bodies) when the bodies were not
        read: one is read on request, from the very file version these rows came from (the
        file is only ever replaced by a rename, never rewritten in place)."""
        if source is not None:
            weakref.finalize(self, os.close, source[0])
        n = count
        # Integer columns stay packed (views); text columns are decoded on first use. A
        # listing or a snapshot reads only the columns of the rows it shows.
        self._ints = [ints[k * n : (k + 1) * n] for k in range(len(INT_COLUMNS))]
        self._blocks = blocks
        self._decoded: list[list[str] | None] = [None] * len(TEXT_COLUMNS)
        self._bodies = bodies
        self.paths = self._column(0)
        self.index = dict(zip(self.paths, range(n), strict=True))
        self.stamp_columns = self._ints[:6]
        """device, inode, size, mtime, ctime, link count: a walk compares them field by field."""
        self.updated_at = self._ints[8]
        legacy = self._column(4)
        self.usable = [bool(a) and not b for a, b in zip(self._ints[14], legacy, strict=True)]
        """Per row: an addressable note without legacy metadata (else the store refuses it)."""

    def _column(self, k: int) -> list[str]:
        """Text column ``k`` (its texts were counted when the file was loaded)."""
        found = self._decoded[k]
        if found is None:
            found = _text(self._blocks[k]).split("\0")[:-1]
            self._decoded[k] = found
        return found

    def listing(self, stamp: Stamp) -> tuple[list[str], list[str]] | None:
        """(sub-folder names, note names) stored for the folder with exactly ``stamp``."""
        index = self._folder_index
        if index is None:
            index = self._decode_listings()
        found = index.get((stamp[0], stamp[1]))
        if found is None or self._folder_stamps[found] != stamp:
            return None
        folders, notes = self._folder_names[0][found], self._folder_names[1][found]
        return (folders.split("/") if folders else []), (notes.split("/") if notes else [])

    def _decode_listings(self) -> dict[tuple[int, int], int]:
        index: dict[tuple[int, int], int] = {}
        self._folder_stamps: list[Stamp] = []
        if self._listings is not None:
            n, ints, blocks = self._listings
            columns = [ints[k * n : (k + 1) * n] for k in range(6)]
            self._folder_stamps = list(zip(*columns, strict=True))
            self._folder_names = [_text(block).split("\0")[:-1] for block in blocks]
            index = {(s[0], s[1]): k for k, s in enumerate(self._folder_stamps)}
        self._folder_index = index
        return index

    @property
    def has_bodies(self) -> bool:
        return self._bodies is not None

    def addressable(self, row: int) -> bool:
        return bool(self._ints[14][row])

    def legacy(self, row: int) -> bool:
        return self._column(4)[row] != ""

    def holding(self, literals: Sequence[str]) -> set[int] | None:
        """The rows whose body holds one of ``literals``; ``None`` if the bodies, read for
        this, do not match their checksum (a damaged file: none of its rows can be trusted).

        Bodies not loaded are read in chunks of ``SCAN_CHUNK`` and checked as they go: a
        fresh process pays for every page of memory it touches first, and reading the
        bodies of 10,000 notes whole cost more than searching them. UTF-8 is
        self-synchronizing, so a literal is in a decoded body exactly when its encoding is
        in the body's bytes; one that cannot be encoded is in no body.
        """
        needles: list[bytes] = []
        for literal in literals:
            try:
                needle = literal.encode("utf-8")
            except UnicodeEncodeError:
                continue
            if not needle:
                return set(range(self.count))  # every body is built, and checked, anyway
            needles.append(needle)
        found: set[int] = set()
        if self._bodies is not None:
            self._find(self._bodies, len(self._bodies), 0, needles, found)
            return found
        if self._source is None or self._body_check is None:
            return None
        fd, offset = self._source
        total, expected = self._body_check
        keep = max((len(needle) for needle in needles), default=1) - 1
        # One buffer for the whole scan (fresh memory is what costs): the previous chunk's
        # last ``keep`` bytes, then the next chunk (a match may straddle the two).
        buffer = bytearray(keep + min(SCAN_CHUNK, total))
        view = memoryview(buffer)
        kept, done, running = 0, 0, 0
        try:
            while done < total:
                wanted = min(SCAN_CHUNK, total - done)
                got = _read_into(fd, view[kept : kept + wanted], offset + done)
                if got <= 0:
                    return None
                running = zlib.crc32(view[kept : kept + got], running)
                end = kept + got
                self._find(buffer, end, done - kept, needles, found)
                done += got
                carried = min(keep, end)
                buffer[:carried] = view[end - carried : end]
                kept = carried
        except (OSError, OverflowError):
            return None
        finally:
            view.release()
        return found if running == expected else None

    def _find(
        self,
        blob: bytes | bytearray,
        end: int,
        base: int,
        needles: list[bytes],
        found: set[int],
    ) -> None:
        """Add to ``found`` the rows holding a needle inside ``blob[:end]`` (which starts at
        body offset ``base``)."""
        starts, ends = self._ints[_START], self._ints[_END]
        for needle in needles:
            position = blob.find(needle, 0, end)
            while position != -1:
                at = base + position
                # The last row starting at or before the match (empty bodies share a start).
                row = bisect_right(starts, at) - 1
                if row >= 0 and at + len(needle) <= ends[row]:
                    found.add(row)
                    position = blob.find(needle, max(ends[row] - base, position + 1), end)
                else:
                    position = blob.find(needle, position + 1, end)

    def stamp(self, row: int) -> Stamp:
        dev, ino, size, mtime, ctime, nlink = self.stamp_columns
        return (dev[row], ino[row], size[row], mtime[row], ctime[row], nlink[row])

    def matching(self, path: str, stamp: Stamp) -> int | None:
        """The row of ``path`` if it was stored with exactly ``stamp``."""
        row = self.index.get(path)
        if row is None or self.stamp(row) != stamp:
            return None
        return row

    def meta(self, row: int) -> NoteMeta:
        i, origin, status = self._ints, self._column(1), self._column(2)
        return NoteMeta.stored(
            origin[row], bool(i[6][row]), i[7][row], i[8][row], i[9][row], i[10][row], status[row]
        )

    def updated_of(self, rows: Sequence[int]) -> list[int]:
        """``[self.meta(row).updated_at for row in rows]``, without building metadata."""
        column = self.updated_at
        return [column[row] for row in rows]

    def stale_of(self, rows: Sequence[int]) -> list[bool]:
        """``[self.meta(row).stale for row in rows]``, without building metadata."""
        column = self._ints[6]
        return [column[row] != 0 for row in rows]

    def extra_lines(self, row: int) -> tuple[str, ...]:
        """Row ``row``'s metadata lines this layer does not interpret, as stored."""
        if not self._ints[13][row]:
            return ()
        return tuple(self._column(6)[row].split("\n"))

    def body_sizes(self, rows: Sequence[int]) -> list[int]:
        """``[self.body_bytes(row) for row in rows]``."""
        starts, ends = self._ints[_START], self._ints[_END]
        return [ends[row] - starts[row] for row in rows]

    def size_bytes(self, row: int) -> int:
        """UTF-8 bytes after the metadata block (what a listing reports)."""
        size: int = self._ints[11][row]
        return size

    def body_bytes(self, row: int) -> int:
        """UTF-8 bytes of the stored body (equal to ``len(body.encode())``)."""
        return int(self._ints[_END][row] - self._ints[_START][row])

    def body_of(self, row: int) -> str | None:
        """Row ``row``'s body, read and decoded only when asked for; ``None`` if its bytes
        do not match the checksum stored with the row (a damaged cache file)."""
        start, end = self._ints[_START][row], self._ints[_END][row]
        if self._bodies is not None:
            data = self._bodies[start:end]
        else:
            if self._source is None:
                return None
            fd, offset = self._source
            try:
                data = os.pread(fd, end - start, offset + start)
            except (OSError, OverflowError, ValueError):  # ValueError: a forged, negative span
                return None
            if len(data) != end - start or zlib.crc32(data) != self._ints[_CRC][row]:
                return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def entry(self, row: int, *, body: bool = True) -> Entry | None:
        """Row ``row`` as a cache entry (with its body if ``body``); ``None`` if damaged."""
        i, t = self._ints, self._column
        text = None
        if body:
            text = self.body_of(row)
            if text is None:
                return None
        meta = self.meta(row)
        legacy, malformed, extra = t(4)[row], t(5)[row], t(6)[row]
        entry = Entry(
            self.stamp(row),
            meta,
            i[11][row],
            t(3)[row],
            bool(i[12][row]),
            tuple(legacy.split("\n")) if legacy else (),
            tuple(malformed.split("\n")) if malformed else (),
            tuple(extra.split("\n")) if i[13][row] else (),
            text,
        )
        entry.storable = True
        entry.addressable = bool(i[14][row])
        return entry


def _read_into(fd: int, target: memoryview, offset: int) -> int:
    """Bytes read from ``fd`` at ``offset`` into ``target`` (no new buffer where the system
    has ``preadv``)."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [target], offset)
    data = os.pread(fd, len(target), offset)
    target[: len(data)] = data
    return len(data)


def _text(block: memoryview) -> str:
    """A text block as written (UTF-8, lone surrogates passed through). A block that is not
    (only a forged file whose checksums still match can hold one) decodes with replacement
    characters: never an exception, and a NUL count that stays right."""
    try:
        return str(block, "utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return str(block, "utf-8", "replace")


_LENGTHS = struct.Struct(f"<{len(TEXT_COLUMNS)}Q")
"""Byte length of each text column's block (the blocks follow, in column order)."""
_LISTING_LENGTHS = struct.Struct(f"<{len(LISTING_TEXT_COLUMNS)}Q")


def _blocks(
    data: bytes, start: int, end: int, count: int, lengths_of: struct.Struct = _LENGTHS
) -> list[memoryview] | None:
    """Views of the text columns' blocks in ``data[start:end]``, each ``count``
    NUL-terminated texts; ``None`` if not."""
    if end - start < lengths_of.size:
        return None
    lengths = lengths_of.unpack_from(data, start)
    if sum(lengths) != end - start - lengths_of.size:
        return None
    blocks: list[memoryview] = []
    offset = start + lengths_of.size
    view = memoryview(data)
    for length in lengths:
        stop = offset + length
        if data.count(b"\0", offset, stop) != count or (count and data[stop - 1] != 0):
            return None
        blocks.append(view[offset:stop])  # decoded when used (see ``_text``)
        offset = stop
    return blocks


_loaded: dict[str, tuple[tuple[int, ...], Rows]] = {}
"""The last rows decoded from each cache file in this process, keyed by the file's identity:
the file is only ever replaced by a rename, so the same identity means the same bytes."""


def loaded_before(file: Path) -> bool:
    """Whether this process has read ``file``'s rows already (a long-lived host)."""
    return str(file) in _loaded


def load(file: Path, *, bodies: bool) -> Rows | None:
    """The cache's rows, or ``None`` when it is absent, foreign or damaged in any way."""
    try:
        fd, info = open_regular(file, os.O_RDONLY | os.O_NOFOLLOW)  # never a FIFO or device
    except OSError:
        return None
    rows: Rows | None = None
    try:
        identity = (
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            rules(),
        )
        known = _loaded.get(str(file))
        if known is not None and known[0] == identity and (known[1].has_bodies or not bodies):
            return known[1]
        rows = _read(fd, info.st_size, bodies)
    except (OSError, OverflowError, MemoryError):
        rows = None
    finally:
        if rows is None or rows.has_bodies:
            os.close(fd)  # else the rows own it, to read bodies on request
    if rows is None:
        _loaded.pop(str(file), None)
    else:
        _loaded[str(file)] = (identity, rows)
    return rows


def _read(fd: int, file_size: int, bodies: bool) -> Rows | None:
    head = os.pread(fd, _HEADER.size, 0)
    if len(head) != _HEADER.size:
        return None
    magic, version, made_under, count, meta_len, body_len, meta_crc, body_crc, *listed = (
        _HEADER.unpack(head)
    )
    folders, listing_len, listing_crc = listed
    if magic != MAGIC or version != VERSION or made_under != rules() or rules() == 0:
        return None
    if file_size != _HEADER.size + meta_len + listing_len + body_len:
        return None
    # One read for both sections; columns are views into it, never copies (a fresh
    # process pays for each page of memory it touches first).
    both = os.pread(fd, meta_len + listing_len, _HEADER.size)
    if len(both) != meta_len + listing_len:
        return None
    view = memoryview(both)
    if zlib.crc32(view[:meta_len]) != meta_crc or zlib.crc32(view[meta_len:]) != listing_crc:
        return None
    body_offset = _HEADER.size + meta_len + listing_len
    body_data = None
    if bodies:
        body_data = os.pread(fd, body_len, body_offset)
        if len(body_data) != body_len or zlib.crc32(body_data) != body_crc:
            return None
    int_bytes = 8 * count * len(INT_COLUMNS)
    if int_bytes > meta_len:
        return None
    ints = _int_columns(both, 0, int_bytes)
    texts = _blocks(both, int_bytes, meta_len, count)
    if texts is None:
        return None
    starts = ints[_START * count : (_START + 1) * count]
    ends = ints[_END * count : (_END + 1) * count]
    if count and not _back_to_back(starts, ends, body_len):
        return None
    folder_bytes = 8 * folders * 6
    if folder_bytes > listing_len:
        return None
    folder_ints = _int_columns(both, meta_len, folder_bytes)
    names = _blocks(both, meta_len + folder_bytes, len(both), folders, _LISTING_LENGTHS)
    if names is None:
        return None
    return Rows(
        count,
        ints,
        texts,
        body_data,
        None if bodies else (fd, body_offset),
        (folders, folder_ints, names),
        None if bodies else (body_len, body_crc),
    )


def _back_to_back(starts: Sequence[int], ends: Sequence[int], total: int) -> bool:
    """Whether the bodies' spans tile ``[0, total)`` in row order, as ``save`` writes them
    (a forged span could otherwise run backwards or overlap another row's body)."""
    return (
        starts[0] == 0
        and ends[-1] == total
        and starts[1:] == ends[:-1]
        and all(map(operator.le, starts, ends))
    )


def _int_columns(data: bytes, start: int, size: int) -> Sequence[int]:
    """The int64s of ``data[start:start + size]`` (little-endian on disk): a view where the
    machine is little-endian, else a swapped copy."""
    if _LITTLE:
        return memoryview(data)[start : start + size].cast("q")
    ints = array("q")
    ints.frombytes(data[start : start + size])
    ints.byteswap()
    return ints
