"""Opening files that must be regular files: sessions, cache files, ``.git`` pointers.

``open()`` on a FIFO waits for a writer that may never come, and reading ``/dev/zero`` or
``/dev/urandom`` never ends. Every reader of a file it did not create opens it here:
``O_NONBLOCK`` so that opening a FIFO returns at once, then ``fstat`` on the open descriptor
(no race with a swap of the name), and anything that is not a regular file is refused with
``NotRegularFile`` naming what it is. Reads are bounded: ``read_bounded`` by a byte count,
``bounded_reader`` by the size the file had when it was opened.
"""

from __future__ import annotations

import errno
import io
import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Watch = Callable[[memoryview], None]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(OSError):
    """A path that names something other than a regular file (an ``OSError``, so callers
    that already handle unreadable files handle this one the same way)."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", os.fspath(path))
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of this mode is, in words."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def open_regular(
    path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o644
) -> tuple[int, os.stat_result]:
    """An open descriptor of ``path`` and its ``fstat``; refuses anything not a regular file.

    ``flags`` are ``os.open`` flags (``O_RDONLY`` by default; ``O_NONBLOCK`` and
    ``O_CLOEXEC`` are added, and ``O_NONBLOCK`` is cleared again once the file is known to be
    regular). Raises ``NotRegularFile``, or the ``OSError`` of the open itself.
    """
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY, mode)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, kind_of(info.st_mode))
        if not flags & os.O_NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_bounded(fd: int, limit: int, offset: int = 0) -> bytes:
    """Up to ``limit`` bytes of ``fd`` from ``offset`` (fewer at the end of the file)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.pread(fd, min(remaining, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (at most ``limit``; by default as many as it held
    when opened). ``NotRegularFile`` for anything else."""
    fd, info = open_regular(path)
    try:
        return read_bounded(fd, info.st_size if limit is None else limit)
    finally:
        os.close(fd)


class _Limited(io.RawIOBase):
    """The first ``size`` bytes of a descriptor, as a raw stream (the descriptor is owned)."""

    def __init__(self, fd: int, size: int, watch: Watch | None = None) -> None:
        self._fd = fd
        self._left = size
        self._watch = watch

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer).cast("B")
        count = os.readv(self._fd, [view[: min(len(view), self._left)]])
        self._left -= count
        if self._watch is not None and count:
            self._watch(view[:count])
        return count

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()


def bounded_reader(
    fd: int, size: int, buffering: int = 1 << 20, watch: Watch | None = None
) -> io.BufferedReader:
    """A buffered binary stream over the first ``size`` bytes of ``fd`` (which it closes):
    a file that keeps growing while it is read still ends. ``watch`` sees every chunk read,
    in order, before any of its bytes is returned."""
    return io.BufferedReader(_Limited(fd, size, watch), buffering)


def special_entry(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists as neither a regular file nor a directory (following
    links), else None: for files that another library opens by name (SQLite)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None
    return kind_of(info.st_mode)
