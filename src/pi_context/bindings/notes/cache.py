"""An in-process cache of parsed notes, validated against the file on every use.

A listing or search over tens of thousands of notes spends its time opening, reading and
parsing files that have not changed since the last call. Each entry remembers the file's
identity and stamp (device, inode, size, mtime, ctime, link count) as seen by the directory
walk that every call performs anyway; a use with any difference re-reads the file. Every
write in this store and the extension's replaces the file (a new inode); an in-place edit by
another tool changes mtime/ctime (and ``ctime`` cannot be forged back with ``utime``).
Timestamps are coarse on some filesystems, so a file modified in the last ``SETTLE_NS`` is
never cached: two writes inside one timestamp tick cannot leave a stale entry. The cache never
decides what exists — the walk does — so a deleted note can never be listed from it.

``diskcache`` keeps the same entries across processes, under the same rules.
"""

from __future__ import annotations

import os
import time

from pi_context.bindings.notes.frontmatter import NoteMeta, ParsedNote
from pi_context.support.frozen import field, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

SETTLE_NS = 2_000_000_000
MAX_FILE_BYTES = 64 * 1024
"""Larger files are re-read each time (they are rare, and would crowd the cache)."""
MAX_TOTAL_BYTES = 256 * 1024 * 1024

Stamp = tuple[int, int, int, int, int, int]
"""(device, inode, size, mtime ns, ctime ns, link count)."""


def stamp_of(info: os.stat_result) -> Stamp:
    """A file's or folder's stamp from its ``stat``."""
    return (
        info.st_dev,
        info.st_ino,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
        info.st_nlink,
    )


def settled(stamp: Stamp, now_ns: int | None = None) -> bool:
    """Untouched (neither mtime nor ctime) for ``SETTLE_NS``."""
    now = time.time_ns() if now_ns is None else now_ns
    return now - max(stamp[3], stamp[4]) >= SETTLE_NS


def cacheable(stamp: Stamp, now_ns: int | None = None) -> bool:
    """Small, singly linked and settled."""
    if stamp[2] > MAX_FILE_BYTES or stamp[5] != 1:
        return False
    return settled(stamp, now_ns)


@record
class Entry:
    """One parsed note file. ``body`` is ``None`` when only its metadata is known (a listing
    served from the disk cache); ``memo`` holds objects built from it, keyed by their user."""

    stamp: Stamp
    meta: NoteMeta
    size_bytes: int
    """UTF-8 bytes of the file after the metadata block."""
    header: str
    """The file's text before the body: ``header + body`` is the whole text."""
    has_frontmatter: bool
    legacy_keys: tuple[str, ...]
    malformed: tuple[str, ...]
    extra_lines: tuple[str, ...]
    body: str | None
    memo: dict[Any, Any] = field(init=False, default_factory=dict)
    storable: bool | None = field(init=False, default=None)
    """Whether the disk cache can hold it (set by ``diskcache.storable``)."""
    addressable: bool = field(init=False, default=False)
    """True when the disk cache recorded that its path is a valid note address."""

    @staticmethod
    def of(stamp: Stamp, text: str, parsed: ParsedNote) -> Entry:
        header = text[: parsed.header_chars]
        size = max(0, stamp[2] - len(header.encode("utf-8", "surrogatepass")))
        entry = Entry(
            stamp,
            parsed.meta,
            size,
            header,
            parsed.has_frontmatter,
            parsed.legacy_keys,
            parsed.malformed,
            parsed.extra_lines,
            parsed.body,
        )
        entry.memo["parsed"] = parsed
        return entry

    def parsed(self) -> ParsedNote:
        """The full parse (the body must be known)."""
        found: ParsedNote | None = self.memo.get("parsed")
        if found is None:
            assert self.body is not None
            found = ParsedNote(
                self.meta,
                self.body,
                len(self.header),
                self.has_frontmatter,
                self.legacy_keys,
                self.malformed,
                self.extra_lines,
            )
            self.memo["parsed"] = found
        return found

    def text(self) -> str:
        assert self.body is not None
        return self.header + self.body


class NoteCache:
    def __init__(self) -> None:
        self._homes: dict[str, dict[str, Entry]] = {}
        self._bytes = 0

    def home(self, home: str) -> dict[str, Entry]:
        """The live map of ``home``'s cached entries by path (check each stamp before use)."""
        return self._homes.setdefault(home, {})

    def get(self, home: str, path: str, stamp: Stamp) -> Entry | None:
        entry = self._homes.get(home, {}).get(path)
        if entry is None or entry.stamp != stamp:
            return None
        return entry

    def put(self, home: str, path: str, entry: Entry, now_ns: int | None = None) -> None:
        """Keep ``entry`` if it is ``cacheable`` (the caller read it with this stamp)."""
        if not cacheable(entry.stamp, now_ns):
            return
        size = entry.stamp[2]
        entries = self.home(home)
        old = entries.pop(path, None)
        if old is not None:
            self._bytes -= old.stamp[2]
        if self._bytes + size > MAX_TOTAL_BYTES:
            for other in self._homes.values():
                other.clear()  # emptied in place: callers may hold these maps
            self._bytes = 0
        entries[path] = entry
        self._bytes += size

    def clear(self) -> None:
        for entries in self._homes.values():
            entries.clear()
        self._bytes = 0


CACHE = NoteCache()
"""Shared by every store in the process (a host builds a new store per tool call)."""
