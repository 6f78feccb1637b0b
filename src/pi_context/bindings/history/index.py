"""A persistent, incremental index of a session file's history items that can never be stale.

One cache directory per session file (``<cache>/history/<hash of the real path>/``) holds an
SQLite database (entries, items and the selected branch's projection as packed arrays) and an
append-only ``content-<generation>.bin`` with every item's text, back to back, as UTF-8. The
cache is derived data: deleting it, or any part of it, only costs a rebuild.

Every call checks the index against the file before answering (``open_view``):

* the file's identity (device, inode) and real path must match, and its size must not be below
  the indexed end; a digest of sampled blocks of the indexed prefix (head, tail and evenly spaced
  blocks) must match. Anything else - a rewrite, truncation, migration, a swapped file - throws
  the index away and rebuilds it;
* bytes past the indexed end are indexed incrementally, complete lines only. An unterminated
  last line is treated as the loader treats it: skipped when it does not parse; when it does
  parse, this call is answered without the index (the loader would include it);
* files the index does not model (no header, a version that needs migration, an unreadable
  cache) are answered by the unindexed path, so answers are the loader's in every case.

The index never answers with its own copy of an item: delivered items are re-read from the
session file at their recorded byte offset and re-projected (``item``); a mismatch means the
cache is corrupt, and it is rebuilt. The content file only finds search candidates, and the
database is sealed with a digest of its packed arrays. A branch other than the file's own leaf
is projected from the index's entry table on each call.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import mmap
import os
import shutil
import sqlite3
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    is_reset_marker,
    legacy_window_prefix,
    marker_window_id,
    names_legacy_window,
    root_window_id,
)

from .items import ITEM_ENTRY_TYPES, ROLES, Item, entry_items

SCHEMA = 4  # 4: entries remember seed-format (legacy) window ids
SAMPLE_BLOCK = 64 * 1024
SAMPLE_SPREAD = 8  # evenly spaced 4 KiB blocks between head and tail
_ROLE_CODE = {role: code for code, role in enumerate(ROLES)}
_DEVELOPER = _ROLE_CODE["developer"]
_SYSTEM = _ROLE_CODE["system"]
CACHE_ENV = "PI_CONTEXT_CACHE_DIR"
DISABLE_ENV = "PI_CONTEXT_HISTORY_INDEX"  # "0" answers every call without the index


class Unindexable(Exception):
    """This call must be answered by the unindexed path (the loader decides everything)."""


class CorruptIndex(Exception):
    """The cache disagrees with itself or with the session file: rebuild it."""


def cache_root() -> Path:
    """``$PI_CONTEXT_CACHE_DIR``, else ``$XDG_CACHE_HOME/pi-context``, else ``~/.cache/...``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pi-context"


def index_enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def cache_dir_for(source: Path) -> Path:
    key = hashlib.sha256(os.fsencode(source)).hexdigest()[:32]
    return cache_root() / "history" / key


# --- the branch as the index sees it ------------------------------------------------------------


@dataclass
class View:
    """The selected branch: its items (index numbers) in branch order, their roles, windows."""

    leaf_seq: int  # -1: the empty branch
    positions: array[int]  # item numbers in branch order
    roles: bytearray  # role code per position
    windows: list[tuple[str, str | None, str | None, int]]  # id, created_at, marker id, start
    ascending: bool = True  # positions in file order (the usual case): bisect finds an item

    def window_ends(self) -> list[int]:
        starts = [w[3] for w in self.windows]
        return [*starts[1:], len(self.positions)]

    def to_blob(self) -> bytes:
        head = json.dumps([self.leaf_seq, self.windows, self.ascending]).encode()
        return len(head).to_bytes(8, "little") + head + self.positions.tobytes() + self.roles

    @classmethod
    def from_blob(cls, blob: bytes) -> View:
        size = int.from_bytes(blob[:8], "little")
        leaf_seq, windows, ascending = json.loads(blob[8 : 8 + size])
        rest = blob[8 + size :]
        count = len(rest) // 5
        positions = array("i")
        positions.frombytes(rest[: 4 * count])
        roles = bytearray(rest[4 * count :])
        if len(roles) != count:
            raise CorruptIndex("view arrays disagree")
        return cls(leaf_seq, positions, roles, [tuple(w) for w in windows], bool(ascending))


@dataclass
class _Entry:
    seq: int
    entry_id: str
    parent: str | None
    marker: str | None
    stamp: str | None
    item0: int
    nitems: int
    flip: bool  # a compaction whose role turns "developer" when a reset marker follows it
    legacy: bool = False  # a boot/marker this session wrote with a seed-format window id


# --- the index -----------------------------------------------------------------------------------


class HistoryIndex:
    """One session file's index; use as a context manager, ``open_view`` per call."""

    def __init__(self, source: Path, cache: Path | None = None) -> None:
        self.source = Path(os.path.realpath(source))
        self.directory = cache if cache is not None else cache_dir_for(self.source)
        self.db: sqlite3.Connection | None = None
        self._content: mmap.mmap | None = None
        self._starts = array("q")
        self._roles = bytearray()
        self.session_id = ""
        self.file_view: View | None = None

    # -- lifecycle

    def __enter__(self) -> HistoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._content is not None:
            self._content.close()
            self._content = None
        if self.db is not None:
            self.db.close()
            self.db = None

    def _connect(self) -> sqlite3.Connection:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        db = sqlite3.connect(self.directory / "index.sqlite", timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")  # a cache: a crash costs a rebuild, never an answer
        return db

    def discard(self) -> None:
        """Throw the cache away (it is only derived data)."""
        self._discard()

    def _discard(self) -> None:
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Writers take the directory's lock; readers never wait (see the module docstring)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # -- validation and update

    def open_view(self, leaf_id: str | None) -> View:
        """The view for ``leaf_id`` (None: the file's leaf), the index brought up to date."""
        for attempt in range(3):
            try:
                return self._open_view(leaf_id)
            except (CorruptIndex, sqlite3.DatabaseError, OSError, ValueError, KeyError) as exc:
                if isinstance(exc, FileNotFoundError) and not self.source.exists():
                    raise Unindexable("the session file is gone") from exc
                self._discard()
                if attempt == 2:
                    raise Unindexable(f"cannot build the history index: {exc}") from exc
        raise AssertionError("unreachable")

    def _open_view(self, leaf_id: str | None) -> View:
        with open(self.source, "rb") as handle:
            fd = handle.fileno()
            stat = os.fstat(fd)
            db = self.db = self.db or self._connect()
            meta = _meta(db)
            if meta is None or not self._matches(meta, stat, fd):
                with self._locked():
                    meta = _meta(db)  # another process may have rebuilt it meanwhile
                    if meta is None or not self._matches(meta, stat, fd):
                        self._rebuild(db, stat, fd)
                        meta = _meta(db)
            if meta is None:
                raise CorruptIndex("no metadata after a rebuild")
            if stat.st_size > meta["end"]:
                with self._locked():
                    meta = _meta(db)
                    if meta is None or not self._matches(meta, stat, fd):
                        raise CorruptIndex("the index changed under the lock")
                    if stat.st_size > meta["end"]:
                        self._append(db, meta, fd)
                        meta = _meta(db)
                    if meta is None:
                        raise CorruptIndex("no metadata after an append")
            try:
                self._load(db, meta)
            except CorruptIndex:
                with self._locked():  # a writer may have been mid-update: look again, alone
                    meta = _meta(db)
                    if meta is None:
                        raise
                    self._load(db, meta)
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
        return self._build_view(seq)

    def _matches(self, meta: dict[str, Any], stat: os.stat_result, fd: int) -> bool:
        if meta.get("schema") != SCHEMA or meta.get("source") != str(self.source):
            return False
        if (meta["dev"], meta["ino"]) != (stat.st_dev, stat.st_ino) or stat.st_size < meta["end"]:
            return False
        if stat.st_size == meta["end"] and stat.st_mtime_ns != meta.get("mtime_ns"):
            return False  # written in place without growing: nothing cheap can vouch for it
        if not _content_file(self.directory, meta).exists():
            return False
        return bool(_sample(fd, meta["end"]) == meta["sample"])

    # -- building

    def _rebuild(self, db: sqlite3.Connection, stat: os.stat_result, fd: int) -> None:
        generation = os.urandom(6).hex()
        for old in self.directory.glob("content-*.bin"):
            old.unlink(missing_ok=True)  # readers holding a map keep their (unlinked) copy
        db.executescript(
            """
            DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS blobs;
            DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS items;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value);
            CREATE TABLE blobs (name TEXT PRIMARY KEY, data BLOB);
            CREATE TABLE entries (seq INTEGER PRIMARY KEY, id TEXT, parent TEXT, marker TEXT,
                stamp TEXT, off INTEGER, len INTEGER, item0 INTEGER, nitems INTEGER,
                flip INTEGER, legacy INTEGER);
            CREATE INDEX entries_id ON entries(id);
            CREATE INDEX entries_parent ON entries(parent);
            CREATE TABLE items (num INTEGER PRIMARY KEY, seq INTEGER, sub INTEGER,
                item_id TEXT, tool_name TEXT, nchars INTEGER);
            CREATE INDEX items_id ON items(item_id);
            CREATE INDEX items_tool ON items(tool_name);
            """
        )
        meta: dict[str, Any] = {
            "schema": SCHEMA,
            "source": str(self.source),
            "dev": stat.st_dev,
            "ino": stat.st_ino,
            "end": 0,
            "sample": _sample(fd, 0),
            "generation": generation,
            "committed": 0,
            "entries": 0,
            "items": 0,
            "session_id": None,
            "pending": False,
            "seal": "",
        }
        _content_file(self.directory, meta).write_bytes(b"")
        self._starts = array("q", [0])
        self._roles = bytearray()
        self.file_view = None
        db.execute("BEGIN")
        _store_meta(db, meta)
        _store_blobs(db, meta, self._starts, self._roles, None)
        db.execute("COMMIT")
        self._append(db, meta, fd)

    def _append(self, db: sqlite3.Connection, meta: dict[str, Any], fd: int) -> None:
        """Index the complete lines past ``meta['end']``; update the file leaf's view."""
        start = meta["end"]
        data = _read_from(fd, start)
        after = os.fstat(fd)
        # The file's mtime as of the bytes read; unknown (-1) if it moved on meanwhile.
        mtime_ns = after.st_mtime_ns if after.st_size == start + len(data) else -1
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        body = data[:cut]
        pending = _pending(tail)
        meta["pending"] = pending
        self._load(db, meta, view=False)
        starts, roles = self._starts, self._roles
        content_path = _content_file(self.directory, meta)
        new_entries: list[_Entry] = []
        rows_entries: list[tuple[Any, ...]] = []
        rows_items: list[tuple[Any, ...]] = []
        chunks: list[bytes] = []
        committed = meta["committed"]
        seq, num = meta["entries"], meta["items"]
        offset = start
        for line in body.split(b"\n")[:-1]:
            line_start = offset
            offset += len(line) + 1
            value = _parse(line)
            if value is None:
                continue
            if meta["session_id"] is None:
                if not is_header(value) or needs_migration([value]):
                    raise Unindexable("no current header: the loader decides")
                meta["session_id"] = value["id"]
                continue
            if type(value) is not dict or value.get("type") == "session":
                continue
            entry_id = value.get("id")
            if type(entry_id) is not str or not entry_id:
                continue
            items = entry_items(value, None, "") if value.get("type") in ITEM_ENTRY_TYPES else []
            flip = False
            for sub, item in enumerate(items):
                text = item.content.encode("utf-8", "surrogatepass")
                chunks.append(text)
                committed += len(text)
                starts.append(committed)
                code = _ROLE_CODE[item.role]
                roles.append(code)
                flip = flip or (value.get("type") == "compaction" and code == _SYSTEM)
                rows_items.append(
                    (num + sub, seq, sub, item.item_id, item.tool_name, len(item.content))
                )
            parent = value.get("parentId")
            parent = parent if isinstance(parent, str) and parent else None
            marker = marker_window_id(value) if is_reset_marker(value) else None
            stamp = value.get("timestamp")
            stamp = stamp if isinstance(stamp, str) else None
            legacy = names_legacy_window(value, meta["session_id"])
            entry = _Entry(seq, entry_id, parent, marker, stamp, num, len(items), flip, legacy)
            new_entries.append(entry)
            rows_entries.append(
                (
                    seq,
                    entry_id,
                    parent,
                    marker,
                    stamp,
                    line_start,
                    len(line),
                    num,
                    len(items),
                    flip,
                    legacy,
                )
            )
            seq += 1
            num += len(items)
        if meta["session_id"] is None:
            raise Unindexable("no complete header line yet: the loader decides")
        self.session_id = meta["session_id"]
        # Content first (past the committed length, so readers never see it), then one commit.
        with open(content_path, "r+b") as out:
            out.seek(meta["committed"])
            out.write(b"".join(chunks))
            out.truncate()
            out.flush()
            written = os.fstat(out.fileno())
        # Anything that writes the content file later (it is never rewritten by us) is seen.
        meta["content_stamp"] = [written.st_size, written.st_mtime_ns, written.st_ino]
        db.execute("BEGIN IMMEDIATE")
        try:
            rebuild_view = self._breaks_branches(db, new_entries)
            db.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows_entries)
            db.executemany("INSERT INTO items VALUES (?,?,?,?,?,?)", rows_items)
            meta.update(
                end=start + cut,
                committed=committed,
                entries=seq,
                items=num,
                pending=pending,
                mtime_ns=mtime_ns,
            )
            meta["sample"] = _sample(fd, meta["end"])
            view = self.file_view
            if new_entries or view is None:
                if view is None or rebuild_view:
                    view = self._build_view(seq - 1 if seq else -1)
                else:
                    view = self._extend_view(view, new_entries, seq - 1)
            _store_blobs(db, meta, starts, roles, view)
            _store_meta(db, meta)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.file_view = view

    def _breaks_branches(self, db: sqlite3.Connection, new: list[_Entry]) -> bool:
        """Whether appending ``new`` can change an existing branch: an id that repeats (a later
        duplicate wins) or that an existing entry already names as its parent."""
        for entry in new:
            hit = db.execute(
                "SELECT 1 FROM entries WHERE id = ?1 OR parent = ?1 LIMIT 1", (entry.entry_id,)
            ).fetchone()
            if hit is not None:
                return True
        return len({e.entry_id for e in new}) != len(new)

    # -- loading

    def _load(self, db: sqlite3.Connection, meta: dict[str, Any], view: bool = True) -> None:
        blobs = dict(db.execute("SELECT name, data FROM blobs").fetchall())
        starts = array("q")
        starts.frombytes(blobs["starts"])
        roles = bytearray(blobs["roles"])
        view_blob = blobs.get("view")
        if _seal(blobs["starts"], blobs["roles"], view_blob) != meta["seal"]:
            raise CorruptIndex("the index's seal does not match its arrays")
        if len(starts) != meta["items"] + 1 or len(roles) != meta["items"]:
            raise CorruptIndex("item arrays disagree with the item count")
        if starts[-1] != meta["committed"]:
            raise CorruptIndex("content length disagrees")
        self._starts, self._roles = starts, roles
        self.session_id = meta["session_id"] or ""
        self.file_view = View.from_blob(view_blob) if view_blob else None
        if view:
            self._map_content(meta)

    def _map_content(self, meta: dict[str, Any]) -> None:
        if self._content is not None:
            self._content.close()
            self._content = None
        path = _content_file(self.directory, meta)
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            if [stat.st_size, stat.st_mtime_ns, stat.st_ino] != meta.get("content_stamp"):
                raise CorruptIndex("the content file was changed behind the index's back")
            if meta["committed"]:
                self._content = mmap.mmap(
                    handle.fileno(), meta["committed"], access=mmap.ACCESS_READ
                )

    def _entries(self) -> tuple[list[_Entry], dict[str, int]]:
        assert self.db is not None
        rows = self.db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY seq").fetchall()
        entries = [_row_entry(row) for row in rows]
        if any(e.seq != i for i, e in enumerate(entries)):
            raise CorruptIndex("entry numbering has gaps")
        winners = {e.entry_id: e.seq for e in entries}  # a later duplicate wins, as in Pi
        return entries, winners

    def _winner(self, entry_id: str) -> int | None:
        assert self.db is not None
        row = self.db.execute("SELECT max(seq) FROM entries WHERE id = ?", (entry_id,)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    # -- views

    def _build_view(self, leaf_seq: int) -> View:
        """Project the branch ending at ``leaf_seq`` (root to leaf, cycles stop the walk)."""
        entries, winners = self._entries()
        branch: list[_Entry] = []
        seen: set[int] = set()
        current = entries[leaf_seq] if 0 <= leaf_seq < len(entries) else None
        while current is not None and current.seq not in seen:
            seen.add(current.seq)
            branch.append(current)
            parent = winners.get(current.parent) if current.parent is not None else None
            current = entries[parent] if parent is not None else None
        branch.reverse()
        view = View(leaf_seq, array("i"), bytearray(), [])
        root_created = branch[0].stamp if branch else None
        root = self._root_id(any(e.legacy for e in branch))
        view.windows.append((root, root_created, None, 0))
        self._extend(view, branch, None)
        return view

    def _extend_view(self, view: View, new: list[_Entry], leaf_seq: int) -> View:
        """The file leaf moved: extend the old branch if the new leaf descends from its leaf."""
        by_seq = {e.seq: e for e in new}
        first_new = new[0].seq
        winners = {e.entry_id: e.seq for e in new}
        path: list[_Entry] = []
        current: _Entry | None = by_seq.get(leaf_seq)
        while current is not None:
            path.append(current)
            if current.parent is None:
                return self._build_view(leaf_seq)
            parent = winners.get(current.parent)
            if parent is None:
                parent = self._winner(current.parent)
            if parent == view.leaf_seq and parent is not None and parent < first_new:
                path.reverse()
                old_leaf = self._entry(view.leaf_seq)
                extended = View(
                    leaf_seq,
                    array("i", view.positions),
                    bytearray(view.roles),
                    list(view.windows),
                    view.ascending,
                )
                self._extend(extended, path, old_leaf)
                return extended
            if parent is None or parent < first_new or len(path) > len(new):
                return self._build_view(leaf_seq)
            current = by_seq.get(parent)
        return self._build_view(leaf_seq)

    def _root_id(self, legacy: bool) -> str:
        if legacy:
            return f"{legacy_window_prefix(self.session_id)}root"
        return root_window_id(self.session_id)

    def _entry(self, seq: int) -> _Entry:
        assert self.db is not None
        row = self.db.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE seq = ?",
            (seq,),
        ).fetchone()
        if row is None:
            raise CorruptIndex(f"entry {seq} missing")
        return _row_entry(row)

    def _extend(self, view: View, path: list[_Entry], before: _Entry | None) -> None:
        """Append ``path`` (branch order) to ``view``; ``before`` is the entry preceding it."""
        roles = self._roles
        previous = before
        if any(e.legacy for e in path) and view.windows:
            # The branch now shows the session wrote seed-format ids: its root is named that way.
            _, created, marker_id, start = view.windows[0]
            view.windows[0] = (self._root_id(True), created, marker_id, start)
        for entry in path:
            if entry.marker is not None:
                if previous is not None and previous.flip:
                    _flip_last(view, previous)
                view.windows.append(
                    (entry.marker, entry.stamp, entry.entry_id, len(view.positions))
                )
            if entry.nitems and view.positions and view.positions[-1] >= entry.item0:
                view.ascending = False
            for num in range(entry.item0, entry.item0 + entry.nitems):
                view.positions.append(num)
                view.roles.append(roles[num])
            previous = entry

    # -- answering

    def tool_names(self, name: str | None, namespace: str | None) -> set[int]:
        """Item numbers whose tool name is ``name`` / whose family is ``namespace``."""
        assert self.db is not None
        if name is not None:
            rows = self.db.execute("SELECT num FROM items WHERE tool_name = ?", (name,))
        else:
            rows = self.db.execute(
                "SELECT num FROM items WHERE instr(tool_name, '_') > 1 "
                "AND substr(tool_name, 1, instr(tool_name, '_') - 1) = ?",
                (namespace,),
            )
        return {row[0] for row in rows}

    def find_ids(self, item_id: str) -> list[int]:
        assert self.db is not None
        rows = self.db.execute("SELECT num FROM items WHERE item_id = ?", (item_id,))
        return [row[0] for row in rows]

    def matches(self, queries: tuple[str, ...]) -> set[int]:
        """Item numbers whose content holds any query (every branch; the caller scopes)."""
        found: set[int] = set()
        content, starts = self._content, self._starts
        if content is None:
            return found
        for query in queries:
            needle = query.encode("utf-8", "surrogatepass")
            # Backwards: CPython's reverse search skips far faster than its forward one.
            at = content.rfind(needle)
            while at >= 0:
                num = bisect_right(starts, at) - 1
                if at + len(needle) <= starts[num + 1]:
                    found.add(num)
                    at = content.rfind(needle, 0, starts[num])
                else:  # straddles two items: look for a match starting earlier
                    at = content.rfind(needle, 0, at + len(needle) - 1)
        return found

    def item(self, num: int, window_id: str, role_code: int) -> Item:
        """Item ``num`` re-read from the session file and re-projected (never the cache's copy)."""
        assert self.db is not None
        row = self.db.execute(
            "SELECT i.sub, i.item_id, i.nchars, e.off, e.len, e.id FROM items i "
            "JOIN entries e ON e.seq = i.seq WHERE i.num = ?",
            (num,),
        ).fetchone()
        if row is None:
            raise CorruptIndex(f"item {num} missing")
        sub, item_id, nchars, off, length, entry_id = row
        with open(self.source, "rb") as handle:
            line = os.pread(handle.fileno(), length, off)
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


_ENTRY_COLUMNS = "seq, id, parent, marker, stamp, item0, nitems, flip, legacy"


def _row_entry(row: Any) -> _Entry:
    seq, entry_id, parent, marker, stamp, item0, nitems, flip, legacy = row
    return _Entry(seq, entry_id, parent, marker, stamp, item0, nitems, bool(flip), bool(legacy))


def _flip_last(view: View, entry: _Entry) -> None:
    """The compaction right before a reset marker is the reset's checkpoint: a developer item."""
    for pos in range(len(view.positions) - entry.nitems, len(view.positions)):
        if view.roles[pos] == _SYSTEM:
            view.roles[pos] = _DEVELOPER


def _parse(line: bytes) -> Any:
    """A complete line's value as the loader reads it, or None when the loader skips it."""
    try:
        value = FAST_DECODE(line)
    except FAST_DECODE_ERRORS:
        value = parse_chunk(line, 0, False, [])
        if value is SKIPPED:
            return None
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


def _read_from(fd: int, start: int) -> bytes:
    chunks: list[bytes] = []
    offset = start
    while True:
        chunk = os.pread(fd, 1 << 24, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _sample(fd: int, end: int) -> str:
    """A digest of the indexed prefix's head, tail and evenly spaced blocks between them."""
    digest = hashlib.blake2b(end.to_bytes(8, "little"), digest_size=16)
    digest.update(os.pread(fd, min(end, SAMPLE_BLOCK), 0))
    if end > SAMPLE_BLOCK:
        tail = max(SAMPLE_BLOCK, end - SAMPLE_BLOCK)
        digest.update(os.pread(fd, end - tail, tail))
        for k in range(1, SAMPLE_SPREAD + 1):
            at = end * k // (SAMPLE_SPREAD + 1)
            digest.update(os.pread(fd, min(4096, end - at), at))
    return digest.hexdigest()


def _seal(starts: bytes, roles: bytes, view: bytes | None) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for part in (starts, roles, view or b""):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _content_file(directory: Path, meta: dict[str, Any]) -> Path:
    generation = str(meta["generation"])
    if not generation.isalnum():
        raise CorruptIndex("bad content generation")
    return directory / f"content-{generation}.bin"


def _meta(db: sqlite3.Connection) -> dict[str, Any] | None:
    try:
        rows = db.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.OperationalError:
        return None
    meta = {key: json.loads(value) for key, value in rows}
    required = ("schema", "source", "dev", "ino", "end", "sample", "generation", "committed")
    if any(key not in meta for key in required):
        return None
    return meta


def _store_meta(db: sqlite3.Connection, meta: dict[str, Any]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(key, json.dumps(value)) for key, value in meta.items()],
    )


def _store_blobs(
    db: sqlite3.Connection,
    meta: dict[str, Any],
    starts: array[int],
    roles: bytearray,
    view: View | None,
) -> None:
    start_bytes, role_bytes = starts.tobytes(), bytes(roles)
    view_bytes = view.to_blob() if view is not None else None
    rows: list[tuple[str, bytes | None]] = [("starts", start_bytes), ("roles", role_bytes)]
    rows.append(("view", view_bytes))
    db.executemany("INSERT OR REPLACE INTO blobs VALUES (?, ?)", rows)
    meta["seal"] = _seal(start_bytes, role_bytes, view_bytes)
