"""Writes that land whole or not at all, even on a full disk.

An append that fails half-way (``ENOSPC`` after a short write, a failed ``fsync``) leaves a
torn line that every later reader trips over. ``append_whole`` truncates the file back to
where the append began before it raises; ``create_whole`` removes the file it created (and
the folders it made for it). Callers see the ``OSError``; the file keeps only whole appends.

``WRITE`` and ``FSYNC`` are the only calls that put bytes on disk here: a test replaces them
to fail the n-th write (the fault-injection seam), and a real full filesystem fails the same
calls.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

WRITE: Callable[[int, memoryview], int] = os.write
FSYNC: Callable[[int], None] = os.fsync


class TornWrite(OSError):
    """A failed append whose bytes could not be taken back (another writer appended after
    them, or the truncation failed too); ``__cause__`` is the write's own error."""


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` at the descriptor's position."""
    _write_counted(fd, data, [0])


def _write_counted(fd: int, data: bytes, done: list[int]) -> None:
    view = memoryview(data)
    while done[0] < len(view):
        written = WRITE(fd, view[done[0] :])
        if written <= 0:  # the system accepted nothing: as good as a full disk
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        done[0] += written


def append_whole(fd: int, data: bytes, *, sync: bool) -> None:
    """Append ``data`` to ``fd`` (opened ``O_APPEND``) whole, or leave the file as it was.

    Raises the write's ``OSError`` after truncating back; ``TornWrite`` when the bytes already
    written cannot be taken back.
    """
    start = os.lseek(fd, 0, os.SEEK_END)
    done = [0]
    try:
        _write_counted(fd, data, done)
        if sync:
            FSYNC(fd)
    except OSError as exc:
        _take_back(fd, start, done[0], sync, exc)
        raise


def _take_back(fd: int, start: int, written: int, sync: bool, cause: OSError) -> None:
    """Truncate the file back to ``start`` if it ends with exactly our ``written`` bytes."""
    if written == 0:
        return
    try:
        end = os.fstat(fd).st_size
        if end != start + written:
            raise TornWrite(
                errno.EIO,
                f"{cause.strerror or cause}; the file changed size during this append, so its "
                f"partial bytes at offset {start} could not be taken back",
            ) from cause
        os.ftruncate(fd, start)
        if sync:
            with contextlib.suppress(OSError):
                os.fsync(fd)
    except TornWrite:
        raise
    except OSError as again:
        raise TornWrite(
            errno.EIO,
            f"{cause.strerror or cause}; taking the partial append back failed too: "
            f"{again.strerror or again}",
        ) from cause


def create_whole(path: Path, data: bytes, *, sync: bool, mode: int = 0o644) -> None:
    """Create ``path`` (it must not exist) holding exactly ``data``, or leave nothing behind:
    on failure the file is removed, and so are the folders made for it.

    Raises ``FileExistsError`` when it exists, or the ``OSError`` of the failed step.
    """
    made = _make_parents(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except BaseException:
        _remove_folders(made)
        raise
    try:
        try:
            write_all(fd, data)
            if sync:
                FSYNC(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        _remove_folders(made)
        raise


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing ancestors; the ones made, innermost first."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current.parent != current:
        missing.append(current)
        current = current.parent
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                continue
            made.append(path)
    except BaseException:
        _remove_folders(list(reversed(made)))
        raise
    made.reverse()
    return made


def _remove_folders(made: list[Path]) -> None:
    """Remove folders this module made (innermost first), if they are still empty."""
    for path in made:
        with contextlib.suppress(OSError):
            os.rmdir(path)
