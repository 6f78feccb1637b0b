"""Proving a folder is the cache's own before anything in it is used, changed or removed.

``$PI_CONTEXT_CACHE_DIR`` may name any folder: a fresh one, our earlier cache, or by mistake a
folder of the user's (``~/.agents``, which holds the notes). The cache root and each of its
areas (``history``, ``notes``, ``hypothesis``) therefore carry a marker file (``MARKER``) the
cache writes, with ``O_EXCL``, when it makes them. Before an area is used:

* a folder the cache is to create is created 0700, then marked;
* a marked folder must be a real folder (an area is never reached through a link), owned by
  the current user and writable by no one else (group or others): a folder another user
  made, or could write into, might hand them the session text written there;
* an unmarked folder is adopted (marked, its mode left as it is) only when it is owned as
  above and holds nothing but names of the cache's own making (an empty folder, or an
  earlier version's cache); anything else is refused.

A refusal is ``CacheRefused`` (an ``OSError``: the tools then answer without their cache)
naming the folder, why, and what to do. Nothing here ever changes the mode of a folder, and
the cache removes only entries whose names it makes, inside areas it has proven its own.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import time
from collections.abc import Iterable
from pathlib import Path

from pi_context.support.cache_dir import CACHE_ENV, cache_root

MARKER = ".pi-context-cache"
MARKER_BODY = b"pi-context cache: every file here was made by pi-context and may be deleted\n"
AREAS = ("history", "notes", "hypothesis")
STAMP = ".last-prune"
TORN_MARKER_AGE = 10.0
"""Seconds after which a marker that does not read back as ours is taken as torn."""
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OURS_IN_ROOT = re.compile(
    rf"^(?:{'|'.join(AREAS)}|{re.escape(MARKER)}|\.?\.last-prune(?:\.\d+\.[0-9a-f]+)?)$"
)
ENTRY_NAME = re.compile(r"^\.?[0-9a-f]{32}(?:\.bin|\.source\.json)?(?:\.\d+\.[0-9a-f]+)?$")
"""An entry, a file entry's record, or a temp file of either (``write_private``)."""


class CacheRefused(OSError):
    """A cache folder that is not provably the cache's own and private to the user."""

    def __init__(self, path: Path | str, why: str, todo: str) -> None:
        super().__init__(errno.EPERM, f"refused as a cache folder: {why}; {todo}", str(path))
        self.path = str(path)
        self.why = why

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _todo() -> str:
    return f"point {CACHE_ENV} at a new or empty folder of your own (or unset it)"


def check_private(info: os.stat_result, path: Path | str) -> None:
    """Refuse a folder or file another user owns, or that group or others may write."""
    me = os.getuid()
    if info.st_uid != me:
        why = f"it is owned by uid {info.st_uid}, not by you (uid {me})"
        raise CacheRefused(path, why, _todo())
    if info.st_mode & 0o022:
        mode = oct(stat.S_IMODE(info.st_mode))
        why = f"group or others may write into it (mode {mode})"
        raise CacheRefused(path, why, f"run chmod go-w on it, or {_todo()}")


def _marked(dir_fd: int) -> bool:
    try:
        fd = os.open(MARKER, _READ, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return False
        return os.read(fd, len(MARKER_BODY) + 1) == MARKER_BODY
    finally:
        os.close(fd)


def _mark(dir_fd: int, retry: bool = True) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(MARKER, flags, 0o600, dir_fd=dir_fd)
    except FileExistsError:
        # Another process marked it meanwhile, or is writing it now; a marker torn by a
        # crash (a while old, yet not ours) is made again, once.
        try:
            age = time.time() - os.stat(MARKER, dir_fd=dir_fd, follow_symlinks=False).st_mtime
        except FileNotFoundError:
            age = TORN_MARKER_AGE
        if retry and age >= TORN_MARKER_AGE and not _marked(dir_fd):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(MARKER, dir_fd=dir_fd)
            _mark(dir_fd, retry=False)
        return
    try:
        os.write(fd, MARKER_BODY)
    finally:
        os.close(fd)


def _foreign(names: Iterable[str], ours: re.Pattern[str]) -> list[str]:
    return sorted(name for name in names if name != MARKER and not ours.match(name))


def _refuse_foreign(path: Path | str, foreign: list[str]) -> None:
    shown = ", ".join(repr(n) for n in foreign[:3])
    more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
    raise CacheRefused(path, f"it holds {shown}{more}, which the cache did not create", _todo())


def _adopt_or_refuse(fd: int, path: Path | str, ours: re.Pattern[str], area: bool) -> None:
    """Mark an unmarked folder that holds only what the cache makes; refuse anything else."""
    names = os.listdir(fd)
    foreign = _foreign(names, ours)
    if foreign:
        _refuse_foreign(path, foreign)
    if not area:
        for name in names:
            if name in AREAS:  # an earlier version's area: it must hold only entries too
                sub = _open_dir(fd, name, path)
                if sub is None:
                    continue
                try:
                    if not _marked(sub):
                        found = _foreign(os.listdir(sub), ENTRY_NAME)
                        if found:
                            _refuse_foreign(f"{path}/{name}", found)
                finally:
                    os.close(sub)
    _mark(fd)


def _open_dir(parent_fd: int, name: str, shown: Path | str) -> int | None:
    try:
        fd = os.open(name, _DIR, dir_fd=parent_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            why = "it is not a real folder (a link or a file)"
            raise CacheRefused(f"{shown}/{name}", why, _todo()) from None
        raise
    return fd


def open_root(*, create: bool) -> int | None:
    """An fd of the proven cache root (``None``: absent and ``create`` is false)."""
    root = cache_root()
    if create:
        missing: list[Path] = []
        probe = Path(os.path.abspath(root))
        while not os.path.lexists(probe) and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        for folder in reversed(missing):
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if create:
            raise
        return None
    except NotADirectoryError:
        raise CacheRefused(root, "it is not a folder", _todo()) from None
    try:
        check_private(os.fstat(fd), root)
        if not _marked(fd):
            _adopt_or_refuse(fd, root, _OURS_IN_ROOT, area=False)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_area(root_fd: int, kind: str, *, create: bool) -> int | None:
    """An fd of the proven area ``kind`` inside the root (``None``: absent, not ``create``)."""
    shown = cache_root()
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(kind, 0o700, dir_fd=root_fd)
    fd = _open_dir(root_fd, kind, shown)
    if fd is None:
        if create:
            raise FileNotFoundError(errno.ENOENT, "the cache area vanished", f"{shown}/{kind}")
        return None
    try:
        check_private(os.fstat(fd), f"{shown}/{kind}")
        if not _marked(fd):
            _adopt_or_refuse(fd, f"{shown}/{kind}", ENTRY_NAME, area=True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def private_dir(path: Path) -> Path:
    """``path`` (the root, an area, or a folder below one) as a proven private folder of the
    cache: what is missing is created 0700; what exists must be the cache's and the user's
    own (``CacheRefused`` otherwise). Never changes a mode. Returns ``path``."""
    root = cache_root()
    try:
        parts = _below(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # a folder of the caller's choosing, outside the cache: made, checked
        with contextlib.suppress(FileExistsError):
            os.makedirs(path, 0o700)
        check_private(os.stat(path), path)
        return path
    held = (os.fspath(root), parts)
    proof = _proof(root, parts)
    if proof is not None and _proven.get(held) == proof:
        return path  # proven before, and nothing it was proven by has changed since
    root_fd = open_root(create=True)
    assert root_fd is not None
    fds = [root_fd]
    try:
        if parts:
            area = open_area(root_fd, parts[0], create=True)
            assert area is not None
            fds.append(area)
        shown = root / parts[0] if parts else root
        for name in parts[1:]:
            shown = shown / name
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=fds[-1])
            fd = _open_dir(fds[-1], name, shown.parent)
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, "the cache folder vanished", str(shown))
            fds.append(fd)
            check_private(os.fstat(fd), shown)
    finally:
        for fd in fds:
            os.close(fd)
    if proof is not None:
        if len(_proven) >= PROVEN_MAX:
            _proven.clear()
        _proven[held] = proof
    return path


def _below(path: str, root: str) -> tuple[str, ...]:
    """The names leading from ``root`` to ``path`` (both absolute and normal); ValueError
    when ``path`` is not ``root`` or below it."""
    if path == root:
        return ()
    if root.endswith(os.sep) or not path.startswith(root + os.sep):
        return Path(path).relative_to(root).parts  # the file system's root, or not below
    return tuple(path[len(root) + 1 :].split(os.sep))


PROVEN_MAX = 64
"""Folders whose proof ``private_dir`` keeps (all are dropped when it is reached)."""
RACY_NS = 2_000_000_000
"""A marker changed this recently may change again within its time stamps' resolution."""
_proven: dict[tuple[str, tuple[str, ...]], tuple[object, ...]] = {}


def _proof(root: Path, parts: tuple[str, ...]) -> tuple[object, ...] | None:
    """What ``private_dir`` of ``root``/``parts`` proves a folder by, as ``stat`` sees it
    (taken before the proof itself, so a change after it shows as a new answer): the
    root and each folder below it (identity, type, owner, mode; the root through links as
    it is opened, each folder below without), and the markers of the root and the area
    (identity, owner, size, time stamps: a marker is written once, never in place). None
    when a part is missing, or a marker changed within ``RACY_NS``."""
    horizon = time.time_ns() - RACY_NS
    out: list[object] = [os.getuid()]
    try:
        path = os.fspath(root)
        folder = os.stat(path)
        out.append(_identity(folder))
        for depth, name in enumerate(("", *parts)):
            if depth:
                path = os.path.join(path, name)
                out.append(_identity(os.lstat(path)))
            if depth <= 1:
                marker = os.lstat(os.path.join(path, MARKER))
                if max(marker.st_mtime_ns, marker.st_ctime_ns) >= horizon:
                    return None
                out.append(_identity(marker))
                out.append((marker.st_size, marker.st_mtime_ns, marker.st_ctime_ns))
    except OSError:
        return None
    return tuple(out)


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_mode, info.st_uid)
