"""Talking to an implementation process over stdio, without ever hanging.

One thread does all the I/O with a selector: pending request bytes are written as the
implementation's stdin accepts them while its replies and its stderr are read, so pipelined
requests can never deadlock on a full pipe, no other thread holds a pipe, and every wait for
a reply has a timeout. The implementation runs in its own session, and stopping it kills its
whole process group, so a launcher's children cannot outlive the run. An exit, a hang or an
over-long line becomes an :class:`ImplementationFailure` that says what happened. (POSIX
pipes and process groups; select() on pipes is what makes this work.)
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import fcntl
import os
import select
import selectors
import shlex
import signal
import subprocess
import time
import weakref
from collections.abc import Iterable, Sequence
from typing import IO

from pi_context.checks.conformance.protocol import MAX_LINE, LineBuffer

POLL = 0.1  # how often a wait for a reply also checks whether the leader has exited
EXIT_GRACE = 1.0  # how long a process may take to exit on end of input before it is killed
STDERR_WAIT = 0.1  # how long a crash's last stderr lines may take to arrive
STDERR_KEPT = 16 * 1024  # bytes of stderr kept for error messages


class ImplementationFailure(Exception):
    """The implementation crashed, hung or broke the line framing."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "crash" | "hang" | "protocol"
        self.message = message


def split_command(command: str | Sequence[str]) -> list[str]:
    if isinstance(command, str):
        args = shlex.split(command)
        if not args:
            raise ValueError("the implementation command is empty")
        return args
    return list(command)


class Implementation:
    """One running implementation and every process it starts.

    The command runs as the leader of its own session (so of its own process group): a
    launcher such as ``sh -c 'impl; true'`` and anything it forks belong to that group, and
    stopping the implementation kills the whole group. stdout and stderr are read with the
    same selector as raw descriptors, so no thread ever holds a pipe that closing would wait
    for, and a grandchild that keeps the pipes open cannot make any call block.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 5.0,
        startup_timeout: float | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = split_command(command)
        self.command = command if isinstance(command, str) else shlex.join(command)
        self.timeout = timeout
        # the first reply after a (re)start also waits for the program to load
        self.startup_timeout = max(timeout, 10.0) if startup_timeout is None else startup_timeout
        self._fresh = True
        self.starts = 0
        self.replies = 0  # replies received since the current process started
        self.pgid: int | None = None
        self._cwd = cwd
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._writing = False
        self._out = bytearray()
        self._lines = LineBuffer(MAX_LINE)
        self._ready: collections.deque[bytes] = collections.deque()
        self._err = bytearray()  # the tail of stderr
        self._err_open = False

    def start_twin(self) -> Implementation | None:
        """Another process of the same command with the same settings, started; None when
        it cannot be started (the caller goes on with this one)."""
        twin = Implementation(
            self.args,
            timeout=self.timeout,
            startup_timeout=self.startup_timeout,
            cwd=self._cwd,
            env=self._env,
        )
        try:
            twin.start()
        except ImplementationFailure:
            return None
        return twin

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.close()
        try:
            proc = subprocess.Popen(
                self.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as err:
            raise ImplementationFailure(
                "crash", f"cannot start {self.command!r}: {err.strerror or err}"
            ) from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self.pgid = proc.pid  # a session leader leads its own process group
        _LIVE.add(self)
        self.starts += 1
        self.replies = 0
        self._fresh = True
        self._ready.clear()
        self._lines = LineBuffer(MAX_LINE)
        self._out = bytearray()
        self._err = bytearray()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
        for stream in (proc.stdin, proc.stdout):
            _widen(stream.fileno())
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
        self._selector.register(proc.stderr.fileno(), selectors.EVENT_READ)
        self._err_open = True
        self._writing = False

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """End the implementation: close its stdin, give the leader a moment to exit on
        end of input, then kill whatever is left of its process group. Never blocks for
        longer than that moment."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _close_quietly(proc.stdin)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=EXIT_GRACE)
        self._kill_group(proc)
        self._finish(proc)

    def kill(self) -> None:
        """Kill the implementation's whole process group at once."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._kill_group(proc)
        self._finish(proc)

    def _kill_group(self, proc: subprocess.Popen[bytes]) -> None:
        # ProcessLookupError: the whole group has already exited
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=EXIT_GRACE)

    def _finish(self, proc: subprocess.Popen[bytes]) -> None:
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            _close_quietly(stream)
        self._err_open = False
        _LIVE.discard(self)

    def __enter__(self) -> Implementation:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ requests

    def send(self, lines: Iterable[bytes]) -> None:
        """Queue request lines; they are written while replies are awaited."""
        if self._proc is None:
            self.start()
        self._out += b"".join(lines)
        self._flush_some()

    def _flush_some(self) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or not self._out:
            return
        try:
            written = os.write(proc.stdin.fileno(), self._out[:PIPE_SIZE])
        except BlockingIOError:
            written = 0
        except OSError:
            self._out.clear()  # the process is gone; reading reports how
            written = 0
        del self._out[:written]
        want_write = bool(self._out)
        if want_write != self._writing and self._selector is not None:
            self._writing = want_write
            if want_write:
                self._selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                self._selector.unregister(proc.stdin.fileno())

    def _read_stderr(self, fd: int) -> None:
        chunk = _read_some(fd)
        if chunk is None:
            return
        if not chunk:
            if self._selector is not None and self._err_open:
                self._selector.unregister(fd)
            self._err_open = False
            return
        self._err += chunk
        if len(self._err) > STDERR_KEPT:
            del self._err[: len(self._err) - STDERR_KEPT]

    def receive(self, what: str) -> bytes:
        """The next reply line, or an ImplementationFailure saying why there is none."""
        if not self._ready:
            self._await(what)
        self.replies += 1
        return self._ready.popleft()

    def receive_ready(self, what: str, limit: int) -> list[bytes]:
        """The reply lines that have arrived, at least one and at most ``limit`` (the rest
        stay for the next call): :meth:`receive` for a long pipelined batch, without a call
        per line. An ImplementationFailure when not even one comes."""
        ready = self._ready
        if not ready:
            self._await(what)
        if len(ready) <= limit:
            lines = list(ready)
            ready.clear()
        else:
            lines = [ready.popleft() for _ in range(limit)]
        self.replies += len(lines)
        return lines

    def _await(self, what: str) -> None:
        """Wait until at least one reply line is ready (the timeouts as in :meth:`receive`)."""
        proc, selector = self._proc, self._selector
        if proc is None or selector is None or proc.stdout is None or proc.stderr is None:
            raise ImplementationFailure("crash", f"the implementation is not running ({what})")
        out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
        limit = self.startup_timeout if self._fresh else self.timeout
        deadline = time.monotonic() + limit
        leader_gone: float | None = None
        while not self._ready:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._drain_stderr()
                tail = self._stderr_tail()
                self.kill()
                raise ImplementationFailure(
                    "hang",
                    f"no reply to {what} within {limit:g}s"
                    + (" of starting" if self._fresh else "")
                    + f"{self._count()} (the implementation and every process it started "
                    f"were stopped){tail}",
                )
            events = selector.select(min(remaining, POLL))
            if not events:
                # The leader may have exited while a process it started keeps stdout open:
                # no end of file will ever come, so its exit is the answer.
                if proc.poll() is not None:
                    now = time.monotonic()
                    leader_gone = leader_gone or now
                    if now - leader_gone >= EXIT_GRACE:
                        raise ImplementationFailure("crash", self._exit_message(what))
                continue
            for key, mask in events:
                if mask & selectors.EVENT_WRITE:
                    self._flush_some()
                if key.fd == err_fd:
                    self._read_stderr(err_fd)
                elif key.fd == out_fd and mask & selectors.EVENT_READ:
                    chunk = _read_some(out_fd)
                    if chunk is None:
                        continue
                    lines = self._lines.feed(chunk) if chunk else self._lines.finish()
                    if None in lines or self._lines.overflowing:
                        self.kill()
                        raise ImplementationFailure(
                            "protocol", f"a reply line is longer than {MAX_LINE} bytes ({what})"
                        )
                    self._ready.extend(line for line in lines if line is not None)
                    if not chunk:
                        if self._ready:
                            break
                        raise ImplementationFailure("crash", self._exit_message(what))
        self._fresh = False

    def request(self, line: bytes, what: str) -> bytes:
        self.send([line])
        return self.receive(what)

    def _count(self) -> str:
        if not self.replies:
            return ""
        return f", after {self.replies} repl{'y' if self.replies == 1 else 'ies'} since it started"

    def _exit_message(self, what: str) -> str:
        proc = self._proc
        code: int | None = None
        if proc is not None:
            try:
                code = proc.wait(timeout=EXIT_GRACE)
            except subprocess.TimeoutExpired:
                code = None
        self._drain_stderr()
        tail = self._stderr_tail()
        count = self._count()
        # anything the implementation started that still holds the pipes goes too
        self.kill()
        if code is None:
            status = "closed its stdout"
        elif code < 0:
            status = f"was killed by signal {-code}"
        else:
            status = f"exited with status {code}"
        return f"the implementation {status} before replying to {what}{count}{tail}"

    def _drain_stderr(self) -> None:
        """Collect what stderr still has, waiting briefly for the last lines of a crash."""
        proc, selector = self._proc, self._selector
        if proc is None or proc.stderr is None or selector is None:
            return
        fd = proc.stderr.fileno()
        deadline = time.monotonic() + STDERR_WAIT
        while self._err_open:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                break
            self._read_stderr(fd)

    def _stderr_tail(self) -> str:
        text = self._err.decode("utf-8", "replace")
        tail = [line.rstrip() for line in text.splitlines() if line.strip()][-8:]
        if not tail:
            return ""
        return "\n    stderr: " + "\n    stderr: ".join(tail)


def _close_quietly(stream: IO[bytes] | None) -> None:
    if stream is None:
        return
    with contextlib.suppress(OSError):
        stream.close()


PIPE_SIZE = 1 << 20  # a long pipelined batch wakes each side once per MiB, not per 64 KiB


def _widen(fd: int) -> None:
    """Ask for a larger pipe buffer where the platform lets us (Linux, up to its limit)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, setsize, PIPE_SIZE)


def _read_some(fd: int) -> bytes | None:
    """What a non-blocking pipe holds now: None when nothing yet, ``b""`` at its end (a
    read error counts as the end: the process is gone)."""
    try:
        return os.read(fd, PIPE_SIZE)
    except BlockingIOError:
        return None
    except OSError:
        return b""


# Implementations still running when the interpreter exits take their groups with them.
_LIVE: weakref.WeakSet[Implementation] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for impl in list(_LIVE):
        impl.kill()
