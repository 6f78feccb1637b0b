"""Change notification for notes homes (inotify through ``watchdog``), with a barrier that
makes it exact: after ``Watcher.settle`` returns, every change to a watched home that was
complete before the call has been reported.

One ``Watcher`` per process holds one inotify instance (``watchdog``'s ``InotifyFD``, its own
reader thread) with a watch on every folder and every note file of each watched home. Events
arrive on that thread in the kernel's order; ``settle`` touches a private sentinel file watched
by the same instance and waits for its event, so every event queued before the touch (every
write another process finished before this call) has been handled by then. A note file is
watched itself as well as through its folder: a write or a new link made through another
name (a hard link elsewhere) reaches the file's own watch, never its folder's.

What a home view learns: the note files (relative paths, ASCII names) that were written,
created, linked, moved or removed; the folders (relative paths, as on disk) to read again
whole (a note with a non-ASCII name, whose other spellings decide which one is the note); or
"everything" (a folder created, moved or removed, the home itself touched, a lost watch, an
overflowed queue, a non-ASCII folder name, a barrier that timed out). Anything the watcher
cannot vouch for is "everything", and the caller reads the home afresh.

Where inotify (or ``watchdog``) is unavailable, ``Watcher.start`` returns None and the notes
store reads every home afresh on every call (its stat sweep).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

from .address import NOTE_SUFFIX as _NOTE_SUFFIX
from .address import RESERVED_PREFIX as _RESERVED

SETTLE_WAIT = 2.0
"""Seconds ``settle`` waits for its sentinel's event; past it the home is read afresh."""

_inotify: Any = None  # watchdog's inotify instance class (Linux only)
_MASK = _ISDIR = 0
try:  # anywhere else (or without watchdog) the store sweeps with stat
    from watchdog.observers.inotify_c import InotifyConstants, InotifyFD

    _inotify = InotifyFD
    _MASK = int(
        InotifyConstants.IN_MODIFY
        | InotifyConstants.IN_ATTRIB
        | InotifyConstants.IN_CLOSE_WRITE
        | InotifyConstants.IN_MOVED_FROM
        | InotifyConstants.IN_MOVED_TO
        | InotifyConstants.IN_CREATE
        | InotifyConstants.IN_DELETE
        | InotifyConstants.IN_DELETE_SELF
        | InotifyConstants.IN_MOVE_SELF
        | InotifyConstants.IN_DONT_FOLLOW
    )
    _ISDIR = int(InotifyConstants.IN_ISDIR)
except Exception:  # pragma: no cover - not Linux, or watchdog missing
    pass


EVERYTHING = None
"""``Home.take()``'s answer when the whole home must be read afresh."""

Changes = tuple[set[str], set[str]]
"""What ``Home.take()`` reports: the folders to read again whole, and the note files to read
again one by one (relative paths as on disk)."""


class Home:
    """What the watcher saw of one home since the last ``take``."""

    def __init__(self, path: str, identity: tuple[int, int]) -> None:
        self.path = path
        self.identity = identity
        self.folders: set[str] | None = set()  # None: everything
        self.notes: set[str] = set()  # note files changed (ASCII relative paths)
        self.watched: dict[str, int] = {}  # folder (relative path, '' the home) -> descriptor
        self.files: dict[str, tuple[int, int]] = {}  # note file -> (inode, descriptor)

    def mark(self, folder: str | None) -> None:
        if folder is None or not folder.isascii():
            self.folders = None
        elif self.folders is not None:
            self.folders.add(folder)

    def mark_note(self, rel: str) -> None:
        """The note file ``rel`` changed (a non-ASCII name: its whole folder)."""
        if not rel.isascii():
            self.mark(rel.rpartition("/")[0])
        elif self.folders is not None:
            self.notes.add(rel)

    def take(self) -> Changes | None:
        """(folders, note files) changed since the last take (None: everything), and start
        afresh."""
        folders, notes = self.folders, self.notes
        self.folders, self.notes = set(), set()
        return None if folders is None else (folders, notes)


class Watcher:
    """One inotify instance watching notes homes, and its settle barrier."""

    def __init__(self, inotify: Any, sentinel: Path) -> None:
        self._fd = inotify
        self._sentinel = sentinel
        self._lock = threading.Lock()
        self._settling = threading.Lock()  # one touch in flight (the kernel merges twins)
        # descriptor -> (home, folder or note files, whether a folder)
        self._by_wd: dict[int, tuple[Home, set[str], bool]] = {}
        self._homes: dict[str, Home] = {}
        self._touched = 0
        self._seen = 0
        self._arrived = threading.Condition(self._lock)
        self._broken = False
        self._sentinel_wd = inotify.add_callback(
            os.fsencode(sentinel.parent), _MASK, self, "pi-context"
        )

    @classmethod
    def start(cls) -> Watcher | None:
        """A running watcher, or None where change notification is unavailable."""
        if _inotify is None:
            return None
        try:
            # A private folder of its own (0700, removed in ``close``), never in the cache.
            folder = Path(tempfile.mkdtemp(prefix="pi-context-watch-"))
            sentinel = folder / "sentinel"
            sentinel.touch(mode=0o600)
            inotify = _inotify()  # our own instance and reader thread (stopped in ``close``)
            inotify.start()
        except Exception:
            return None
        try:
            return cls(inotify, sentinel)
        except Exception:
            with contextlib.suppress(Exception):
                inotify.stop()
                inotify.join(timeout=5)
            return None

    def close(self) -> None:
        """Stop the reader thread and remove the sentinel (the server's shutdown)."""
        with self._arrived:
            self._broken = True
            self._arrived.notify_all()
        with contextlib.suppress(Exception):
            self._fd.stop()  # closes the instance and wakes its reader
        with contextlib.suppress(Exception):
            self._fd.join(timeout=5)
        with contextlib.suppress(OSError):
            self._sentinel.unlink()
        with contextlib.suppress(OSError):
            self._sentinel.parent.rmdir()

    # -- the inotify callback protocol (called on the reader's dispatch thread)

    def on_event(self, event: Any) -> None:
        try:
            self._on_event(event)
        except Exception:  # never into the reader's thread (it would stop watching)
            self.on_queue_overflow()

    def _on_event(self, event: Any) -> None:
        with self._arrived:
            if event.wd == self._sentinel_wd:
                if os.fsdecode(event.name) == self._sentinel.name:
                    self._seen += 1
                    self._arrived.notify_all()
                return
            target = self._by_wd.get(event.wd)
            if target is None:
                return
            home, rels, folder = target
            if not folder:  # a note file's own watch: written or linked through any name
                for rel in rels:
                    home.mark_note(rel)
                return
            if len(rels) != 1:  # a folder moved: met under more than one name
                home.mark(EVERYTHING)
                return
            (rel,) = rels
            name = os.fsdecode(event.name)
            if not name:  # the folder itself: moved, removed, its mode or owner changed
                home.mark(EVERYTHING)
            elif name.startswith(_RESERVED):
                pass  # the store's temp files and lock folder: never listed
            elif event.mask & _ISDIR:
                home.mark(EVERYTHING)  # a folder created, moved or removed below
            elif name.endswith(_NOTE_SUFFIX):
                home.mark_note(f"{rel}/{name}" if rel else name)
            # temp and lock files of the store, and files that are not notes: nothing listed

    def on_watch_deleted(self, wd: Any) -> None:
        with self._arrived:
            target = self._by_wd.pop(wd, None)
            if target is None:
                return
            home, rels, folder = target
            if folder:
                home.mark(EVERYTHING)
                return
            for rel in rels:
                home.files.pop(rel, None)
                home.mark_note(rel)

    def on_queue_overflow(self) -> None:
        with self._arrived:
            for home in self._homes.values():
                home.mark(EVERYTHING)

    def on_events_lost(self) -> None:
        self.on_queue_overflow()

    # -- homes

    def home(self, path: str) -> Home | None:
        """The watched home at ``path`` (watching it first), or None if it cannot be."""
        try:
            info = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        identity = (info.st_dev, info.st_ino)
        with self._arrived:
            if self._broken:
                return None
            home = self._homes.get(path)
            if home is not None and home.identity == identity:
                return home
        if home is not None:
            self.forget(home)
        home = Home(path, identity)
        with self._arrived:
            self._homes[path] = home
        home.mark(EVERYTHING)
        self.watch(home, EVERYTHING)
        return home

    def watch(self, home: Home, folders: set[str] | None) -> None:
        """Watch the folders and note files of ``folders`` (None: the whole tree) that are
        not watched yet, or whose file was replaced (a new inode under the old name)."""
        pending = [""] if folders is None else list(folders)
        recurse = folders is None
        if recurse:  # folders may have moved: their names are learnt again
            with self._arrived:
                home.watched.clear()
                for owner, rels, folder in self._by_wd.values():
                    if owner is home and folder:
                        rels.clear()
        while pending:
            rel = pending.pop()
            if rel not in home.watched:
                self._add(home, rel, True, None)
            full = os.path.join(home.path, rel) if rel else home.path
            try:
                with os.scandir(full) as listing:
                    entries = list(listing)
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(_RESERVED):
                    continue
                child = f"{rel}/{name}" if rel else name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if recurse:
                            pending.append(child)
                    elif name.endswith(_NOTE_SUFFIX) and entry.is_file(follow_symlinks=False):
                        known = home.files.get(child)
                        if known is None or known[0] != entry.inode():
                            self._add(home, child, False, entry.inode())
                except OSError:
                    continue

    def watch_notes(self, home: Home, notes: set[str]) -> None:
        """Watch the note files ``notes`` (relative paths) that are new, or whose file was
        replaced; a name that is gone or not a regular file needs no watch."""
        for rel in notes:
            try:
                info = os.stat(os.path.join(home.path, rel), follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            known = home.files.get(rel)
            if known is None or known[0] != info.st_ino:
                self._add(home, rel, False, info.st_ino)

    def _add(self, home: Home, rel: str, folder: bool, inode: int | None) -> None:
        path = os.path.join(home.path, rel) if rel else home.path
        try:
            with warnings.catch_warnings():  # a watch met again under another name: reused
                warnings.simplefilter("ignore", RuntimeWarning)
                wd = self._fd.add_callback(os.fsencode(path), _MASK, self, home.path)
        except OSError:
            if folder:
                home.mark(EVERYTHING)
            else:
                home.mark_note(rel)
            return
        with self._arrived:
            target = self._by_wd.get(wd)
            if target is None or target[0] is not home:
                target = self._by_wd[wd] = (home, set(), folder)
            target[1].add(rel)
            if folder:
                home.watched[rel] = wd
            else:
                old = home.files.get(rel)
                home.files[rel] = (inode or 0, wd)
                if old is not None and old[1] != wd:
                    stale = self._by_wd.get(old[1])
                    if stale is not None:
                        stale[1].discard(rel)
                        if not stale[1]:  # the replaced file's inode: no name left to watch
                            del self._by_wd[old[1]]
                            with contextlib.suppress(Exception):
                                self._fd.remove_callbacks([(old[1], home.path)])

    def forget(self, home: Home) -> None:
        """Stop watching ``home`` (it was replaced by another folder)."""
        removals = []
        with self._arrived:
            self._homes.pop(home.path, None)
            for wd, (owner, _rels, _folder) in list(self._by_wd.items()):
                if owner is home:
                    removals.append((wd, home.path))
                    del self._by_wd[wd]
        with contextlib.suppress(Exception):
            self._fd.remove_callbacks(removals)

    # -- the barrier

    def settle(self) -> bool:
        """Wait until every change made before this call has been reported; False when the
        sentinel's event did not arrive in time (the caller must then trust nothing)."""
        with self._settling:
            with self._arrived:
                if self._broken:
                    return False
                self._touched += 1
                wanted = self._touched
            try:
                os.utime(self._sentinel)  # an IN_ATTRIB behind every event queued before it
            except OSError:
                return False
            with self._arrived:
                arrived = self._arrived.wait_for(
                    lambda: self._seen >= wanted or self._broken, SETTLE_WAIT
                )
                if not arrived:  # a late event would be counted for the next touch
                    self._seen = self._touched = 0
                    self._broken = True
                return arrived and not self._broken
