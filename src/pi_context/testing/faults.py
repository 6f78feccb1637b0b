"""Fault plans for the write layer's seam (``pi_context.support.writes``): a test's full or
lying disk.

Every file write of ours — session files, a handoff's destination, the operation log — puts its
bytes on disk through ``pi_context.support.writes.WRITE`` and ``FSYNC`` (appends and creates
there are all or nothing). A ``FaultPlan`` replaces those two calls so a test or the handoff
runtime conformance can make the filesystem fail exactly where it wants: ``failing_writes(n)``
fails the n-th write from then on (a short write of half its bytes, then ``ENOSPC`` for the
rest; every later write fails too, as on a full disk); ``corrupt_at`` lands a write with its
middle byte flipped and reports success (a lying disk), which ``repair`` puts back afterwards.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pi_context.support import writes as seam


@dataclass
class FaultPlan:
    """Which write fails: the ``fail_at``-th (1-based) and, when ``sticky``, every later one.

    ``writes`` counts every write that reached the seam, ``failed`` those that were failed."""

    fail_at: int | None = None
    sticky: bool = True
    partial: bool = True
    error: int = errno.ENOSPC
    writes: int = 0
    failed: int = 0
    corrupt_at: int | None = None
    """The write that lands with its middle byte flipped and reports success (a lying disk)."""
    corrupted: tuple[int, int, int, int] | None = None
    """(st_dev, st_ino, offset, original byte) of the flipped byte, for ``repair``."""
    owed: bool = False
    """The failing write was short (it took part of its bytes, as a nearly full disk does):
    the caller's next call for the rest fails."""

    def decide(self, size: int) -> int | None:
        """How many bytes this write may take before it fails (None: it succeeds)."""
        self.writes += 1
        if self.fail_at is None or self.writes < self.fail_at:
            return None
        if self.writes > self.fail_at and not self.sticky:
            return None
        self.failed += 1
        first = self.writes == self.fail_at
        return size // 2 if self.partial and first else 0

    def fail(self) -> OSError:
        return OSError(self.error, os.strerror(self.error))


_plan: FaultPlan | None = None
_REAL_WRITE: Callable[[int, memoryview], int] = seam.WRITE
_REAL_FSYNC: Callable[[int], None] = seam.FSYNC


def _write(fd: int, data: memoryview) -> int:
    plan = _plan
    if plan is None:
        return _REAL_WRITE(fd, data)
    if len(data) and plan.corrupt_at == plan.writes + 1:
        plan.writes += 1
        info = os.fstat(fd)
        middle = len(data) // 2
        original = data[middle]
        plan.corrupted = (info.st_dev, info.st_ino, info.st_size + middle, original)
        flipped = bytes(data[:middle]) + bytes([original ^ 0x01]) + bytes(data[middle + 1 :])
        _write_fully(fd, flipped)
        return len(data)
    if plan.owed:  # the rest of a short write: the disk is still full
        plan.owed = False
        raise plan.fail()
    allowed = plan.decide(len(data))
    if allowed is None:
        return _REAL_WRITE(fd, data)
    if allowed:  # a short write, as a real one returns it; the call for the rest fails
        _write_fully(fd, bytes(data[:allowed]))
        plan.owed = True
        return allowed
    raise plan.fail()


def _write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_REAL_WRITE(fd, view) :]


def _fsync(fd: int) -> None:
    _REAL_FSYNC(fd)


def arm(plan: FaultPlan | None) -> FaultPlan | None:
    """Install ``plan`` at the seam (None: the real calls) until the next ``arm``; the plan it
    replaces is returned. For a fault that must start and end where a ``with`` cannot span."""
    global _plan
    previous, _plan = _plan, plan
    seam.WRITE, seam.FSYNC = (_write, _fsync) if plan is not None else (_REAL_WRITE, _REAL_FSYNC)
    return previous


@contextmanager
def failing_writes(
    fail_at: int | None, *, sticky: bool = True, partial: bool = True, error: int = errno.ENOSPC
) -> Iterator[FaultPlan]:
    """Within the block, the ``fail_at``-th write fails (None: count writes, fail none)."""
    plan = FaultPlan(fail_at, sticky, partial, error)
    previous = arm(plan)
    try:
        yield plan
    finally:
        arm(previous)


def repair(plan: FaultPlan, path: Path) -> bool:
    """Put back the byte ``plan`` flipped, if it is in ``path`` (True: it was)."""
    if plan.corrupted is None:
        return False
    dev, ino, offset, byte = plan.corrupted
    info = os.stat(path)
    if (info.st_dev, info.st_ino) != (dev, ino):
        return False
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(bytes([byte]))
    plan.corrupted = None
    return True
