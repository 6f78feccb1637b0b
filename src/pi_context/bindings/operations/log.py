"""The operation log: one append-only JSON-lines file per session, kept under the state dir.

Where: ``$PI_CONTEXT_STATE_DIR`` when set, else ``$XDG_STATE_HOME/pi-context``, else
``~/.local/state/pi-context``, then ``operations/<name>-<hash>.jsonl`` where the hash is of the
session file's absolute path (``log_path``); a host may pass any other directory. Retention is
the seed's "3 × 2 MiB per session": a line that would take the file past 2 MiB first rotates
it (``.jsonl`` → ``.jsonl.1`` → ``.jsonl.2``; the oldest is dropped).

Privacy: the folders created here are private to the user (0700), the logs and their
``.lock`` files 0600. ``pi-context cache info`` lists the logs, ``pi-context cache clear
--logs`` removes them (``log_files``, ``remove_logs``: only files named as this module names
them).

Crash safety: each event is one line written by one all-or-nothing append; a process killed in
the middle of a line leaves at most that torn line at the end of the file, which the reader
counts as invalid and skips, and the next writer starts on a fresh line. Logging never fails
its caller: a write that fails (full disk, no permission, a lock it cannot get in time) is
remembered as ``failure`` for the panel and the event is dropped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.bindings.session.jsonl import encode
from pi_context.support.writes import append_whole

STATE_ENV = "PI_CONTEXT_STATE_DIR"
MAX_FILE_BYTES = 2 * 1024 * 1024
KEPT_FILES = 3
RETENTION = "3 × 2 MiB per session"
LOCK_WAIT_S = 2.0
_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_LOG_FILE = re.compile(r"^[A-Za-z0-9._-]+-[0-9a-f]{16}\.jsonl(\.[0-9]+)?(\.lock)?$")


def state_root() -> Path:
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "pi-context"


def log_dir(root: Path | None = None) -> Path:
    return (root if root is not None else state_root()) / "operations"


def log_path(session_file: Path | str, directory: Path | None = None) -> Path:
    """The primary log file of the session stored at ``session_file``."""
    absolute = os.path.abspath(os.fspath(session_file))
    digest = hashlib.sha256(absolute.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = _NAME.sub("_", Path(absolute).stem)[:48] or "session"
    return (directory if directory is not None else log_dir()) / f"{stem}-{digest}.jsonl"


def rotated(path: Path) -> list[Path]:
    """The primary file and its rotations, newest first."""
    return [path] + [path.with_name(f"{path.name}.{n}") for n in range(1, KEPT_FILES)]


@dataclass
class LogWriter:
    """Appends events to one session's log; ``failure`` holds the last write problem."""

    path: Path
    failure: str | None = None
    written: int = 0

    def append(self, event: dict[str, Any]) -> bool:
        line = (encode(event) + "\n").encode("utf-8", "surrogatepass")
        try:
            private_dirs(self.path.parent)
            with _locked(self.path):
                self._rotate_if_needed(len(line))
                self._append(line)
        except (OSError, TimeoutError) as exc:
            self.failure = f"log write failed: {_reason(exc)}"
            return False
        self.written += 1
        return True

    def _append(self, line: bytes) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(self.path, flags, 0o600)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(f"{self.path} is not a regular file")
            if info.st_size and not _ends_with_newline(self.path, info.st_size):
                line = b"\n" + line  # a torn line stays alone (counted invalid by readers)
            append_whole(fd, line, sync=False)
        finally:
            os.close(fd)

    def _rotate_if_needed(self, incoming: int) -> None:
        try:
            size = os.lstat(self.path).st_size
        except FileNotFoundError:
            return
        if size + incoming <= MAX_FILE_BYTES:
            return
        files = rotated(self.path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(files[-1])
        for newer, older in zip(reversed(files[:-1]), reversed(files[1:]), strict=True):
            with contextlib.suppress(FileNotFoundError):
                os.replace(newer, older)


def _ends_with_newline(path: Path, size: int) -> bool:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        return os.pread(fd, 1, size - 1) == b"\n"
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An advisory lock beside the log (rotation and append are one step), waited on briefly."""
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{lock} is held by another process") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)


def private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents private to the user (0700)."""
    missing = []
    path = folder
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)


def log_files(directory: Path | None = None) -> list[Path]:
    """The operation logs, their rotations and lock files in ``directory`` (default: the
    state dir's ``operations``): regular files named as ``log_path`` names them, nothing else."""
    folder = directory if directory is not None else log_dir()
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for name in names:
        path = folder / name
        with contextlib.suppress(OSError):
            if _LOG_FILE.match(name) and stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return found


def remove_logs(directory: Path | None = None) -> list[Path]:
    """Remove every operation log, rotation and lock file (``log_files``); the removed."""
    removed = []
    for path in log_files(directory):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
