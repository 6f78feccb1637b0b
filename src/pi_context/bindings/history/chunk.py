"""One chunk of entry lines indexed at once: the index build's inner loop, batched.

A chunk's lines are decoded one call each (typed, ``lines.EntryLine``), and then every column
is extended by whole-list operations (attribute lists, ``map``, ``accumulate``, one join of the
chunk's item texts) rather than by a dozen appends per line. Only the few entries that can
name a window (reset markers, boots) or flip a checkpoint (compactions), and the lines the
typed decoder refuses (read as the loader reads them), take a step of their own.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import accumulate, chain, repeat
from operator import attrgetter
from typing import IO, Any

from pi_context.bindings.session.decoders import FAST_DECODE_ERRORS
from pi_context.bindings.session.dialect import BOOT, RESET_MARKER, is_kind
from pi_context.bindings.session.windows import (
    is_reset_marker,
    marker_window_id,
    names_fork_safe_window,
    names_upstream_window,
)
from pi_context.support.jsonlimits import MAX_DEPTH, deeper_than

from .format import _FLIP, _STAMP, _SYSTEM, _UPSTREAM, _WHOLE, _Entries
from .lines import DECODE_ENTRY_PLAIN, EntryLine, entry_line, entry_rows

BIG_TEXT = 1 << 22  # an item's text longer than this is written to the content file in pieces
_FIELDS = attrgetter("type", "id", "parentId", "timestamp")
_SPECIAL = ("custom", "custom_message", "compaction")  # entries that take a step of their own


def _decode(line: bytes) -> EntryLine | None:
    """The typed decoding of one line, or None where the careful parse must decide."""
    if len(line) > MAX_DEPTH and deeper_than(line):
        return None  # the careful parse names the limit (and the loader skips the line)
    try:
        return DECODE_ENTRY_PLAIN(line)
    except FAST_DECODE_ERRORS:
        return None


class Columns:
    """The columns one build (or append) extends, chunk by chunk."""

    def __init__(self, new: _Entries, items: int, names: dict[str, int], session_id: str) -> None:
        self.new = new
        self.items = items  # the number of the next item
        self.names = names  # tool name -> code
        self.new_names: list[str] = []
        self.session_id = session_id
        self.offs, self.lens = array("q"), array("q")
        self.item_lens, self.item_seqs = array("q"), array("q")
        self.nchars, self.tools = array("q"), array("I")
        self.item_ids: list[str] = []

    def add(
        self, lines: list[bytes], starts: list[int], out: IO[bytes], parse: Callable[[bytes], Any]
    ) -> None:
        """Index ``lines`` (complete entry lines; ``starts``: each one's offset in the file),
        writing their item texts to ``out``; ``parse`` reads a line as the loader does."""
        decoded = list(map(_decode, lines))
        if None in decoded:
            for at, entry in enumerate(decoded):
                if entry is None:
                    value = parse(lines[at])
                    decoded[at] = entry_line(value) if type(value) is dict else None
        fields = list(map(_FIELDS, decoded)) if None not in decoded else []
        if len(fields) != len(decoded) or not _all_kept(fields):
            keep = [
                at
                for at, entry in enumerate(decoded)
                if entry is not None
                and entry.type != "session"
                and type(entry.id) is str
                and entry.id
            ]
            decoded = [decoded[at] for at in keep]
            lines = [lines[at] for at in keep]
            starts = [starts[at] for at in keep]
            fields = list(map(_FIELDS, decoded))
        if not decoded:
            return
        entries: list[EntryLine] = decoded  # type: ignore[assignment]  # None: none left
        kinds, ids, parents, stamps = zip(*fields, strict=True)
        new = self.new
        seq = new.first + len(new.ids)
        rows = list(map(entry_rows, entries))
        counts = list(map(len, rows))
        item0 = list(accumulate(counts, initial=self.items))
        new.item0 += item0[:-1]
        flags = bytearray([_STAMP if type(stamp) is str else 0 for stamp in stamps])
        markers = [""] * len(entries)
        for at, kind in enumerate(kinds):
            if kind == "custom" or kind == "custom_message" or kind == "compaction":
                flags[at] |= self._special(lines[at], entries[at], rows[at], markers, at)
        new.ids += ids
        new.parents += [parent if type(parent) is str else "" for parent in parents]
        new.markers += markers
        new.stamps += [stamp if type(stamp) is str else "" for stamp in stamps]
        new.flags += flags
        self.offs.extend(starts)
        self.lens.extend(map(len, lines))
        flat = list(chain.from_iterable(rows))
        if not flat:
            return
        codes, item_ids, contents, names = zip(*flat, strict=True)
        new.roles += bytes(codes)
        self.item_ids += item_ids
        self.item_seqs.extend(chain.from_iterable(map(repeat, range(seq, seq + len(rows)), counts)))
        nchars = list(map(len, contents))
        self.nchars.extend(nchars)
        self.tools.extend(self._tool_codes(names))
        self.items = item0[-1]
        if max(nchars) > BIG_TEXT:  # in pieces: one copy, not two
            for content in contents:
                self.item_lens.append(_write_text(out, content))
            return
        texts = [content.encode("utf-8", "surrogatepass") for content in contents]
        self.item_lens.extend(map(len, texts))
        out.write(b"".join(texts))  # past the committed length: unseen until the commit

    def _tool_codes(self, names: tuple[str | None, ...]) -> list[int]:
        """Each item's tool code (0: none), new names numbered in order of appearance."""
        codes = self.names
        for name in dict.fromkeys(names):
            if name is not None and name not in codes:
                codes[name] = len(codes) + 1
                self.new_names.append(name)
        return [0 if name is None else codes[name] for name in names]

    def _special(
        self,
        line: bytes,
        entry: EntryLine,
        rows: list[Any],
        markers: list[str],
        at: int,
    ) -> int:
        """The flags of a custom entry, custom message or compaction (and its marker)."""
        kind = entry.type
        if kind == "compaction":
            return _FLIP if any(row[0] == _SYSTEM for row in rows) else 0
        custom_type = entry.customType
        if not (
            (kind == "custom" and is_kind(custom_type, RESET_MARKER))
            or (kind == "custom_message" and is_kind(custom_type, BOOT))
        ):
            return 0
        # Only a marker or a boot can name a window: these few lines are read as the loader
        # reads them, whole.
        from .build import _parse

        value = _parse(line)
        flags = 0
        marker = ""
        if is_reset_marker(value):
            marker = markers[at] = marker_window_id(value)
        if marker or kind == "custom_message":
            if names_upstream_window(value, self.session_id):
                flags |= _UPSTREAM
            elif names_fork_safe_window(value, self.session_id):
                flags |= _WHOLE
        return flags


def _all_kept(fields: list[tuple[Any, Any, Any, Any]]) -> bool:
    """Whether every entry is indexed: none a header, each with a non-empty string id."""
    kinds, ids = [f[0] for f in fields], [f[1] for f in fields]
    return "session" not in kinds and "" not in ids and set(map(type, ids)) <= {str}


def _write_text(out: IO[bytes], content: str) -> int:
    """Write a long item's text in pieces (a piece of a surrogate pair encodes alike apart);
    its length in bytes."""
    size = 0
    for at in range(0, len(content), BIG_TEXT):
        piece = content[at : at + BIG_TEXT].encode("utf-8", "surrogatepass")
        out.write(piece)
        size += len(piece)
    return size
