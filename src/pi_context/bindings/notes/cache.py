"""An in-process cache of parsed notes, validated against the file on every use.

A listing or search over tens of thousands of notes spends its time opening, reading and
parsing files that have not changed since the last call. Each entry remembers the file's
identity and stamp (device, inode, size, mtime, ctime, link count) as seen by the directory
walk that every call performs anyway; a use with any difference re-reads the file. Every
write in this store and the extension's replaces the file (a new inode); an in-place edit by
another tool changes mtime/ctime. Timestamps are coarse on some filesystems, so a file
modified in the last ``SETTLE_NS`` is never served from the cache: two writes inside one
timestamp tick cannot leave a stale entry. The cache never decides what exists — the walk
does — so a deleted note can never be listed from it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pi_context.bindings.notes.frontmatter import ParsedNote

SETTLE_NS = 2_000_000_000
MAX_FILE_BYTES = 64 * 1024
"""Larger files are re-read each time (they are rare, and would crowd the cache)."""
MAX_TOTAL_BYTES = 256 * 1024 * 1024

Stamp = tuple[int, int, int, int, int, int]
"""(device, inode, size, mtime ns, ctime ns, link count)."""


@dataclass(frozen=True)
class Cached:
    stamp: Stamp
    text: str
    parsed: ParsedNote


class NoteCache:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Cached] = {}
        self._bytes = 0

    def get(self, home: str, path: str, stamp: Stamp) -> Cached | None:
        entry = self._entries.get((home, path))
        if entry is None or entry.stamp != stamp:
            return None
        return entry

    def put(self, home: str, path: str, stamp: Stamp, text: str, parsed: ParsedNote) -> None:
        size = stamp[2]
        if size > MAX_FILE_BYTES or stamp[5] != 1:
            return
        if time.time_ns() - max(stamp[3], stamp[4]) < SETTLE_NS:
            return  # too fresh: a second write within one timestamp tick would look the same
        old = self._entries.pop((home, path), None)
        if old is not None:
            self._bytes -= old.stamp[2]
        if self._bytes + size > MAX_TOTAL_BYTES:
            self._entries.clear()
            self._bytes = 0
        self._entries[(home, path)] = Cached(stamp, text, parsed)
        self._bytes += size

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0


CACHE = NoteCache()
"""Shared by every store in the process (a host builds a new store per tool call)."""
