"""Filesystem access that cannot leave a notes home (POSIX).

Nothing here trusts a path string after it has been checked. The notes root is opened once
with ``O_NOFOLLOW``; every later component (home folders, note folders, the note file, the
lock folder, temp files) is reached with ``dir_fd=`` relative to an already-open directory and
``O_NOFOLLOW``, so swapping any component for a symbolic link mid-call makes the call fail
(``ELOOP``/``ENOTDIR``) instead of following the link. A note is replaced by a temp file
created in the same open directory and renamed within it, so a write can never land outside.

Hard-linked files (``st_nlink > 1``) are refused on read and write: a link inside a home to a
file outside it must not expose or replace that file. Names are compared in Unicode NFC, so
an NFD spelling written by another tool is the same note.

Every failure is a ``JailError`` carrying a ``kind`` and a message that names the component;
callers turn it into their own named error. ``OSError`` never escapes this module's public
functions except ``FileNotFoundError`` where documented.
"""

from __future__ import annotations

import errno
import os
import stat
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pi_context.support.locking import flock_within

TEMP_PREFIX = ".pi-notes-tmp."
LOCK_DIR = ".pi-notes-locks"
STALE_TEMP_SECONDS = 3600
"""A temp file this old is swept even if its writer's pid looks alive (pid reuse)."""

LOCK_WAIT = 10.0  # seconds a note write waits for another writer's lock
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = DIR_FLAGS
# O_NONBLOCK: opening a FIFO planted in a home must not hang the reader.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class JailError(Exception):
    """A refused or failed filesystem step. ``kind`` is one of:

    ``symlink`` a component is a symbolic link; ``linked`` a hard-linked file;
    ``conflict`` a file where a folder should be (or the reverse), or not a regular file;
    ``missing`` absent; ``untrusted`` a notes root another user owns or may write;
    ``io`` any other operating-system failure.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _io(exc: OSError, doing: str) -> JailError:
    if exc.errno == errno.ELOOP:
        return JailError("symlink", f"{doing}: a path component is a symbolic link")
    if exc.errno == errno.ENOTDIR:
        return JailError("conflict", f"{doing}: a path component is not a folder")
    if exc.errno == errno.ENAMETOOLONG:
        return JailError("io", f"{doing}: a name is too long for the filesystem")
    return JailError("io", f"{doing}: {exc.strerror or exc}")


def nfc(name: str) -> str:
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def _actual_name(dir_fd: int, name: str) -> str:
    """The on-disk spelling of ``name`` in ``dir_fd``: itself, or an entry equal under NFC."""
    if name.isascii():
        return name  # ASCII is its own normal form: no other spelling can exist
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return name
    except FileNotFoundError:
        pass
    except OSError:
        return name  # the caller's own open reports the real problem
    try:
        for entry in os.listdir(dir_fd):
            if not entry.isascii() and unicodedata.normalize("NFC", entry) == name:
                return entry
    except OSError:
        pass
    return name


def open_root(root: Path, *, create: bool) -> int | None:
    """An fd of the notes root, refusing a root that is itself a symbolic link.

    ``None`` when the root is absent and ``create`` is false. The root's ancestors are the
    user's own filesystem and are resolved normally; the root and everything below is not.
    """
    if create:
        try:
            os.makedirs(root.parent, exist_ok=True)
            os.mkdir(root)
        except FileExistsError:
            pass
        except OSError as exc:
            raise _io(exc, f"cannot create the notes root {root}") from exc
    try:
        fd = os.open(root, _DIR_FLAGS)
        try:
            check_owned(os.fstat(fd), f"the notes root {root}")
        except BaseException:
            os.close(fd)
            raise
        return fd
    except FileNotFoundError:
        if create:
            raise JailError("missing", f"the notes root {root} vanished while opening it") from None
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(root):
            raise JailError(
                "symlink",
                f"the notes root {root} is a symbolic link, which is not trusted; "
                "point PI_NOTES_HOME (or --notes-home) at the real directory",
            ) from exc
        raise _io(exc, f"cannot open the notes root {root}") from exc


def check_owned(info: os.stat_result, shown: str) -> None:
    """Refuse (kind ``untrusted``) a folder another user owns, or group or others may write:
    they could read, plant or swap the notes in it."""
    me = os.getuid()
    if info.st_uid != me:
        raise JailError(
            "untrusted",
            f"{shown} is owned by uid {info.st_uid}, not by you (uid {me}); "
            "point PI_NOTES_HOME (or --notes-home) at a folder of your own",
        )
    if info.st_mode & 0o022:
        raise JailError(
            "untrusted",
            f"{shown} may be written by group or others (mode {oct(stat.S_IMODE(info.st_mode))}); "
            "run chmod go-w on it, or point PI_NOTES_HOME at a private folder",
        )


def open_dir(
    parent_fd: int, name: str, *, create: bool, shown: str, made: list[str] | None = None
) -> int | None:
    """An fd of folder ``name`` inside ``parent_fd`` (never through a link); ``None`` if absent.

    ``shown`` names the folder in messages (a home-relative path); a folder this call
    creates is added to ``made`` (by its on-disk name).
    """
    actual = _actual_name(parent_fd, name)
    for _attempt in range(3):
        try:
            return os.open(actual, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                return None
            try:
                os.mkdir(actual, 0o777, dir_fd=parent_fd)
            except FileExistsError:
                continue  # someone made it meanwhile: open it (or report what it is)
            except OSError as exc:
                raise _io(exc, f"cannot create folder {shown}") from exc
            if made is not None:
                made.append(actual)
            with suppress(OSError):
                os.fsync(parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                kind = _entry_kind(parent_fd, actual)
                if kind == "symlink":
                    raise JailError(
                        "symlink", f"{shown} is a symbolic link; notes never follow links"
                    ) from exc
                raise JailError("conflict", f"{shown} is a file, not a folder") from exc
            raise _io(exc, f"cannot open folder {shown}") from exc
    raise JailError("io", f"folder {shown} keeps changing; try again")


def prune_made(root_fd: int, parts: list[str], made: list[str]) -> None:
    """After a failed write: remove the folders of ``parts`` (below ``root_fd``) that the
    write made (``made``, from ``walk_dirs``), innermost first, each only while it is empty
    (a concurrent writer's note keeps its folder). Never through a link."""
    if not made:
        return
    first = len(parts) - len(made)  # a made folder's sub-folders were made too
    fds = [root_fd]
    try:
        for part in parts:
            fd = open_dir(fds[-1], part, create=False, shown=part)
            if fd is None:
                break
            fds.append(fd)
        for depth in range(len(fds) - 1, first, -1):  # fds[depth] is folder parts[depth - 1]
            try:
                os.rmdir(made[depth - 1 - first], dir_fd=fds[depth - 1])
            except OSError:
                return  # not empty (another writer), or gone: leave it and its parents
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _entry_kind(dir_fd: int, name: str) -> str:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return "symlink"
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    return "file" if stat.S_ISREG(info.st_mode) else "special"


def walk_dirs(
    root_fd: int, parts: list[str], *, create: bool, shown: str, made: list[str] | None = None
) -> int | None:
    """Open ``parts`` one folder at a time below ``root_fd``; ``None`` if one is absent.
    The folders created are added to ``made`` (see ``prune_made``)."""
    current = root_fd
    opened: list[int] = []
    try:
        for index, part in enumerate(parts):
            label = (
                "/".join([shown, *parts[: index + 1]]) if shown else "/".join(parts[: index + 1])
            )
            fd = open_dir(current, part, create=create, shown=label, made=made)
            if fd is None:
                return None
            opened.append(fd)
            current = fd
        if not opened:
            return os.dup(root_fd)
        opened.pop()  # the last one is the caller's
        return current
    finally:
        for fd in opened:
            os.close(fd)


def read_file(
    dir_fd: int, name: str, *, shown: str, limit: int | None = None, exact: bool = False
) -> tuple[bytes, os.stat_result]:
    """The bytes (up to ``limit``) and ``fstat`` of regular file ``name`` in ``dir_fd``.

    Raises ``FileNotFoundError`` when absent; ``JailError`` for a link, a hard-linked file or
    anything that is not a regular file. ``exact`` skips the NFC spelling lookup (the caller
    has the on-disk name from a listing).
    """
    actual = name if exact else _actual_name(dir_fd, name)
    try:
        fd = os.open(actual, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise JailError(
                "symlink", f"{shown} is a symbolic link; notes never follow links"
            ) from exc
        if exc.errno == errno.EISDIR:
            raise JailError("conflict", f"{shown} is a folder, not a note") from exc
        raise _io(exc, f"cannot open {shown}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise JailError("conflict", f"{shown} is {kind}, not a note")
        check_links(info, shown)
        want = info.st_size if limit is None else min(info.st_size, limit)
        chunks: list[bytes] = []
        remaining = want
        while remaining > 0:
            chunk = os.read(fd, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), info
    except OSError as exc:
        raise _io(exc, f"cannot read {shown}") from exc
    finally:
        os.close(fd)


def check_links(info: os.stat_result, shown: str) -> None:
    if info.st_nlink > 1:
        raise JailError(
            "linked",
            f"{shown} has {info.st_nlink} hard links; a hard-linked file may live outside "
            "the home, so it is neither read nor written",
        )


def existing_kind(dir_fd: int, name: str, shown: str) -> str:
    """``missing`` or ``file`` for the entry a write would replace; refuses anything else."""
    actual = _actual_name(dir_fd, name)
    try:
        info = os.stat(actual, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        raise _io(exc, f"cannot inspect {shown}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise JailError("symlink", f"{shown} is a symbolic link; notes are only regular files")
    if stat.S_ISDIR(info.st_mode):
        raise JailError("conflict", f"{shown} is a folder of notes, not a note")
    if not stat.S_ISREG(info.st_mode):
        raise JailError("conflict", f"{shown} is not a regular file")
    check_links(info, shown)
    return "file"


def _create_file(dir_fd: int, name: str, flags: int, what: str, verb: str = "create") -> int:
    """Open ``name`` in ``dir_fd`` with ``flags``, creating it and never following a link;
    a failure is an ``io`` error: cannot ``verb`` ``what``."""
    flags |= os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise _io(exc, f"cannot {verb} {what}") from exc


def replace_file(dir_fd: int, name: str, data: bytes, *, shown: str) -> None:
    """Atomically and durably replace ``name`` in ``dir_fd`` with ``data``.

    The temp file is created beside it (``O_EXCL|O_NOFOLLOW``) and renamed within the same
    open directory, so neither step can be redirected. A killed writer leaves only the temp
    file, which ``sweep_temps`` removes later.
    """
    actual = _actual_name(dir_fd, name)
    existing_kind(dir_fd, actual, shown)
    temp = f"{TEMP_PREFIX}{os.getpid()}.{os.urandom(6).hex()}"
    fd = _create_file(dir_fd, temp, os.O_WRONLY | os.O_EXCL, f"a temp file beside {shown}")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, actual, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise _io(exc, f"cannot write {shown}") from exc
    except BaseException:
        with suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    with suppress(OSError):
        os.fsync(dir_fd)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    except OSError:
        return True
    return True


def is_stale_temp(dir_fd: int, name: str, now: float | None = None) -> bool:
    """Whether ``name`` is one of our temp files whose writer is gone."""
    if not name.startswith(TEMP_PREFIX):
        return False
    pid_text = name[len(TEMP_PREFIX) :].split(".", 1)[0]
    if not pid_text.isdigit():
        return True  # not a name we write: a planted or foreign temp, never a live write
    if pid_text == str(os.getpid()):
        return False  # ours, maybe mid-write in another thread
    if not _pid_alive(int(pid_text)):
        return True
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return (now if now is not None else time.time()) - info.st_mtime > STALE_TEMP_SECONDS


def sweep_temps(dir_fd: int) -> int:
    """Remove stale temp files from one open folder; returns how many went.

    ``unlink`` removes the directory entry itself (never a link's target), and the folder is
    the open one, so a sweep cannot delete anything outside the home.
    """
    removed = 0
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return 0
    for name in names:
        if name.startswith(TEMP_PREFIX) and is_stale_temp(dir_fd, name):
            try:
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
            except OSError:
                continue  # gone already, or a folder planted under our prefix: leave it
    return removed


def sweep_tree(dir_fd: int, max_depth: int) -> int:
    """``sweep_temps`` in this folder and every folder below it (links never followed).

    Depth-first, one descriptor per level, at most ``max_depth`` levels.
    """
    removed = sweep_temps(dir_fd)
    if max_depth <= 0:
        return removed
    try:
        with os.scandir(dir_fd) as listing:
            folders = [e.name for e in listing if e.name != LOCK_DIR and _is_dir(e)]
    except OSError:
        return removed
    for name in folders:
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue  # swapped for a link or removed: nothing of ours to sweep there
        try:
            removed += sweep_tree(child, max_depth - 1)
        finally:
            os.close(child)
    return removed


def sweep_home(root: Path, parts: tuple[str, ...], max_depth: int = 128) -> int:
    """``sweep_tree`` of the home ``root/parts`` (opened without following links)."""
    root_fd = open_root(root, create=False)
    if root_fd is None:
        return 0
    try:
        home_fd = walk_dirs(root_fd, list(parts), create=False, shown=str(root))
    finally:
        os.close(root_fd)
    if home_fd is None:
        return 0
    try:
        return sweep_tree(home_fd, max_depth)
    finally:
        os.close(home_fd)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


@contextmanager
def file_lock(home_fd: int, lock_name: str, *, shown: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``.pi-notes-locks/<lock_name>`` inside the home.

    Lock files are never deleted (deleting them reopens the race they close). The kernel drops
    a killed holder's lock; a stopped or hung holder makes the wait end after ``LOCK_WAIT``
    seconds with an ``io`` error naming the lock. A lock folder or file that is a link is
    refused, so a planted ``.pi-notes-locks`` symlink cannot move locks outside the home.
    """
    lock_dir = open_dir(home_fd, LOCK_DIR, create=True, shown=f"{shown}/{LOCK_DIR}")
    assert lock_dir is not None
    try:
        flags = os.O_RDWR | os.O_NONBLOCK
        fd = _create_file(
            lock_dir, lock_name, flags, f"the lock file in {shown}/{LOCK_DIR}", verb="open"
        )
    finally:
        os.close(lock_dir)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise JailError(
                "conflict", f"the lock file in {shown}/{LOCK_DIR} is not a regular file"
            )
        flock_within(fd, LOCK_WAIT, f"the lock of a note in {shown}")
    except OSError as exc:
        os.close(fd)
        raise _io(exc, f"cannot lock a note in {shown}") from exc
    except BaseException:
        os.close(fd)
        raise
    try:
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock
