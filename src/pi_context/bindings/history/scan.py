"""How the history index reads its session file: whole lines, and a digest of every byte read.

The index vouches for the bytes it has read, all of them: ``Digest`` hashes the indexed prefix
as it is read (a rebuild or an append), so checking an index against its file means hashing
the prefix again and comparing (``Digest.of``), after which the same digest goes on over the
new bytes. ``Snapshot`` is the file's ``stat`` taken before a read; when the file's ``stat`` is
still exactly that, and the snapshot is old enough that a write in the same clock tick would
have shown (``RACY_NS``), the file is unchanged and nothing needs reading.

``chunks`` reads the file in chunks that end at a line end; a line longer than a chunk is
found first and then read alone, with one allocation of its exact size (a 1 GiB line costs
1 GiB, not the several copies that joining and splitting pieces makes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

READ_CHUNK = 1 << 20  # the file is indexed in chunks of complete lines (small: fewer cache misses)
RACY_NS = 2_000_000_000
"""A snapshot younger than this (its ctime against the time it was taken) proves nothing: a
write in the same tick of a coarse file-system clock leaves ``stat`` unchanged. Two seconds
covers the coarsest clocks in use (FAT); a file written that recently is hashed again."""


class Digest:
    """SHA-1 of a file's first ``length`` bytes, extended as more are read."""

    __slots__ = ("_hash", "length")

    def __init__(self) -> None:
        import hashlib  # imported when a digest is made: not on a warm call's path

        self._hash = hashlib.sha1(usedforsecurity=False)
        self.length = 0

    @classmethod
    def of(cls, fd: int, length: int) -> Digest:
        """The digest of the first ``length`` bytes of ``fd`` (read in chunks; a file shorter
        than that gives a digest of fewer bytes, which matches nothing stored)."""
        digest = cls()
        buffer = bytearray(READ_CHUNK)
        view = memoryview(buffer)
        while digest.length < length:
            want = min(READ_CHUNK, length - digest.length)
            got = os.preadv(fd, [view[:want]], digest.length)
            if got <= 0:
                break
            digest.update(view[:got])
        return digest

    def update(self, data: bytes | memoryview) -> None:
        self._hash.update(data)
        self.length += len(data)

    def hexdigest(self) -> str:
        return f"{self.length}:{self._hash.hexdigest()}"


def snapshot(stat: os.stat_result, taken_ns: int) -> list[int]:
    """What ``stat`` says about the file's bytes, and when it was taken."""
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, taken_ns]


def unchanged(seen: Any, stat: os.stat_result) -> bool:
    """Whether the file is as it was when ``seen`` (a stored ``snapshot``) was taken."""
    if type(seen) is not list or len(seen) != 4 or not all(type(v) is int for v in seen):
        return False
    size, mtime_ns, ctime_ns, taken_ns = seen
    if [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns] != [size, mtime_ns, ctime_ns]:
        return False
    return bool(ctime_ns < taken_ns - RACY_NS)


def chunks(fd: int, start: int) -> Iterator[tuple[bytes, int, bool]]:
    """The bytes from ``start`` to the end as ``(data, offset, single)``: ``data`` ends at a
    line end, except a last line without one; ``single`` marks a line longer than a chunk,
    given alone and without its ``\\n`` (read with one allocation of its size)."""
    offset = start
    while True:
        chunk = os.pread(fd, READ_CHUNK, offset)
        if not chunk:
            return
        cut = chunk.rfind(b"\n") + 1
        if cut:
            yield (chunk[:cut] if cut < len(chunk) else chunk), offset, False
            offset += cut
            continue
        end = _line_end(fd, offset + len(chunk))
        if end is None:  # an unterminated last line: the rest of the file
            rest = os.pread(fd, max(0, os.fstat(fd).st_size - offset), offset)
            if rest:
                yield rest, offset, False
            return
        del chunk
        line = os.pread(fd, end - 1 - offset, offset)
        if len(line) != end - 1 - offset or b"\n" in line[-READ_CHUNK:]:
            return  # the file changed under the read: stop at what is whole
        yield line, offset, True
        offset = end


def _line_end(fd: int, offset: int) -> int | None:
    """The offset just past the next ``\\n`` at or after ``offset``; None at the end of file."""
    while True:
        chunk = os.pread(fd, READ_CHUNK, offset)
        if not chunk:
            return None
        at = chunk.find(b"\n")
        if at >= 0:
            return offset + at + 1
        offset += len(chunk)
