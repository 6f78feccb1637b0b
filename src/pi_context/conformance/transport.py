"""Talking to an implementation process over stdio, without ever hanging.

One thread does the protocol I/O with a selector: pending request bytes are written as the
implementation's stdin accepts them while its replies are read, so pipelined requests can
never deadlock on a full pipe, and every wait for a reply has a timeout. A drain thread keeps
the tail of stderr for error messages. An exit, a hang or an over-long line becomes an
:class:`ImplementationFailure` that says what happened. (POSIX pipes; select() on pipes is
what makes this work.)
"""

from __future__ import annotations

import collections
import os
import selectors
import shlex
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from typing import IO

from pi_context.conformance.protocol import MAX_LINE


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
    """One running implementation process."""

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
        self._cwd = cwd
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._writing = False
        self._out = bytearray()
        self._pending = b""
        self._ready: collections.deque[bytes] = collections.deque()
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)

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
            )
        except OSError as err:
            raise ImplementationFailure(
                "crash", f"cannot start {self.command!r}: {err.strerror or err}"
            ) from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self.starts += 1
        self._fresh = True
        self._ready.clear()
        self._pending = b""
        self._out = bytearray()
        self._stderr = collections.deque(maxlen=20)
        os.set_blocking(proc.stdin.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
        self._writing = False
        threading.Thread(target=self._drain, args=(proc.stderr, self._stderr), daemon=True).start()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        self.close()

    def __enter__(self) -> Implementation:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _drain(stream: IO[bytes], tail: collections.deque[str]) -> None:
        try:
            for raw in iter(stream.readline, b""):
                tail.append(raw.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass

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
            written = os.write(proc.stdin.fileno(), self._out[: 1 << 16])
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, OSError):
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

    def receive(self, what: str) -> bytes:
        """The next reply line, or an ImplementationFailure saying why there is none."""
        if self._ready:
            return self._ready.popleft()
        proc, selector = self._proc, self._selector
        if proc is None or selector is None or proc.stdout is None:
            raise ImplementationFailure("crash", f"the implementation is not running ({what})")
        out_fd = proc.stdout.fileno()
        limit = self.startup_timeout if self._fresh else self.timeout
        deadline = time.monotonic() + limit
        while not self._ready:
            remaining = deadline - time.monotonic()
            events = selector.select(max(remaining, 0.0)) if remaining > 0 else []
            if not events:
                self.kill()
                raise ImplementationFailure(
                    "hang",
                    f"no reply to {what} within {limit:g}s"
                    + (" of starting" if self._fresh else "")
                    + f" (the implementation was stopped){self._stderr_tail()}",
                )
            for key, mask in events:
                if mask & selectors.EVENT_WRITE:
                    self._flush_some()
                if key.fd == out_fd and mask & selectors.EVENT_READ:
                    chunk = os.read(out_fd, 1 << 16)
                    if not chunk:
                        if self._pending.strip():
                            self._ready.append(self._pending)
                            self._pending = b""
                            break
                        raise ImplementationFailure("crash", self._exit_message(what))
                    self._pending += chunk
                    if b"\n" in chunk:
                        *complete, self._pending = self._pending.split(b"\n")
                        self._ready.extend(complete)
                    if len(self._pending) > MAX_LINE:
                        self.kill()
                        raise ImplementationFailure(
                            "protocol", f"a reply line is longer than {MAX_LINE} bytes ({what})"
                        )
        self._fresh = False
        return self._ready.popleft()

    def request(self, line: bytes, what: str) -> bytes:
        self.send([line])
        return self.receive(what)

    def _exit_message(self, what: str) -> str:
        proc = self._proc
        code: int | None = None
        if proc is not None:
            try:
                code = proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                code = None
        tail = self._stderr_tail()
        self.close()
        if code is None:
            status = "closed its stdout"
        elif code < 0:
            status = f"was killed by signal {-code}"
        else:
            status = f"exited with status {code}"
        return f"the implementation {status} before replying to {what}{tail}"

    def _stderr_tail(self) -> str:
        time.sleep(0.05)  # let the drain thread catch the last lines
        tail = [line for line in self._stderr if line.strip()][-8:]
        if not tail:
            return ""
        return "\n    stderr: " + "\n    stderr: ".join(tail)
