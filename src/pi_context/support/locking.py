"""Advisory file locks whose waits end.

A blocking ``flock`` waits for ever on a holder that was stopped (``SIGSTOP``, a debugger, a
suspended laptop lid) or that hangs. Every lock here is taken by polling a non-blocking
``flock`` until a deadline; past it the caller gets ``LockTimeout`` (a ``TimeoutError``, so an
``OSError``) and decides what to do instead: answer without a cache, or name the wait.
"""

from __future__ import annotations

import fcntl
import time


class LockTimeout(TimeoutError):
    """The lock stayed held by someone else for the whole wait."""


def flock_within(fd: int, seconds: float, what: str = "the lock") -> None:
    """Take an exclusive ``flock`` on ``fd``, waiting at most ``seconds``."""
    deadline = time.monotonic() + seconds
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockTimeout(f"{what} has been held by another process for over {seconds:g} s")
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)
