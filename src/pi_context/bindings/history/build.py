"""Building the history index: a rebuild from nothing, and the incremental append of the
complete lines past the indexed end (entry and item columns, content file, the file leaf's view)."""

from __future__ import annotations

import os
import zlib
from array import array
from collections.abc import Callable
from itertools import accumulate

import pi_context.support.cache as cache
from pi_context.bindings.session.dialect import BOOT, RESET_MARKER, is_kind
from pi_context.bindings.session.jsonl import (
    _JSON_WS,
    JSONLineError,
    _scan_once,
    js_trim,
    js_truthy,
    parse,
)
from pi_context.bindings.session.windows import (
    is_reset_marker,
    marker_window_id,
    names_fork_safe_window,
    names_upstream_window,
)
from pi_context.support.jsonlimits import SHORTEST_TOO_DEEP, deeper_than, depth_error
from pi_context.support.regular import open_regular
from pi_context.support.sqlite import sqlite3

from .columns import CorruptIndex, add_part, checksums, pack_strings, put_whole
from .format import (
    _FLIP,
    _STAMP,
    _SYSTEM,
    _UPSTREAM,
    _WHOLE,
    SCHEMA,
    Unindexable,
    _content_file,
    _Entries,
    _store_meta,
)
from .items import ITEM_ENTRY_TYPES
from .scan import Digest, chunks, snapshot
from .views import _Views

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from .lines import EntryLine, Row

BIG_TEXT = 1 << 22  # an item's text longer than this is written to the content file in pieces


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
        add_off, add_len = offs.append, lens.append
        window_types: dict[tuple[str, str], bool] = {}  # custom types seen: marker or boot?
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
                # The typed decoding (msgspec) is imported once there are lines to index: a
                # call that finds none (a warm call) never loads it.
                decode_entry, entry_line, entry_rows, decode_errors = _typed()

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
                chunk_rows: list[Row] = []  # the chunk's items, made columns at its end
                add_rows, add_row_seq = chunk_rows.extend, item_seqs.append
                add_row_seqs = item_seqs.extend
                offset = chunk_start
                for line in lines:
                    line_start = offset
                    offset += len(line) + 1
                    if session_id is None:
                        from pi_context.bindings.session.migrate import needs_migration
                        from pi_context.bindings.session.store import is_header

                        value = _parse(line)
                        if value is None:
                            continue
                        if not is_header(value) or needs_migration([value]):
                            raise Unindexable("no current header: the loader decides")
                        session_id = meta["session_id"] = value["id"]
                        continue
                    # Nesting past the limit takes an opening and a closing bracket per level:
                    # a shorter line that parses is within it (one that does not parse is left
                    # to ``_parse``, which checks the depth itself).
                    deep = len(line) > SHORTEST_TOO_DEEP and deeper_than(line)
                    try:
                        # DECODE_ENTRY spelt out: the depth check inline, no call per line
                        if deep:
                            raise depth_error()
                        entry = decode_entry(line)
                    except decode_errors:
                        value = _parse(line) if deep else _refused(line)
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
                        rows = entry_rows(entry)
                        if rows:
                            add_rows(rows)
                            count = len(rows)
                            if count == 1:
                                add_row_seq(seq)
                            else:
                                add_row_seqs([seq] * count)
                            num += count
                            if kind == "compaction" and rows[0][0] == _SYSTEM:
                                flags |= _FLIP
                    marker = ""
                    if (kind == "custom" or kind == "custom_message") and _names_window(
                        kind, entry.customType, window_types
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
                if chunk_rows:
                    _add_items(chunk_rows, names, new_names, roles, nchars, tools)
                    item_ids += [row[1] for row in chunk_rows]
                    item_lens.extend(_texts(out, chunk_rows))
                del lines, chunk_rows
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


def _typed() -> tuple[
    Callable[[bytes], EntryLine],
    Callable[[dict[str, Any]], EntryLine],
    Callable[[EntryLine], list[Row]],
    tuple[type[Exception], ...],
]:
    """The typed decoding of entry lines (``lines``; without its depth check, which the caller
    makes) and the errors that send a line to the careful parse; imported on first use."""
    from pi_context.bindings.session.decoders import FAST_DECODE_ERRORS

    from .lines import DECODE_ENTRY_PLAIN, entry_line, entry_rows

    return DECODE_ENTRY_PLAIN, entry_line, entry_rows, FAST_DECODE_ERRORS


def _names_window(kind: str, custom_type: Any, seen: dict[tuple[str, str], bool]) -> bool:
    """Whether a custom entry is a reset marker, or a custom message a boot: the only
    entries that can name a window (remembered per custom type: a session repeats a few)."""
    if type(custom_type) is not str:
        return is_kind(custom_type, RESET_MARKER if kind == "custom" else BOOT)
    known = seen.get((kind, custom_type))
    if known is None:
        known = seen[kind, custom_type] = is_kind(
            custom_type, RESET_MARKER if kind == "custom" else BOOT
        )
    return known


def _add_items(
    rows: list[Row],
    names: dict[str, int],
    new_names: list[str],
    roles: bytearray,
    nchars: array[int],
    tools: array[int],
) -> None:
    """A chunk's items into the role, length and tool columns (new tool names numbered in
    order of appearance)."""
    roles.extend([row[0] for row in rows])
    nchars.extend([len(row[2]) for row in rows])
    found = [row[3] for row in rows]
    for name in dict.fromkeys(found):
        if name is not None and name not in names:
            names[name] = len(names) + 1
            new_names.append(name)
    tools.extend([0 if name is None else names[name] for name in found])


def _texts(out: Any, rows: list[Row]) -> list[int]:
    """Write a chunk's item texts (past the committed length: unseen until the commit);
    their lengths in bytes. A text longer than ``BIG_TEXT`` is written in pieces."""
    contents = [row[2] for row in rows]
    if max(map(len, contents)) > BIG_TEXT:  # in pieces: one copy, not two
        return [_write_text(out, content) for content in contents]
    texts = [content.encode("utf-8", "surrogatepass") for content in contents]
    out.write(b"".join(texts))
    return list(map(len, texts))


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


def _refused(line: bytes) -> Any:
    """``_parse`` of a line the typed decoder refused that is known not to nest past the
    limit (as a rule, for a lone surrogate escape): valid UTF-8 without the constants the
    loader refuses is scanned at once, as ``jsonl.parse`` scans it; anything else, or
    anything the scan does not take whole as an object, is left to ``_parse``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _parse(line)
    if "NaN" in text or "Infinity" in text:
        return _parse(line)
    body = text.strip(_JSON_WS)
    try:
        value, end = _scan_once(body, 0)
    except (StopIteration, ValueError, RecursionError):
        return _parse(line)
    if end != len(body) or type(value) is not dict:
        return _parse(line)
    return value


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
