"""Crash-safe file replacement and cross-process locks (POSIX).

A note is never written in place. The new bytes go to a temp file in the same directory,
which is fsynced, renamed over the note and followed by an fsync of the directory: a reader
or a crash at any instant sees either the whole old file or the whole new one. A writer
killed mid-write leaves only a hidden temp file, which readers skip.

Locks are ``flock`` on a lock file that is never deleted (deleting lock files reopens the
race they exist to close). ``flock`` locks belong to the open file description, so two
threads of one process exclude each other as well as two processes do, and the kernel drops
a killed holder's lock.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

TEMP_PREFIX = ".pi-notes-tmp."
LOCK_DIR = ".pi-notes-locks"


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` atomically and durably (the parent must exist)."""
    temp = target.parent / f"{TEMP_PREFIX}{os.getpid()}.{secrets.token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            temp.unlink()
        raise
    fsync_dir(target.parent)


def make_dirs(base: Path, parts: tuple[str, ...]) -> Path:
    """Create ``base/parts…`` one level at a time, fsyncing each new entry's parent."""
    current = base
    for part in parts:
        current = current / part
        try:
            current.mkdir()
        except FileExistsError:
            continue
        fsync_dir(current.parent)
    return current


def ensure_dirs(directory: Path) -> Path:
    """``directory`` and any missing ancestors, each new entry made durable."""
    missing: list[str] = []
    base = directory
    while not base.is_dir():
        missing.append(base.name)
        if base.parent == base:
            break
        base = base.parent
    return make_dirs(base, tuple(reversed(missing)))


@contextmanager
def file_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if needed) for the block."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock
