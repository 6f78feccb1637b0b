"""What our cache directory holds, what each entry belongs to, and how entries go away.

Every entry under ``cache_root()`` belongs to files of the user's, and records them:

==========================  ===================================  ==================================
entry                       belongs to                           holds
==========================  ===================================  ==================================
``history/<key>/``          one session file                     the text of every history item of
                                                                 it (user and assistant messages,
                                                                 tool calls and results, boot text)
``notes/<key>.bin``         one notes home (a folder), or a      every note of it: metadata, body;
                            notes root (a listing walk's order)  or the (time, home, path) order a
                                                                 ``notes_list``/``notes_search``
                                                                 walk took at its first page
``hypothesis/<key>/``       the spec files a ``verify`` or       hypothesis' example database for
                            ``conformance`` run checked          them (no session or note text)
``conformance/<key>.bin``   one spec file                        the spec's answers to its
                                                                 exhaustive set (no session or
                                                                 note text)
==========================  ===================================  ==================================

The record (``source.json`` in a folder entry, ``<key>.source.json`` beside a file entry)
names each source by its real path and, for the entries that hold the user's text, by device,
inode and a digest of its first line too (a session's header line names its id, and a new
file can get a deleted one's inode number). An entry is *live* while every source it names
is there: the same file, for those that hold text, since a session deleted and written anew
at the same path is another file and the text of the old one must not outlive it. Anything
else (a source gone or replaced, an entry without a readable record, from an earlier version
or torn by a crash, a stray record) is pruned: by ``pi-context cache prune``, and on access,
at most once per ``PRUNE_EVERY`` seconds, by the first cache that is opened
(``prune_if_due``). A record is written before the entry holds anything, and an entry without
one is left alone for ``GRACE`` seconds (it may be being created). A history index whose lock
is held is skipped (its writer is busy with it).

Folders are created private to the user (0700) and our own files 0600; hypothesis writes its
files inside its private folder. The root and each kind's folder are proven the cache's own
before use (``cache_home``: a marker, the user's ownership, no one else's write access): a
``$PI_CONTEXT_CACHE_DIR`` that names a folder of the user's (holding their notes, say) is
refused, never swept. Only names of the cache's own making, in a proven folder, are removed:
by ``prune``/``clear``, which say what they removed and what stayed and why (``Sweep``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from pi_context.support.cache_dir import cache_root
from pi_context.support.cache_home import (
    ENTRY_NAME,
    STAMP,
    CacheRefused,
    open_area,
    open_root,
    private_dir,
)
from pi_context.support.digest import sha256_hex
from pi_context.support.frozen import frozen

__all__ = ["CacheRefused", "private_dir"]

RECORD_VERSION = 1
PRUNE_EVERY = 3600.0
"""Seconds between the on-access sweeps of the whole cache."""
GRACE = 60.0
"""Seconds an entry without a record is left alone (another process may be creating it)."""


@frozen
class Kind:
    name: str
    folder: bool
    """An entry is a folder (else a file ``<key><suffix>`` with its record beside it)."""
    identity: bool
    """The entry holds the user's text: its sources must be the very files (device, inode)."""
    holds: str
    suffix: str = ""


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("history", True, True, "a session's history items (message, tool and boot text)"),
        Kind("notes", False, True, "a notes home's notes (metadata and bodies)", ".bin"),
        Kind("hypothesis", True, False, "hypothesis examples of verify/conformance runs"),
        Kind("conformance", False, False, "a spec's answers to its exhaustive set", ".bin"),
    )
}
RECORD = "source.json"
RECORD_SUFFIX = ".source.json"


def key_of(text: str) -> str:
    """The entry name for a source (a fixed-length hash: any path makes a valid name)."""
    return sha256_hex(os.fsencode(text))[:32]


# --- private folders and files ------------------------------------------------------------------


def kind_dir(kind: str) -> Path:
    """The private folder of one kind of entry (created on first use)."""
    return private_dir(cache_root() / KINDS[kind].name)


def write_private(path: Path, *chunks: bytes) -> None:
    """Write ``chunks`` to ``path`` as one 0600 file, atomically: a temp file beside it (never
    through a link), then a rename, so readers see the old file or the whole new one."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


# --- records ------------------------------------------------------------------------------------


HEAD_BYTES = 4096


@frozen
class Source:
    path: str
    dev: int | None = None
    ino: int | None = None
    head: str | None = None
    """For a file: a digest of its first line (at most ``HEAD_BYTES``). A session's header
    names its id, so a new file that got the old one's inode number still differs."""

    def state(self, identity: bool) -> str:
        """``live``, ``gone`` or ``replaced`` (another file now has this path)."""
        try:
            info = os.stat(self.path)
        except (OSError, ValueError):
            return "gone"
        if identity and (info.st_dev, info.st_ino) != (self.dev, self.ino):
            return "replaced"
        if identity and self.head is not None and _head(self.path) != self.head:
            return "replaced"
        return "live"


def _head(path: str) -> str | None:
    """The digest of a regular file's first line (never blocks on a FIFO or device)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        first = os.read(fd, HEAD_BYTES).split(b"\n", 1)[0]
    except OSError:
        return None
    finally:
        os.close(fd)
    return sha256_hex(first)[:32]


def source_of(path: Path, info: os.stat_result | None = None) -> Source:
    """``path`` (made real) as a record names it; ``info`` is its ``stat`` if already taken."""
    real = os.path.realpath(path)
    if info is None:
        try:
            info = os.stat(real)
        except OSError:
            return Source(real)
    head = _head(real) if stat.S_ISREG(info.st_mode) else None
    return Source(real, info.st_dev, info.st_ino, head)


def record_path(kind: str, entry: Path) -> Path:
    if KINDS[kind].folder:
        return entry / RECORD
    return entry.with_name(entry.name.removesuffix(KINDS[kind].suffix) + RECORD_SUFFIX)


def record(kind: str, entry: Path, sources: Sequence[Source]) -> None:
    """Write the record of ``entry`` (before the entry holds anything). Never raises: an entry
    that cannot be recorded is pruned as unrecorded, which only costs a rebuild."""
    body = {
        "version": RECORD_VERSION,
        "kind": kind,
        "sources": [{"path": s.path, "dev": s.dev, "ino": s.ino, "head": s.head} for s in sources],
    }
    data = (json.dumps(body, ensure_ascii=True) + "\n").encode("ascii")
    target = record_path(kind, entry)
    with contextlib.suppress(OSError, ValueError):
        if KINDS[kind].folder:
            private_dir(entry)
        else:
            private_dir(entry.parent)
        try:
            if target.read_bytes() == data:
                return
        except OSError:
            pass
        write_private(target, data)


def read_record(kind: str, entry: Path) -> list[Source] | None:
    """The sources ``entry`` records, or ``None`` when it has no usable record."""
    try:
        fd = os.open(record_path(kind, entry), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, 1 << 16)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        body = json.loads(raw)
        if body["version"] != RECORD_VERSION or body["kind"] != kind:
            return None
        sources = [
            Source(str(s["path"]), s.get("dev"), s.get("ino"), s.get("head"))
            for s in body["sources"]
            if isinstance(s["path"], str)
        ]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return sources or None


# --- entries ------------------------------------------------------------------------------------


@frozen
class Entry:
    kind: str
    path: Path
    sources: tuple[Source, ...]
    state: str
    """``live``; ``new`` (no record yet, younger than ``GRACE``); or, to be pruned,
    ``source gone``, ``source replaced``, ``unrecorded`` or ``stray`` (a record alone)."""
    bytes: int
    files: int
    ident: tuple[int, int] | None = None
    """(device, inode) when listed: removal proves it still is that file or folder."""

    @property
    def live(self) -> bool:
        return self.state in ("live", "new")


@frozen
class Sweep:
    """What a ``prune`` or ``clear`` removed, and what stayed and why."""

    removed: list[Entry]
    left: list[tuple[Entry, str]]


def _size(path: Path) -> tuple[int, int]:
    """(bytes, files) of a file or folder, links not followed."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0, 0
    if not stat.S_ISDIR(info.st_mode):
        return info.st_size, 1
    total, count = 0, 0
    for folder, _dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
                count += 1
    return total, count


def _age(path: Path, now: float) -> float:
    try:
        return now - os.lstat(path).st_mtime
    except OSError:
        return 0.0


def entries(now: float | None = None) -> Iterator[Entry]:
    """Every entry of every kind, with its state (reads only). Only names of the cache's own
    making, in folders proven its own, are entries; ``CacheRefused`` for a folder that is not."""
    now = time.time() if now is None else now
    root = cache_root()
    root_fd = open_root(create=False)
    if root_fd is None:
        return
    try:
        for kind in KINDS.values():
            area = open_area(root_fd, kind.name, create=False)
            if area is None:
                continue
            try:
                names = sorted(n for n in os.listdir(area) if ENTRY_NAME.match(n))
            finally:
                os.close(area)
            folder = root / kind.name
            records = {n for n in names if not kind.folder and n.endswith(RECORD_SUFFIX)}
            for name in names:
                path = folder / name
                if name in records:
                    entry_name = name.removesuffix(RECORD_SUFFIX) + kind.suffix
                    if entry_name not in names and _age(path, now) > GRACE:
                        yield Entry(kind.name, path, (), "stray", *_size(path), _ident(path))
                    continue
                yield _entry(kind, path, name, now)
    finally:
        os.close(root_fd)


def _ident(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _entry(kind: Kind, path: Path, name: str, now: float) -> Entry:
    size, files = _size(path)
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    is_dir = info is not None and stat.S_ISDIR(info.st_mode)
    ident = None if info is None else (info.st_dev, info.st_ino)
    well_formed = is_dir if kind.folder else (name.endswith(kind.suffix) and not is_dir)
    sources = read_record(kind.name, path) if well_formed else None
    if sources is None:
        young = _age(path, now) <= GRACE
        return Entry(kind.name, path, (), "new" if young else "unrecorded", size, files, ident)
    if kind.folder:
        size, files = size, files - 1  # the record itself is not content
    states = {source.state(kind.identity) for source in sources}
    state = "live"
    if "gone" in states:
        state = "source gone"
    elif "replaced" in states:
        state = "source replaced"
    return Entry(kind.name, path, tuple(sources), state, size, files, ident)


@contextlib.contextmanager
def _unless_busy(entry: Entry) -> Iterator[bool]:
    """Hold a history index's lock while it is removed; ``False`` when a writer holds it."""
    lock = entry.path / "lock"
    if entry.kind != "history" or not lock.is_file():
        yield True
        return
    try:
        fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _why(exc: OSError) -> str:
    if isinstance(exc, CacheRefused):
        return str(exc)
    return f"cannot remove it: {exc.strerror or exc}"


def remove_entry(entry: Entry) -> str | None:
    """Delete one entry (and a file entry's record): ``None`` once it is gone, else why it
    stayed. The entry is removed through the proven area's descriptor, and only while its
    name is one the cache makes and it is the very file or folder listed (device, inode)."""
    name = entry.path.name
    if entry.kind not in KINDS or not ENTRY_NAME.match(name):
        return "not a name the cache makes; left alone"
    with _unless_busy(entry) as free:
        if not free:
            return "its lock is held (a writer is using it); try again once it is done"
        try:
            root_fd = open_root(create=False)
            if root_fd is None:
                return None
            try:
                area = open_area(root_fd, entry.kind, create=False)
            finally:
                os.close(root_fd)
            if area is None:
                return None
            try:
                _remove_in(area, entry)
            finally:
                os.close(area)
        except OSError as exc:
            return _why(exc)
    return None


def _remove_in(area: int, entry: Entry) -> None:
    name = entry.path.name
    try:
        info = os.lstat(name, dir_fd=area)
    except FileNotFoundError:
        return
    if entry.ident is not None and (info.st_dev, info.st_ino) != entry.ident:
        raise OSError(0, "it was replaced since it was listed; left alone")
    if stat.S_ISDIR(info.st_mode):
        import shutil  # only here: it imports bz2 and lzma, which a cache lookup never needs

        shutil.rmtree(name, dir_fd=area)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=area)
    kind = KINDS[entry.kind]
    if not kind.folder and name.endswith(kind.suffix):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record_path(entry.kind, entry.path).name, dir_fd=area)


def remove(entry: Entry) -> bool:
    """Delete one entry; ``False`` if it stayed (``remove_entry`` says why)."""
    return remove_entry(entry) is None


def discard(kind: str, path: Path) -> None:
    """Throw away one entry a binding found unusable (only if it is the cache's own)."""
    remove_entry(Entry(kind, path, (), "discarded", 0, 0))


def _sweep(found: Iterator[Entry], keep_live: bool) -> Sweep:
    result = Sweep([], [])
    for entry in found:
        if keep_live and entry.live:
            continue
        why = remove_entry(entry)
        if why is None:
            result.removed.append(entry)
        else:
            result.left.append((entry, why))
    return result


def prune_report(now: float | None = None) -> Sweep:
    """Remove every entry that is not live: what was removed, and what stayed and why."""
    result = _sweep(entries(now), keep_live=True)
    _stamp()
    return result


def clear_report() -> Sweep:
    """Remove every entry of every kind, live or not: what was removed, what stayed and why."""
    return _sweep(entries(now=float("inf")), keep_live=False)


def prune(now: float | None = None) -> list[Entry]:
    """Remove every entry that is not live; the entries removed."""
    return prune_report(now).removed


def clear() -> list[Entry]:
    """Remove every entry of every kind, live or not; the entries removed."""
    return clear_report().removed


def _stamp() -> None:
    with contextlib.suppress(OSError):
        root = private_dir(cache_root())
        write_private(root / STAMP, b"")


def prune_if_due(now: float | None = None) -> None:
    """The on-access sweep: ``prune`` when the last one is ``PRUNE_EVERY`` seconds old (one
    ``stat`` otherwise). Never raises: a cache that cannot be swept (or is refused) is still
    only a cache."""
    now = time.time() if now is None else now
    try:
        last = os.stat(cache_root() / STAMP).st_mtime
    except OSError:
        last = None
    if last is not None and 0 <= now - last < PRUNE_EVERY:
        return
    if last is None and not cache_root().is_dir():
        return  # nothing cached yet: nothing to sweep
    with contextlib.suppress(OSError, ValueError):
        prune(now)


# --- the hypothesis home of a run ---------------------------------------------------------------


def hypothesis_home(spec_files: Sequence[Path]) -> Path:
    """The private folder hypothesis keeps its files in for a run over ``spec_files``."""
    sources = sorted({source_of(path) for path in spec_files}, key=lambda s: s.path)
    entry = kind_dir("hypothesis") / key_of("\0".join(s.path for s in sources))
    private_dir(entry)
    record("hypothesis", entry, sources)
    prune_if_due()
    return entry
