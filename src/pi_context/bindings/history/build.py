"""Building the history index: a rebuild from nothing, and the incremental append of the
complete lines past the indexed end (entry and item columns, content file, the file leaf's view)."""

from __future__ import annotations

import os
import sqlite3
import zlib
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import pi_context.support.cache as cache
from pi_context.bindings.session.jsonl import JSONLineError, js_trim, js_truthy, parse
from pi_context.support.regular import open_regular

from .columns import CorruptIndex, add_part, checksums, pack_strings, put_whole
from .format import (
    SCHEMA,
    Unindexable,
    _content_file,
    _Entries,
    _store_meta,
)
from .scan import Digest, chunks, snapshot
from .views import _Views

if TYPE_CHECKING:
    from .chunk import Columns


class _Build(_Views):
    """The writing side of a history index (``HistoryIndex`` is one)."""

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
        # Created here, by this call (O_EXCL, never through a link), and written through this
        # very descriptor: a file swapped in under the name meanwhile is never written to.
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        content, _info = open_regular(_content_file(self.directory, meta), flags, 0o600)
        self.meta = meta
        self._columns = {}
        self.file_view = None
        self._append(db, meta, fd, Digest(), snapshot(stat, taken_ns), content)

    def _append(
        self,
        db: sqlite3.Connection,
        meta: dict[str, Any],
        fd: int,
        digest: Digest,
        seen: list[int],
        content_fd: int | None = None,
    ) -> None:
        """Index the complete lines past ``meta['end']``; update the file leaf's view.

        ``digest`` is that of the indexed prefix, and goes on over the lines read here;
        ``seen`` is the file's snapshot taken before any of them was read; ``content_fd`` the
        content file a rebuild has just created (taken over: closed here), else it is opened
        (never through a link) and must be the user's own, with no other name."""
        self.meta = meta
        self._columns = {}
        start = meta["end"]
        roles = bytearray()
        new = _Entries(first=meta["entries"], roles=roles, item_base=meta["items"])
        names = {name: code for code, name in enumerate(self._tool_names(meta), 1)}
        committed = meta["committed"]
        session_id: str | None = meta["session_id"]
        content_path = _content_file(self.directory, meta)
        offset = start
        tail = b""
        batch: Columns | None = None
        if content_fd is None:
            content_fd, held = open_regular(content_path, os.O_RDWR | os.O_NOFOLLOW)
        else:
            held = os.fstat(content_fd)
        if held.st_uid != os.getuid() or held.st_nlink != 1:
            os.close(content_fd)
            raise CorruptIndex("the content file is not the index's own")
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
                    end_of_chunk = chunk_start + len(chunk) + 1
                else:
                    cut = chunk.rfind(b"\n") + 1
                    if cut == 0:
                        tail = chunk
                        break
                    lines = chunk.split(b"\n")
                    lines.pop()  # after the last newline: nothing (chunks end at one)
                    digest.update(chunk)
                    end_of_chunk = chunk_start + len(chunk)
                starts = list(accumulate([len(line) + 1 for line in lines], initial=chunk_start))
                starts.pop()
                offset = end_of_chunk
                skip = 0
                while session_id is None and skip < len(lines):
                    from pi_context.bindings.session.migrate import needs_migration
                    from pi_context.bindings.session.store import is_header

                    value = _parse(lines[skip])
                    skip += 1
                    if value is None:
                        continue
                    if not is_header(value) or needs_migration([value]):
                        raise Unindexable("no current header: the loader decides")
                    session_id = meta["session_id"] = value["id"]
                if session_id is None:
                    continue
                if batch is None:
                    # The typed decoding (msgspec) is imported once there are lines to index:
                    # a call that finds none (a warm call) never loads it.
                    from .chunk import Columns

                    batch = Columns(new, meta["items"], names, session_id)
                if skip:
                    lines, starts = lines[skip:], starts[skip:]
                batch.add(lines, starts, out, _parse)
                del lines, starts
            out.truncate()
            out.flush()
            written = os.fstat(out.fileno())
        num = meta["items"] if batch is None else batch.items
        offs, lens = (array("q"), array("q")) if batch is None else (batch.offs, batch.lens)
        item_lens = array("q") if batch is None else batch.item_lens
        item_seqs = array("q") if batch is None else batch.item_seqs
        nchars = array("q") if batch is None else batch.nchars
        tools = array("I") if batch is None else batch.tools
        item_ids: list[str] = [] if batch is None else batch.item_ids
        new_names: list[str] = [] if batch is None else batch.new_names
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
            keys: list[int] = []  # a filter (a repeated checksum is harmless)
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
                    keys += checksums(data, values, base == 0)
            # A parent that is the id of the entry before it has its checksum there already:
            # only the others (the first, and each that starts a branch) are added.
            keys += [
                zlib.crc32(parent.encode("utf-8", "surrogatepass"))
                for parent, before in zip(new.parents, ["", *new.ids], strict=False)
                if parent != before
            ]
            keys.sort()
            columns.append(("e_keys", array("I", keys).tobytes()))
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


def _parse(line: bytes) -> Any:
    """A complete line's value as the loader reads it, or None when the loader skips it.

    For the few lines read whole (the header, markers and boots while building, an item's
    entry when it is shown): the careful parse, which gives the loader's value for every line
    the fast decoder takes too, without importing the fast decoder into a warm call."""
    from pi_context.bindings.session.store import SKIPPED, parse_chunk

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
