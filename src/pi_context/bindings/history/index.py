"""A persistent, incremental index of a session file's history items that can never be stale.

One cache directory per session file (``<cache>/history/<hash of the real path>/``) holds an
SQLite database and an append-only ``content-<generation>.bin`` with every item's text, back to
back, as UTF-8. The database holds the metadata and packed columns: one value per entry (line
offset and length, first item, flags, id, parent, marker, timestamp) or per item (content
offset, role, length, tool, id), each column stored as parts that appends add to, every part
with its own checksum, plus the selected branch's projection. Packed columns (not one row per
entry) make a cold build cost about one pass over the file. The cache is derived data: deleting
it, or any part of it, only costs a rebuild.

Every call checks the index against the file before answering (``open_view``):

* the file's identity (device, inode) and real path must match, and its size must not be below
  the indexed end. When its ``stat`` is not exactly the snapshot taken at the last check (or that
  snapshot is too recent to vouch for it; ``scan.py``), every indexed byte is hashed again and
  must match the stored digest: an edit anywhere, of any length, is seen. Anything else - a
  rewrite, truncation, migration, a swapped file - throws the index away and rebuilds it;
* bytes past the indexed end are indexed incrementally, complete lines only. An unterminated
  last line is treated as the loader treats it: skipped when it does not parse; when it does
  parse, this call is answered without the index (the loader would include it);
* files the index does not model (no header, a version that needs migration, an unreadable
  cache) are answered by the unindexed path, so answers are the loader's in every case.

A call reads the database inside one read transaction, so it sees one consistent state even
while another process appends. Updates take the cache directory's lock; a call never waits for
it longer than ``LOCK_WAIT`` (a stopped or hung holder) and answers unindexed instead. Only a
regular file is read as the session, and a cache file that is not a regular file (a FIFO, a
device) discards the cache. The index never answers with its own copy of an item: delivered
items are re-read from the session file at their recorded byte offset and re-projected
(``item``); a mismatch means the cache is corrupt, and it is rebuilt. The content file only
finds search candidates. A branch other than the file's own leaf is projected from the entry
columns on each call.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import shutil
import sqlite3
import time
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

import pi_context.cache as cache
from pi_context.bindings.session.jsonl import (
    FAST_DECODE,
    FAST_DECODE_ERRORS,
    JSONLineError,
    js_trim,
    js_truthy,
    parse,
)
from pi_context.bindings.session.migrate import needs_migration
from pi_context.bindings.session.store import SKIPPED, is_header, parse_chunk
from pi_context.bindings.session.windows import (
    BOOT_TYPE,
    RESET_MARKER_TYPE,
    is_reset_marker,
    marker_window_id,
    names_fork_safe_window,
    names_upstream_window,
    root_id_in_format,
)
from pi_context.cache_dir import cache_root
from pi_context.locking import LockTimeout, flock_within
from pi_context.regular import NotRegularFile, open_regular, special_entry

from .columns import CorruptIndex, Strings, add_part, checksums, pack_strings, put_whole
from .items import ITEM_ENTRY_TYPES, ROLES, Item, entry_items
from .lines import DECODE_ENTRY, ROLE_CODES, entry_line, entry_rows
from .scan import Digest, chunks, snapshot, unchanged

SCHEMA = 7  # 7: a digest of every indexed byte (6: both window namings flagged; 5: packed
# columns in checksummed parts)
LOCK_WAIT = 1.0  # seconds a call waits for another process's update before answering unindexed
BIG_TEXT = 1 << 22  # an item's text longer than this is written to the content file in pieces
_CACHE_FILES = ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "lock")
_DEVELOPER = ROLE_CODES["developer"]
_SYSTEM = ROLE_CODES["system"]
_FLIP, _UPSTREAM, _STAMP, _WHOLE = 1, 2, 4, 8  # entry flag bits (_STAMP: the timestamp is a
# string; _UPSTREAM, _WHOLE: the session's own boot or marker in the extension's window naming,
# or in the fork-safe whole-id naming)
DISABLE_ENV = "PI_CONTEXT_HISTORY_INDEX"  # "0" answers every call without the index

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
    "e_keys": "I",  # CRC-32 of every id and parent, each part sorted (a membership filter)
}
_STRINGS = ("e_id", "e_parent", "e_marker", "e_stamp", "i_id", "t_name")


class Unindexable(Exception):
    """This call must be answered by the unindexed path (the loader decides everything)."""


def index_enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def cache_dir_for(source: Path) -> Path:
    return cache_root() / "history" / cache.key_of(os.fspath(source))


# --- the branch as the index sees it ------------------------------------------------------------


@dataclass
class View:
    """The selected branch: its items (index numbers) in branch order, their roles, windows."""

    leaf_seq: int  # -1: the empty branch
    positions: array[int]  # item numbers in branch order
    roles: bytearray  # role code per position
    windows: list[tuple[str, str | None, str | None, int]]  # id, created_at, marker id, start
    ascending: bool = True  # positions in file order (the usual case): bisect finds an item
    naming: int = 0  # the session's own window naming seen so far: _NAMING_* (decides the root)

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


@dataclass
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


# --- the index -----------------------------------------------------------------------------------


class HistoryIndex:
    """One session file's SQLite history index (the history tools'); use as a context
    manager, ``open_view`` per call. The handoff's in-memory search over a branch's records
    is ``bindings.handoff.history.RecordSearch``."""

    def __init__(self, source: Path, cache: Path | None = None) -> None:
        self.source = Path(os.path.realpath(source))
        self.directory = cache if cache is not None else cache_dir_for(self.source)
        self.db: sqlite3.Connection | None = None
        self._content: mmap.mmap | None = None
        self._columns: dict[str, Any] = {}
        self._blobs: dict[tuple[str, int], sqlite3.Blob] = {}
        self.meta: dict[str, Any] = {}
        self.session_id = ""
        self.file_view: View | None = None

    # -- lifecycle

    def __enter__(self) -> HistoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._columns = {}
        self._close_blobs()
        if self._content is not None:
            self._content.close()
            self._content = None
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
            self.db.close()
            self.db = None

    def _close_blobs(self) -> None:
        for blob in self._blobs.values():
            with contextlib.suppress(sqlite3.Error):
                blob.close()
        self._blobs = {}

    def _connect(self) -> sqlite3.Connection:
        cache.prune_if_due()
        cache.private_dir(self.directory)
        for name in _CACHE_FILES:  # SQLite would open a FIFO planted here, and wait on it
            kind = special_entry(self.directory / name)
            if kind is not None:
                raise CorruptIndex(f"the cache file {name} is {kind}")
        path = self.directory / "index.sqlite"
        # Created 0600 here: SQLite gives its -wal and -shm files the database's mode.
        fd, _info = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        db = sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")  # a cache: a crash costs a rebuild, never an answer
        return db

    def discard(self) -> None:
        """Throw the cache away (it is only derived data)."""
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Updates take the directory's lock, waiting at most ``LOCK_WAIT``: a holder that
        takes longer (stopped, hung) gets this call answered unindexed instead."""
        cache.private_dir(self.directory)
        fd, _info = open_regular(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                flock_within(fd, LOCK_WAIT, "the history index's lock")
            except LockTimeout as exc:
                raise Unindexable(str(exc)) from None
            yield
        finally:
            os.close(fd)

    # -- validation and update

    def open_view(self, leaf_id: str | None) -> View:
        """The view for ``leaf_id`` (None: the file's leaf), the index brought up to date."""
        for attempt in range(3):
            try:
                return self._open_view(leaf_id)
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):  # another process, past the wait
                    raise Unindexable(f"the history index is busy: {exc}") from exc
                self.discard()
                if attempt == 2:
                    raise Unindexable(f"cannot build the history index: {exc}") from exc
            except (CorruptIndex, sqlite3.DatabaseError, OSError, ValueError, KeyError) as exc:
                if isinstance(exc, FileNotFoundError) and not self.source.exists():
                    self.discard()  # its text must not outlive it
                    raise Unindexable("the session file is gone") from exc
                self.discard()
                if attempt == 2:
                    raise Unindexable(f"cannot build the history index: {exc}") from exc
        raise AssertionError("unreachable")

    def _open_view(self, leaf_id: str | None) -> View:
        try:
            fd, stat = open_regular(self.source)
        except NotRegularFile as exc:  # the loader names it (a cache file is discarded)
            raise Unindexable(f"the session is {exc.kind}") from exc
        try:
            taken_ns = time.time_ns()
            db = self.db = self.db or self._connect()
            meta = _meta(db)
            verdict = self._check(meta, stat, fd)
            if verdict is not True:
                with self._locked():
                    now = _meta(db)  # another process may have updated it meanwhile
                    if now is None or meta is None or _state(now) != _state(meta):
                        verdict = self._check(now, stat, fd)
                    if verdict is None:
                        self._rebuild(db, stat, fd, taken_ns)
                    elif verdict is not True:
                        assert now is not None
                        self._append(db, now, fd, verdict, snapshot(stat, taken_ns))
                    meta = _meta(db)
            if meta is None:
                raise CorruptIndex("no metadata after a rebuild")
            try:
                meta = self._snapshot(db, meta)
            except CorruptIndex:
                with self._locked():  # a writer may have been mid-update: look again, alone
                    meta = self._snapshot(db, meta)
        finally:
            os.close(fd)
        if meta["pending"]:
            raise Unindexable("an unterminated last line parses: the loader includes it")
        assert self.file_view is not None
        if leaf_id is None:
            return self.file_view
        seq = self._winner(leaf_id)
        if seq is None:
            raise Unindexable("unknown leaf: the loader names the error")
        if seq == self.file_view.leaf_seq:
            return self.file_view
        return self._build_view(seq, self._entries())

    def _check(self, meta: dict[str, Any] | None, stat: os.stat_result, fd: int) -> Any:
        """What the index is to the file: None (not its index: rebuild), True (the file is
        unchanged since the index last checked it), or the ``Digest`` of the indexed prefix,
        just read and found intact (the bytes past it, if any, are to be indexed)."""
        if meta is None or meta.get("schema") != SCHEMA or meta.get("source") != str(self.source):
            return None
        if (meta["dev"], meta["ino"]) != (stat.st_dev, stat.st_ino) or stat.st_size < meta["end"]:
            return None
        if not _content_file(self.directory, meta).exists():
            return None
        if unchanged(meta.get("seen"), stat):
            return True
        digest = Digest.of(fd, meta["end"])
        return digest if digest.hexdigest() == meta["digest"] else None

    def _snapshot(self, db: sqlite3.Connection, checked: dict[str, Any]) -> dict[str, Any]:
        """Open the read transaction this call answers from; load the file leaf's view."""
        self._close_blobs()
        if db.in_transaction:
            db.execute("ROLLBACK")
        self._columns = {}
        db.execute("BEGIN")
        meta = _meta(db)
        if meta is None or meta["generation"] != checked["generation"]:
            raise CorruptIndex("the index was rebuilt meanwhile")
        if meta["end"] < checked["end"]:
            raise CorruptIndex("the index went backwards")
        self.meta = meta
        self.session_id = meta["session_id"] or ""
        self.file_view = View.from_blob(self._blob("view"))
        self._map_content(meta)
        return meta

    # -- columns

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

    # -- building

    def _rebuild(
        self, db: sqlite3.Connection, stat: os.stat_result, fd: int, taken_ns: int
    ) -> None:
        # Recorded before it holds anything: pruned once this very file is gone.
        cache.record("history", self.directory, [cache.source_of(self.source, stat)])
        generation = os.urandom(6).hex()
        for old in self.directory.glob("content-*.bin"):
            old.unlink(missing_ok=True)  # readers holding a map keep their (unlinked) copy
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.executescript(
            """
            DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS parts;
            DROP TABLE IF EXISTS blobs; DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS items;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value);
            CREATE TABLE parts (name TEXT, part INTEGER, data BLOB, crc INTEGER,
                PRIMARY KEY (name, part));
            """
        )
        meta: dict[str, Any] = {
            "schema": SCHEMA,
            "source": str(self.source),
            "dev": stat.st_dev,
            "ino": stat.st_ino,
            "end": 0,
            "digest": Digest().hexdigest(),
            "generation": generation,
            "committed": 0,
            "entries": 0,
            "items": 0,
            "session_id": None,
            "pending": False,
            "sizes": {},
            "parts": {},
        }
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        content, _info = open_regular(_content_file(self.directory, meta), flags, 0o600)
        os.close(content)
        self.meta = meta
        self._columns = {}
        self.file_view = None
        self._append(db, meta, fd, Digest(), snapshot(stat, taken_ns))

    def _append(
        self,
        db: sqlite3.Connection,
        meta: dict[str, Any],
        fd: int,
        digest: Digest,
        seen: list[int],
    ) -> None:
        """Index the complete lines past ``meta['end']``; update the file leaf's view.

        ``digest`` is that of the indexed prefix, and goes on over the lines read here;
        ``seen`` is the file's snapshot taken before any of them was read."""
        self.meta = meta
        self._columns = {}
        start = meta["end"]
        roles = bytearray()
        new = _Entries(first=meta["entries"], roles=roles, item_base=meta["items"])
        offs, lens, item_lens, item_seqs = array("q"), array("q"), array("q"), array("q")
        nchars, tools = array("q"), array("I")
        item_ids: list[str] = []
        names = {name: code for code, name in enumerate(self._tool_names(meta), 1)}
        new_names: list[str] = []
        committed, num = meta["committed"], meta["items"]
        session_id: str | None = meta["session_id"]
        content_path = _content_file(self.directory, meta)
        offset = start
        tail = b""
        seq = new.first
        # The loop runs once per line of the file: its per-line work is kept to local names.
        add_id, add_parent, add_marker = new.ids.append, new.parents.append, new.markers.append
        add_stamp, add_flags, add_item0 = new.stamps.append, new.flags.append, new.item0.append
        add_off, add_len, add_role, add_chars = (
            offs.append,
            lens.append,
            roles.append,
            nchars.append,
        )
        add_item_id, add_item_seq, add_tool = item_ids.append, item_seqs.append, tools.append
        add_item_len = item_lens.append
        content_fd, held = open_regular(content_path, os.O_RDWR)
        stamp = meta.get("content_stamp")
        if stamp is not None and [held.st_size, held.st_mtime_ns, held.st_ino] != stamp:
            os.close(content_fd)  # written behind the index's back: never stamp it as ours
            raise CorruptIndex("the content file was changed behind the index's back")
        with os.fdopen(content_fd, "r+b") as out:
            out.seek(committed)
            for chunk, chunk_start, single in chunks(fd, start):
                if single:  # one long line, without its newline
                    lines = [chunk]
                    digest.update(chunk)
                    digest.update(b"\n")
                else:
                    cut = chunk.rfind(b"\n") + 1
                    if cut == 0:
                        tail = chunk
                        break
                    lines = chunk.split(b"\n")
                    lines.pop()  # after the last newline: nothing (chunks end at one)
                    digest.update(chunk)
                texts: list[bytes] = []
                add_text = texts.append
                offset = chunk_start
                for line in lines:
                    line_start = offset
                    offset += len(line) + 1
                    if session_id is None:
                        value = _parse(line)
                        if value is None:
                            continue
                        if not is_header(value) or needs_migration([value]):
                            raise Unindexable("no current header: the loader decides")
                        session_id = meta["session_id"] = value["id"]
                        continue
                    try:
                        entry = DECODE_ENTRY(line)
                    except FAST_DECODE_ERRORS:
                        value = _parse(line)
                        if type(value) is not dict:
                            continue
                        entry = entry_line(value)
                    kind = entry.type
                    entry_id = entry.id
                    if kind == "session" or type(entry_id) is not str or not entry_id:
                        continue
                    flags = 0
                    add_item0(num)
                    if type(kind) is str and kind in ITEM_ENTRY_TYPES:
                        for code, item_id, content, name in entry_rows(entry):
                            if len(content) > BIG_TEXT:  # in pieces: one copy, not two
                                out.writelines(texts)
                                texts.clear()
                                add_item_len(_write_text(out, content))
                            else:
                                text = content.encode("utf-8", "surrogatepass")
                                add_text(text)
                                add_item_len(len(text))
                            add_role(code)
                            add_chars(len(content))
                            add_item_id(item_id)
                            add_item_seq(seq)
                            if name is None:
                                add_tool(0)
                            else:
                                tool = names.get(name)
                                if tool is None:
                                    tool = names[name] = len(names) + 1
                                    new_names.append(name)
                                add_tool(tool)
                            if code == _SYSTEM and kind == "compaction":
                                flags |= _FLIP
                            num += 1
                    marker = ""
                    custom_type = entry.customType
                    if (kind == "custom" and custom_type == RESET_MARKER_TYPE) or (
                        kind == "custom_message" and custom_type == BOOT_TYPE
                    ):
                        # Only a marker or a boot can name a window: these few lines are read
                        # as the loader reads them, whole.
                        value = _parse(line)
                        if is_reset_marker(value):
                            marker = marker_window_id(value)
                        if marker or kind == "custom_message":
                            if names_upstream_window(value, session_id):
                                flags |= _UPSTREAM
                            elif names_fork_safe_window(value, session_id):
                                flags |= _WHOLE
                    parent = entry.parentId
                    stamp = entry.timestamp
                    if type(stamp) is str:
                        flags |= _STAMP
                    else:
                        stamp = ""
                    add_id(entry_id)
                    add_parent(parent if type(parent) is str else "")
                    add_marker(marker)
                    add_stamp(stamp)
                    add_flags(flags)
                    add_off(line_start)
                    add_len(len(line))
                    seq += 1
                out.writelines(texts)  # past the committed length: unseen until the commit
                del lines, texts
            out.truncate()
            out.flush()
            written = os.fstat(out.fileno())
        if session_id is None:
            raise Unindexable("no complete header line yet: the loader decides")
        committed += sum(item_lens)
        end = offset
        if digest.length != end:
            raise CorruptIndex("the digest does not cover the indexed bytes")
        pending = _pending(tail)
        self.session_id = session_id
        new.item0.append(num)
        view = self._new_view(meta, new)
        # Anything that writes the content file later (it is never rewritten by us) is seen.
        meta["content_stamp"] = [written.st_size, written.st_mtime_ns, written.st_ino]
        db.execute("BEGIN IMMEDIATE")
        try:
            columns: list[tuple[str, bytes]] = [
                ("e_off", offs.tobytes()),
                ("e_len", lens.tobytes()),
                ("e_item0", array("q", new.item0[:-1]).tobytes()),
                ("e_flags", bytes(new.flags)),
                ("i_role", bytes(roles)),
                ("i_nchars", nchars.tobytes()),
                ("i_seq", item_seqs.tobytes()),
                ("i_tool", tools.tobytes()),
            ]
            item_starts = array("q", accumulate(item_lens, initial=meta["committed"]))
            if meta["items"] == 0 and not meta["sizes"].get("i_start"):
                columns.append(("i_start", item_starts.tobytes()))
            else:
                columns.append(("i_start", item_starts[1:].tobytes()))
            keys: set[int] = set()  # a filter: each checksum once
            for name, values in (
                ("e_id", new.ids),
                ("e_parent", new.parents),
                ("e_marker", new.markers),
                ("e_stamp", new.stamps),
                ("i_id", item_ids),
                ("t_name", new_names),
            ):
                base = meta["sizes"].get(name + ".d", 0)
                offsets, data = pack_strings(values, base)
                columns += [(name + ".o", offsets), (name + ".d", data)]
                if name == "e_id":
                    keys.update(checksums(data, values, base == 0))
                elif name == "e_parent":
                    if values and values[1:] == new.ids[:-1]:  # one chain: each parent is
                        first_parent = values[0].encode("utf-8", "surrogatepass")  # an id before it
                        keys.add(zlib.crc32(first_parent))
                    else:
                        keys.update(checksums(data, values, base == 0))
            columns.append(("e_keys", array("I", sorted(keys)).tobytes()))
            for name, data in columns:
                add_part(db, meta, name, data)
            put_whole(db, meta, "view", view.to_blob())
            meta.update(
                end=end,
                committed=committed,
                entries=meta["entries"] + len(new),
                items=num,
                pending=pending,
                session_id=session_id,
                digest=digest.hexdigest(),
                seen=seen,
            )
            _store_meta(db, meta)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._columns = {}
        self.file_view = view

    def _tool_names(self, meta: dict[str, Any]) -> list[str]:
        if not meta["sizes"].get("t_name.o"):
            return []
        return self._strings("t_name").all()

    def _new_view(self, meta: dict[str, Any], new: _Entries) -> View:
        """The file leaf's view after ``new`` is appended (extended when it can be)."""
        seq = meta["entries"] + len(new) - 1
        if meta["entries"] == 0:  # a fresh build: everything is at hand
            return self._build_view(seq, new)
        old = self.file_view
        if old is None:
            assert self.db is not None
            old = View.from_blob(self._blob("view"))
        if not new.ids:
            return old
        if not self._breaks_branches(new):
            extended = self._extend_view(old, new, seq)
            if extended is not None:
                return extended
        return self._build_view(seq, self._entries(new))

    def _breaks_branches(self, new: _Entries) -> bool:
        """Whether appending ``new`` can change an existing branch: an id that repeats (a later
        duplicate wins) or that an existing entry already names as its parent."""
        if len(set(new.ids)) != len(new.ids):
            return True
        # Sorted checksums of every stored id and parent rule most ids out; a checksum that is
        # there (a real hit, or a rare collision) is settled by an exact search.
        parts = []
        for blob in self._parts("e_keys"):
            keys = array("I")
            try:
                keys.frombytes(blob)
            except ValueError as exc:
                raise CorruptIndex("column e_keys is not a whole number of values") from exc
            parts.append(keys)
        for entry_id in new.ids:
            key = zlib.crc32(entry_id.encode("utf-8", "surrogatepass"))
            for keys in parts:
                at = bisect_left(keys, key)
                if at < len(keys) and keys[at] == key:
                    ids, parents = self._strings("e_id"), self._strings("e_parent")
                    if ids.positions(entry_id, True) or parents.positions(entry_id, True):
                        return True
                    break
        return False

    # -- loading

    def _map_content(self, meta: dict[str, Any]) -> None:
        if self._content is not None:
            self._content.close()
            self._content = None
        path = _content_file(self.directory, meta)
        fd, stat = open_regular(path)  # a FIFO planted here: refused, never waited on
        try:
            if [stat.st_size, stat.st_mtime_ns, stat.st_ino] != meta.get("content_stamp"):
                raise CorruptIndex("the content file was changed behind the index's back")
            if meta["committed"]:
                self._content = mmap.mmap(fd, meta["committed"], access=mmap.ACCESS_READ)
        finally:
            os.close(fd)

    def _entries(self, new: _Entries | None = None) -> _Entries:
        """Every indexed entry (plus ``new``, not yet stored) as lists."""
        count = self.meta["entries"]
        table = _Entries(
            ids=self._strings("e_id").all(),
            parents=self._strings("e_parent").all(),
            markers=self._strings("e_marker").all(),
            stamps=self._strings("e_stamp").all(),
            flags=bytearray(self._blob("e_flags")),
            item0=list(self._array("e_item0")),
            roles=self._blob("i_role"),
        )
        if len(table.roles) != self.meta["items"]:
            raise CorruptIndex("role column disagrees")
        for column in (table.ids, table.parents, table.markers, table.stamps, table.flags):
            if len(column) != count:
                raise CorruptIndex("entry columns disagree")
        if len(table.item0) != count:
            raise CorruptIndex("entry columns disagree")
        if new is not None:
            table.ids += new.ids
            table.parents += new.parents
            table.markers += new.markers
            table.stamps += new.stamps
            table.flags += new.flags
            table.item0 += new.item0
            table.roles = bytes(table.roles) + bytes(new.roles)
        else:
            table.item0.append(self.meta["items"])
        return table

    def _winner(self, entry_id: str) -> int | None:
        found = self._strings("e_id").positions(entry_id, last=True)
        return found[0] if found else None

    # -- views

    def _build_view(self, leaf_seq: int, table: _Entries) -> View:
        """Project the branch ending at ``leaf_seq`` (root to leaf, cycles stop the walk)."""
        first = table.first
        branch = _branch(leaf_seq, table)
        view = View(leaf_seq, array("i"), bytearray(), [])
        root_created = None
        if branch and table.flags[branch[0] - first] & _STAMP:
            root_created = table.stamps[branch[0] - first]
        view.naming = _naming(table, branch)
        root = root_id_in_format(self.session_id, fork_safe=view.naming == _NAMING_WHOLE)
        view.windows.append((root, root_created, None, 0))
        self._extend(view, table, branch, None)
        return view

    def _extend_view(self, view: View, new: _Entries, leaf_seq: int) -> View | None:
        """The file leaf moved: extend the old branch if the new leaf descends from its leaf."""
        first = new.first
        winners = {entry_id: seq for seq, entry_id in enumerate(new.ids, first)}
        path: list[int] = []
        current = leaf_seq
        while True:
            path.append(current)
            parent_id = new.parents[current - first]
            if not parent_id:
                return None
            parent = winners.get(parent_id)
            if parent is None:
                parent = self._winner(parent_id)
            if parent is not None and parent == view.leaf_seq and parent < first:
                break
            if parent is None or parent < first or len(path) > len(new):
                return None
            current = parent
        path.reverse()
        extended = View(
            leaf_seq,
            array("i", view.positions),
            bytearray(view.roles),
            list(view.windows),
            view.ascending,
            view.naming,
        )
        old = view.leaf_seq
        flags, item0 = self._blob("e_flags"), self._array("e_item0")
        before = (flags[old], item0[old], self._next_item0(old)) if old >= 0 else None
        self._extend(extended, new, path, before)
        return extended

    def _next_item0(self, seq: int) -> int:
        item0 = self._array("e_item0")
        return item0[seq + 1] if seq + 1 < len(item0) else self.meta["items"]

    def _extend(
        self,
        view: View,
        table: _Entries,
        path: Sequence[int],
        before: tuple[int, int, int] | None,
    ) -> None:
        """Append ``path`` (seqs in branch order) to ``view``; ``before`` is the flags and item
        span of the entry preceding it (None: the path starts the branch)."""
        first = table.first
        flags, item0 = table.flags, table.item0
        naming = max(view.naming, _naming(table, path))
        if view.windows and naming != view.naming:
            # The branch now shows which naming the session's own windows use: so is its root.
            view.naming = naming
            _, created, marker_id, start = view.windows[0]
            root = root_id_in_format(self.session_id, fork_safe=naming == _NAMING_WHOLE)
            view.windows[0] = (root, created, marker_id, start)
        if isinstance(path, range):
            _extend_run(view, table, path, before)
            return
        previous = before
        roles, base = table.roles, table.item_base
        positions, view_roles = view.positions, view.roles
        for seq in path:
            at = seq - first
            marker = table.markers[at]
            if marker:
                if previous is not None and previous[0] & _FLIP:
                    _flip_last(view, previous[2] - previous[1])
                stamp = table.stamps[at] if flags[at] & _STAMP else None
                view.windows.append((marker, stamp, table.ids[at], len(positions)))
            lo, hi = item0[at], item0[at + 1]
            if hi > lo:
                if positions and positions[-1] >= lo:
                    view.ascending = False
                positions.extend(range(lo, hi))
                view_roles += roles[lo - base : hi - base]
            previous = (flags[at], lo, hi)

    # -- answering

    def tool_names(self, name: str | None, namespace: str | None) -> set[int]:
        """Item numbers whose tool name is ``name`` and whose family is ``namespace``."""
        names = self._strings("t_name").all()
        wanted = set()
        for code, tool in enumerate(names, 1):
            cut = tool.find("_")
            family = tool[:cut] if cut > 0 else None
            if (name is None or tool == name) and (namespace is None or family == namespace):
                wanted.add(code)
        if not wanted:
            return set()
        codes = self._array("i_tool")
        self._expect("i_tool", self.meta["items"])
        return {num for num, code in enumerate(codes) if code in wanted}

    def find_ids(self, item_id: str) -> list[int]:
        return self._strings("i_id").positions(item_id)

    def matches(self, queries: tuple[str, ...]) -> set[int]:
        """Item numbers whose content holds any query (every branch; the caller scopes)."""
        found: set[int] = set()
        content = self._content
        if content is None:
            return found
        starts = self._array("i_start")
        self._expect("i_start", self.meta["items"] + 1)
        if starts[-1] != self.meta["committed"]:
            raise CorruptIndex("content length disagrees")
        add = found.add
        for query in queries:
            needle = query.encode("utf-8", "surrogatepass")
            size = len(needle)
            # Backwards: CPython's reverse search skips far faster than its forward one.
            at = content.rfind(needle)
            num = len(starts) - 1
            while at >= 0:
                # A common literal hits item after item: try the item before the last hit first.
                if num > 0 and starts[num - 1] <= at < starts[num]:
                    num -= 1
                else:
                    num = bisect_right(starts, at) - 1
                if at + size <= starts[num + 1]:
                    add(num)
                    at = content.rfind(needle, 0, starts[num])
                else:  # straddles two items: look for a match starting earlier
                    at = content.rfind(needle, 0, at + size - 1)
        return found

    def item(self, num: int, window_id: str, role_code: int) -> Item:
        """Item ``num`` re-read from the session file and re-projected (never the cache's copy)."""
        # Every value read here is confirmed by the session file below, so none needs a
        # whole column loaded and checksummed: each is read in place.
        if not 0 <= num < self.meta["items"]:
            raise CorruptIndex(f"item {num} missing")
        seq = self._value("i_seq", num)
        if not 0 <= seq < self.meta["entries"]:
            raise CorruptIndex(f"item {num} names no entry")
        sub = num - self._value("e_item0", seq)
        item_id = self._string("i_id", num)
        nchars = self._value("i_nchars", num)
        off, length = self._value("e_off", seq), self._value("e_len", seq)
        entry_id = self._string("e_id", seq)
        if sub < 0 or off < 0 or length < 0:
            raise CorruptIndex(f"item {num} has bad offsets")
        fd, _info = open_regular(self.source)  # swapped for a FIFO meanwhile: refused
        try:
            line = os.pread(fd, length, off)
        finally:
            os.close(fd)
        entry = _parse(line)
        if type(entry) is not dict or entry.get("id") != entry_id:
            raise CorruptIndex(f"entry {entry_id} is not at its recorded offset")
        items = entry_items(entry, None, window_id)
        if sub >= len(items) or items[sub].item_id != item_id:
            raise CorruptIndex(f"item {item_id} does not match the session file")
        found = items[sub]
        if len(found.content) != nchars:
            raise CorruptIndex(f"item {item_id} changed length")
        found.role = ROLES[role_code]
        result: Item = found
        return result


# --- helpers -------------------------------------------------------------------------------


def _flip_last(view: View, count: int) -> None:
    """The compaction right before a reset marker is the reset's checkpoint: a developer item."""
    _flip(view, len(view.positions) - count, len(view.positions))


def _flip(view: View, start: int, stop: int) -> None:
    for pos in range(start, stop):
        if view.roles[pos] == _SYSTEM:
            view.roles[pos] = _DEVELOPER


def _branch(leaf_seq: int, table: _Entries) -> Sequence[int]:
    """The seqs of the branch ending at ``leaf_seq``, root first (a cycle stops the walk)."""
    first = table.first
    ids, parents = table.ids, table.parents
    last = first + len(ids) - 1
    # The usual file is one chain, each entry the child of the line before it: with unique ids
    # the walk from the last entry would visit every entry, so it is not taken.
    if leaf_seq == last and parents[1:] == ids[:-1] and len(set(ids)) == len(ids):
        return range(first, last + 1)
    return _walk(leaf_seq, table)


def _walk(leaf_seq: int, table: _Entries) -> list[int]:
    """The branch by following parent ids from ``leaf_seq`` (a later duplicate id wins)."""
    first = table.first
    ids, parents = table.ids, table.parents
    last = first + len(ids) - 1
    winners = {entry_id: seq for seq, entry_id in enumerate(ids, first)}  # a later one wins
    branch: list[int] = []
    seen: set[int] = set()
    current: int | None = leaf_seq if first <= leaf_seq <= last else None
    while current is not None and current not in seen:
        seen.add(current)
        branch.append(current)
        parent = parents[current - first]
        current = winners.get(parent) if parent else None
    branch.reverse()
    return branch


_NAMING_NONE, _NAMING_WHOLE, _NAMING_UPSTREAM = 0, 1, 2
"""What a branch shows of its session's own window naming; a larger value wins (an own id in
the extension's form decides for it even after whole-id ones, as ``windows`` rules)."""
_UPSTREAM_BIT = bytes(value & _UPSTREAM for value in range(256))  # translation tables
_WHOLE_BIT = bytes(value & _WHOLE for value in range(256))


def _naming(table: _Entries, path: Sequence[int]) -> int:
    """The window naming the session's own entries on ``path`` show (``_NAMING_*``)."""
    first, flags = table.first, table.flags
    if isinstance(path, range):
        run = flags[path.start - first : path.stop - first]
        if run.translate(_UPSTREAM_BIT).count(0) != len(run):
            return _NAMING_UPSTREAM
        return _NAMING_WHOLE if run.translate(_WHOLE_BIT).count(0) != len(run) else _NAMING_NONE
    found = _NAMING_NONE
    for seq in path:
        bits = flags[seq - first]
        if bits & _UPSTREAM:
            return _NAMING_UPSTREAM
        if bits & _WHOLE:
            found = _NAMING_WHOLE
    return found


def _extend_run(
    view: View, table: _Entries, run: range, before: tuple[int, int, int] | None
) -> None:
    """``_extend`` for a path of consecutive seqs: their items are one span, so only the
    reset markers among them need a step of their own."""
    first, item0, flags = table.first, table.item0, table.flags
    lo, hi = item0[run.start - first], item0[run.stop - first]
    positions = view.positions
    start = len(positions)
    if hi > lo:
        if positions and positions[-1] >= lo:
            view.ascending = False
        positions.extend(range(lo, hi))
        view.roles += table.roles[lo - table.item_base : hi - table.item_base]
    markers = table.markers
    for at in range(run.start - first, run.stop - first):
        marker = markers[at]
        if not marker:
            continue
        here = start + item0[at] - lo  # the marker's place among the positions
        if at > run.start - first:
            if flags[at - 1] & _FLIP:
                _flip(view, here - (item0[at] - item0[at - 1]), here)
        elif before is not None and before[0] & _FLIP:
            _flip(view, here - (before[2] - before[1]), here)
        stamp = table.stamps[at] if flags[at] & _STAMP else None
        view.windows.append((marker, stamp, table.ids[at], here))


def _parse(line: bytes) -> Any:
    """A complete line's value as the loader reads it, or None when the loader skips it."""
    try:
        value = FAST_DECODE(line)
    except FAST_DECODE_ERRORS:
        value = parse_chunk(line, 0, False, [])
        if value is SKIPPED:
            return None
    if type(value) is dict:  # the usual case; an object is always truthy
        return value
    return value if js_truthy(value) else None


def _pending(tail: bytes) -> bool:
    """Whether an unterminated last line would be loaded (it parses to a truthy value)."""
    if not tail:
        return False
    text = tail.decode("utf-8", "replace")
    if not js_trim(text):
        return False
    try:
        value = parse(text)
    except JSONLineError:
        return False
    return js_truthy(value)


def _write_text(out: Any, content: str) -> int:
    """Write a long item's text in pieces (a piece of a surrogate pair encodes alike apart);
    its length in bytes."""
    size = 0
    for at in range(0, len(content), BIG_TEXT):
        piece = content[at : at + BIG_TEXT].encode("utf-8", "surrogatepass")
        out.write(piece)
        size += len(piece)
    return size


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
