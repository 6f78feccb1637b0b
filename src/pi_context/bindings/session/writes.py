"""The byte layer every file write of ours goes through, and its fault-injection seam.

``write_all`` writes all of ``data`` (looping over short writes), ``fsync`` forces it to stable
storage; both pass through one seam so a test can make the filesystem fail exactly where it
wants: ``failing_writes(n)`` fails the n-th write from then on (a short write of half its
bytes, then ``ENOSPC``; every later write fails too, as on a full disk). ``append_all`` and
``unlink_quietly`` give appends and creates their all-or-nothing shape: an append that fails
is truncated back to the size the file had, a create that fails removes what it created.

Session files, the destination of a handoff and the operation log all write through here, so
one seam covers every write a handoff makes.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


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


_plan: FaultPlan | None = None


@contextmanager
def failing_writes(
    fail_at: int | None, *, sticky: bool = True, partial: bool = True, error: int = errno.ENOSPC
) -> Iterator[FaultPlan]:
    """Within the block, the ``fail_at``-th write fails (None: count writes, fail none)."""
    global _plan
    previous = _plan
    _plan = FaultPlan(fail_at, sticky, partial, error)
    try:
        yield _plan
    finally:
        _plan = previous


def arm(plan: FaultPlan | None) -> FaultPlan | None:
    """Install ``plan`` (None: none) until the next ``arm``; the plan it replaces is returned.
    For a test whose fault must start and end at points a ``with`` block cannot span."""
    global _plan
    previous, _plan = _plan, plan
    return previous


def _fail(plan: FaultPlan) -> OSError:
    return OSError(plan.error, os.strerror(plan.error))


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (short writes are continued)."""
    view = memoryview(data)
    plan = _plan
    if plan is not None and data and plan.corrupt_at == plan.writes + 1:
        info = os.fstat(fd)
        middle = len(data) // 2
        plan.corrupted = (info.st_dev, info.st_ino, info.st_size + middle, data[middle])
        view = memoryview(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :])
    while view:
        plan = _plan
        if plan is not None:
            allowed = plan.decide(len(view))
            if allowed is not None:
                if allowed:
                    os.write(fd, view[:allowed])
                raise _fail(plan)
        written = os.write(fd, view)
        view = view[written:]


def fsync(fd: int) -> None:
    os.fsync(fd)


def append_all(fd: int, data: bytes, *, sync: bool = False) -> None:
    """Append ``data`` to ``fd`` (opened ``O_APPEND``) all or nothing: after a failed write
    (or fsync) the file is truncated back to its size before the call, so it keeps neither a
    torn line nor a line the caller believes was not written."""
    size = os.fstat(fd).st_size
    try:
        write_all(fd, data)
        if sync:
            fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):  # else nothing more can be done; the caller
            os.ftruncate(fd, size)  # reports the write failure
        raise


def unlink_quietly(path: Path) -> None:
    """Remove a file this process created and failed to complete."""
    with contextlib.suppress(OSError):
        os.unlink(path)


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
