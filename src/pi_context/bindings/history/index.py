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
import mmap
import os
import time
import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from pathlib import Path

import pi_context.support.cache as cache
from pi_context.support.cache_dir import cache_root
from pi_context.support.locking import LockTimeout, flock_within
from pi_context.support.regular import NotRegularFile, open_regular, special_entry
from pi_context.support.sqlite import sqlite3

from .build import _Build, _parse
from .columns import CorruptIndex, Strings
from .format import SCHEMA, Unindexable, View, _content_file, _meta, _state
from .items import ROLES, Item, entry_items
from .scan import Digest, snapshot, unchanged

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, overload

__all__ = ["DISABLE_ENV", "HistoryIndex", "Unindexable", "View", "cache_dir_for", "index_enabled"]

MEMO_MAX = 32  # derived answers an index keeps with its loaded state
LOCK_WAIT = 1.0  # seconds a call waits for another process's update before answering unindexed
DATABASE = "index.sqlite"  # in the cache folder, with its -wal and -shm files
_CACHE_FILES = (DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm", "lock")
DISABLE_ENV = "PI_CONTEXT_HISTORY_INDEX"  # "0" answers every call without the index


def index_enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def cache_dir_for(source: Path) -> Path:
    return cache_root() / "history" / cache.key_of(os.fspath(source))


# --- the index -----------------------------------------------------------------------------------


class HistoryIndex(_Build):
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
        self.memo: dict[Any, Any] = {}
        """Answers derived from the loaded state (query hits, id maps); dropped with it."""
        self._held: dict[str, Any] | None = None  # the metadata the loaded state is of
        self._db_identity: tuple[int, int] = (-1, -1)  # (device, inode) of the open database
        self.resident = False
        """Held open across calls (``resident``): worth loading whole columns once."""
        self.trimmed = False  # the pages its first resident call freed went back to the OS
        self._id_table: array[int] | None = None  # see ``find_ids``

    # -- lifecycle

    def __enter__(self) -> HistoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._drop_loaded()
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

    def _holds(self, meta: dict[str, Any]) -> bool:
        """Whether what is loaded is of ``meta``'s state (when the file was last seen aside:
        a check that found it intact changes nothing loaded)."""
        held = self._held
        if held is None or len(held) != len(meta):
            return False
        for key, value in meta.items():
            if key == "content_stamp" and type(value) is list and len(value) == 3:
                # Our own update re-stamps the content file's time; its bytes are the size.
                value = [value[0], value[2]]
                stamp = held.get(key)
                if type(stamp) is not list or len(stamp) != 3 or [stamp[0], stamp[2]] != value:
                    return False
            elif key != "seen" and value != held.get(key):
                return False
        return True

    def _drop_loaded(self) -> None:
        """Forget what was loaded from the database (it is reloaded on use)."""
        self._columns = {}
        self.memo = {}
        self._held = None
        self.file_view = None
        self._id_table = None

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
        path = self.directory / DATABASE
        # Created 0600 here: SQLite gives its -wal and -shm files the database's mode.
        fd, info = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        self._db_identity = (info.st_dev, info.st_ino)
        # Held across calls, maybe from another thread: ``resident`` lets one call at a time.
        db = sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")  # a cache: a crash costs a rebuild, never an answer
        return db

    def _same_database(self) -> bool:
        """Whether the database this index holds open is still the cache's file."""
        try:
            info = os.stat(self.directory / DATABASE, follow_symlinks=False)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._db_identity

    def discard(self) -> None:
        """Throw the cache away (it is only derived data; only if it is the cache's own)."""
        self.close()
        cache.discard("history", self.directory)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Updates take the directory's lock, waiting at most ``LOCK_WAIT``: a holder that
        takes longer (stopped, hung) gets this call answered unindexed instead."""
        cache.private_dir(self.directory)
        fd, _info = open_regular(
            self.directory / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600
        )
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
            if self.db is not None:  # held across calls: the on-access sweep is still due
                cache.prune_if_due()
            if self.db is not None and not self._same_database():
                self.close()  # held across calls, and the cache was replaced meanwhile
            db = self.db = self.db or self._connect()
            self._close_blobs()
            if db.in_transaction:  # held open across calls: the last call's read ends here
                db.execute("ROLLBACK")
            meta = _meta(db)
            verdict = self._check(meta, stat, fd)
            if verdict is not True:
                with self._locked():
                    now = _meta(db)  # another process may have updated it meanwhile
                    if now is None or not self._holds(now):
                        self._drop_loaded()  # held from a state the update does not start at
                    if now is None or meta is None or _state(now) != _state(meta):
                        verdict = self._check(now, stat, fd)
                    if verdict is None:
                        self._rebuild(db, stat, fd, taken_ns)
                    elif verdict is not True:
                        assert now is not None
                        loaded = self._columns
                        self._append(db, now, fd, verdict, snapshot(stat, taken_ns))
                        after = _meta(db)
                        if after is not None and self._holds(after):
                            self._columns = loaded  # found intact, nothing new: all still holds
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
        db.execute("BEGIN")
        meta = _meta(db)
        if meta is None or meta["generation"] != checked["generation"]:
            raise CorruptIndex("the index was rebuilt meanwhile")
        if meta["end"] < checked["end"]:
            raise CorruptIndex("the index went backwards")
        if self._holds(meta) and self.file_view is not None:
            # Held open across calls (a resident host) and nothing changed since the last
            # call: the columns it loaded and checked, its view and content map still hold.
            self.meta = meta
            return meta
        self._drop_loaded()
        self.meta = meta
        self.session_id = meta["session_id"] or ""
        self.file_view = View.from_blob(self._blob("view"))
        self._map_content(meta)
        self._held = meta
        return meta

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

    # -- answering

    def tool_names(self, name: str | None, namespace: str | None) -> set[int]:
        """Item numbers whose tool name is ``name`` and whose family is ``namespace``."""
        found: set[int] = self.memoized(
            ("tools", name, namespace), lambda: self._tools_named(name, namespace)
        )
        return found

    def _tools_named(self, name: str | None, namespace: str | None) -> set[int]:
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

    def memoized(self, key: Any, make: Any) -> Any:
        """``make()``, kept with the loaded state (a few dozen answers at most)."""
        memo = self.memo
        if key in memo:
            return memo[key]
        if len(memo) >= MEMO_MAX:
            memo.pop(next(iter(memo)))
        value = memo[key] = make()
        return value

    def find_ids(self, item_id: str) -> list[int]:
        """Item numbers whose id is ``item_id`` (ascending): a column scan for a one-shot
        call; held open (``resident``), a lookup in a table of id hashes built once."""
        strings = self._strings("i_id")
        if not self.resident or len(strings) >= 1 << 32:
            return strings.positions(item_id)
        table = self._id_table
        if table is None:
            self._load_resident()
            table = self._id_table
            assert table is not None
        key = zlib.crc32(item_id.encode("utf-8", "surrogatepass"))
        at = bisect_left(table, key << 32)
        found = []
        while at < len(table) and table[at] >> 32 == key:
            num = table[at] & 0xFFFFFFFF
            if strings[num] == item_id:  # a hash names candidates; the text decides
                found.append(num)
            at += 1
        return found  # ascending: equal hashes sort by item number

    def matches(self, queries: tuple[str, ...]) -> set[int]:
        """Item numbers whose content holds any query (every branch; the caller scopes)."""
        found: set[int] = self.memoized(("matches", queries), lambda: self._matches(queries))
        return found

    def _matches(self, queries: tuple[str, ...]) -> set[int]:
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

    def matches_newest(self, query: str, last: int) -> Iterator[int]:
        """Item numbers up to ``last`` whose content holds ``query``, newest first: a backwards
        scan of the content that goes only as far as the caller reads (a page and its cursor)."""
        content = self._content
        if content is None or last < 0:
            return
        starts: Sequence[int]
        if self.resident or "i_start" in self._columns:
            starts = self._array("i_start")
            self._expect("i_start", self.meta["items"] + 1)
        else:
            # A one-shot call: the few offsets a page's hits need, read in place (a bisect
            # per hit), not the whole column loaded and checksummed. These offsets are
            # trusted as the content file they point into is (by its stamp, not a checksum
            # per call); every delivered item is still re-read from the session file and
            # must hold the query (``indexed.search_page``).
            starts = _InPlace(self, "i_start", self.meta["items"] + 1)
        if starts[-1] != self.meta["committed"] or last >= len(starts) - 1:
            raise CorruptIndex("content length disagrees")
        needle = query.encode("utf-8", "surrogatepass")
        size = len(needle)
        at = content.rfind(needle, 0, starts[last + 1])
        num = last
        while at >= 0:
            if not starts[num] <= at < starts[num + 1]:
                num = bisect_right(starts, at) - 1
            if at + size <= starts[num + 1]:
                yield num
                at = content.rfind(needle, 0, starts[num])
            else:  # straddles two items: look for a match starting earlier
                at = content.rfind(needle, 0, at + size - 1)

    def _load_resident(self) -> None:
        """Held across calls: load (and check) the columns a delivered item needs and make
        the id table, once per loaded state, rather than seek into the columns in place on
        every call (a seek walks SQLite's overflow pages) or scan the ids per lookup."""
        for name in ("i_seq", "e_item0", "i_nchars", "e_off", "e_len"):
            self._array(name)
        self._strings("e_id")
        self._id_table = _hash_table(self._strings("i_id"))

    def item(self, num: int, window_id: str, role_code: int) -> Item:
        """Item ``num`` re-read from the session file and re-projected (never the cache's copy)."""
        # Every value read here is confirmed by the session file below, so none needs a
        # whole column loaded and checksummed: each is read in place.
        if not 0 <= num < self.meta["items"]:
            raise CorruptIndex(f"item {num} missing")
        if self.resident and "i_seq" not in self._columns:
            self._load_resident()
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


class _InPlace(Sequence[int]):
    """An array column's values read in place, one at a time (``_Stored._value``)."""

    def __init__(self, index: HistoryIndex, name: str, count: int) -> None:
        self._index, self._name, self._count = index, name, count

    def __len__(self) -> int:
        return self._count

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, at: int) -> int: ...
        @overload
        def __getitem__(self, at: slice) -> Sequence[int]: ...

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(self._count))]
        if at < 0:
            at += self._count
        if not 0 <= at < self._count:
            raise IndexError(at)
        return self._index._value(self._name, at)


def _hash_table(strings: Strings) -> array[int]:
    """The CRC-32 of each id shifted left 32 bits, plus its item number, sorted: 8 bytes per
    item, made in a few C-level passes (split, CRC, one sort of plain integers)."""
    pieces: list[bytes] = strings.data.split(b"\n")[1:-1]
    if len(pieces) != len(strings):  # some id holds a newline: encode one by one
        pieces = [text.encode("utf-8", "surrogatepass") for text in strings.all()]
    keys = [crc << 32 | num for num, crc in enumerate(map(zlib.crc32, pieces))]
    keys.sort()
    return array("Q", keys)
