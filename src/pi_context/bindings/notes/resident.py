"""A resident notes view: each home's reads kept in memory by a long-lived host (the MCP
server) and refreshed by change notification, so a listing or a search of 10,000 notes does
not stat 10,000 files on every call.

A host turns it on (``enable``) and off (``shutdown``: the watcher's thread stops). While it
is on, ``NoteStore.read_home`` of a whole home asks ``read`` here:

* the home's path is checked first (``os.stat`` of the root, ``lstat`` of each folder below
  it): a home moved, replaced or linked elsewhere starts a new view;
* ``Watcher.settle`` makes sure every change finished before this call has been reported
  (``watch.py``); if it cannot, nothing held is used. A tool call that reads several homes
  settles once for all of them (``one_call``);
* a note file the watcher reports (written, created, linked, moved or removed) is read again
  alone and merged into each held read (``NoteStore.read_notes``): the other notes of its
  folder are vouched for by the watcher and kept; a change the watcher reports by folder (a
  non-ASCII name, whose other spellings decide which one is the note) is read again for
  exactly those folders (``NoteStore.read_folders``), both by the store's own per-file rules
  (a file is reused only with an unchanged stat older than the racy window); anything coarser
  (a folder created or removed, a lost watch) drops what the view holds;
* a search not held yet is the held whole read (bodies included, made once) filtered by its
  literals, unless that read refused a file (then the search reads the home itself).

In a long-lived host, a whole read is then frozen out of the collector's passes
(``SETTLE_NOTES``). Without change notification (another platform, no ``watchdog``) or
without ``enable`` every call reads the home afresh, as before. A view holds at most
``READS_MAX`` reads per home (a listing, and a few recent searches), and at most
``HOMES_MAX`` homes.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

from pi_context.support import heap

from .homes import NotesHomes
from .records import TWIN_REASON, HomeRead, Refused
from .watch import Changes, Home, Watcher


class FolderReader(Protocol):
    """What a resident view needs of a note store (``store.NoteStore`` is one): its homes,
    and a read of just some folders, or just some note files, of a home by the store's own
    rules."""

    @property
    def homes(self) -> NotesHomes: ...

    def read_folders(
        self, scope: str, folders: set[str], bodies: bool, contains: Sequence[str] | None
    ) -> tuple[set[str], HomeRead]: ...

    def read_notes(
        self, scope: str, notes: set[str], bodies: bool, contains: Sequence[str] | None
    ) -> tuple[set[str], HomeRead]: ...


READS_MAX = 8
HOMES_MAX = 16
SETTLE_NOTES = 1_000
"""A whole read of at least this many notes is followed by ``heap.settle_after_load``: in a
long-lived host (``heap.long_lived_host``), what the view and the watcher then hold is frozen,
so later full collections do not traverse it. A whole read is made once per home, and again
only when the watcher cannot vouch for a patch; the settle's collection costs a fraction of
that read. What is frozen is acyclic and freed by reference counting when it is dropped
(``tests/notes/test_resident_settle.py``)."""
MAX_PATCH_DEPTH = 64
"""A changed folder deeper than this is not read alone: the whole home is read again."""

Key = tuple[bool, tuple[str, ...] | None]
"""A held read: (bodies, search literals or None for a listing)."""


class _View:
    def __init__(self, chain: tuple[tuple[int, int], ...], home: Home) -> None:
        self.chain = chain
        self.home = home
        self.reads: OrderedDict[Key, HomeRead] = OrderedDict()
        # (folders, note files) each held read has yet to read again
        self.pending: dict[Key, Changes] = {}
        self.lock = threading.Lock()


_lock = threading.Lock()
_watcher: Watcher | None = None
_views: OrderedDict[str, _View] = OrderedDict()


def enable() -> bool:
    """Start watching (a long-lived host); False where change notification is unavailable."""
    global _watcher
    with _lock:
        if _watcher is None:
            _watcher = Watcher.start()
        return _watcher is not None


def shutdown() -> None:
    """Stop the watcher's thread and drop every view (idempotent)."""
    global _watcher
    with _lock:
        watcher, _watcher = _watcher, None
        _views.clear()
    if watcher is not None:
        watcher.close()


def enabled() -> bool:
    return _watcher is not None


class _Call(threading.local):
    active = False
    settled: bool | None = None


_call = _Call()


@contextmanager
def one_call() -> Iterator[None]:
    """The reads of several homes by one tool call share one barrier (``Watcher.settle``),
    taken at the first of them: every change finished before it has been reported, which is
    what a call promises (a change made while the call runs may or may not be seen)."""
    if _call.active:
        yield
        return
    _call.active, _call.settled = True, None
    try:
        yield
    finally:
        _call.active, _call.settled = False, None


def _settle(watcher: Watcher) -> bool:
    if not _call.active:
        return watcher.settle()
    if _call.settled is None:
        _call.settled = watcher.settle()
    return _call.settled


def _chain(root: str, parts: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """(device, inode) of the root and of each folder down to the home; None if one is
    missing or is not a plain folder (the store then decides what that means)."""
    try:
        info = os.stat(root)
        out = [(info.st_dev, info.st_ino)]
        path = root
        for part in parts:
            path = os.path.join(path, part)
            info = os.stat(path, follow_symlinks=False)
            if (info.st_mode & 0o170000) != 0o040000:
                return None
            out.append((info.st_dev, info.st_ino))
    except OSError:
        return None
    return tuple(out)


def read(
    store: FolderReader,
    scope: str,
    bodies: bool,
    contains: Sequence[str] | None,
    fresh: Callable[[], HomeRead],
    whole: Callable[[], HomeRead] | None = None,
) -> HomeRead:
    """The read of the whole home ``scope`` of ``store``: held, patched, or ``fresh()``.
    ``whole`` reads the whole home with bodies afresh: a search not held yet is filtered
    from that read, held (``WHOLE``), instead of reading every note again."""
    watcher = _watcher
    if watcher is None:
        return fresh()
    try:
        root, parts = str(store.homes.root), store.homes.parts(scope)
    except Exception:
        return fresh()  # the store names what is wrong
    chain = _chain(root, parts)
    if chain is None:
        return fresh()
    path = os.path.join(root, *parts)
    with _lock:
        view = _views.get(path)
        if view is not None and view.chain != chain:
            view = None
    if view is None:
        home = watcher.home(path)
        if home is None:
            return fresh()
        view = _View(chain, home)
        with _lock:
            _views[path] = view
            while len(_views) > HOMES_MAX:
                _views.popitem(last=False)
    with _lock:
        _views.move_to_end(path)
    key: Key = (bodies, None if contains is None else tuple(contains))
    with view.lock:
        if not _settle(watcher):
            view.reads.clear()
            return fresh()
        changed = view.home.take()
        if changed is None or any(
            f.count("/") >= MAX_PATCH_DEPTH for f in changed[0] | {_folder(n) for n in changed[1]}
        ):
            view.reads.clear()
            view.pending.clear()
            watcher.watch(view.home, None)  # new folders and files: watched before the read
        elif changed[0] or changed[1]:
            folders, notes = changed
            if folders:
                watcher.watch(view.home, folders)
            if notes:
                watcher.watch_notes(view.home, notes)  # a new file: watched before the read
            for held in view.reads:
                waiting = view.pending.setdefault(held, (set(), set()))
                waiting[0].update(folders)
                waiting[1].update(notes)
        held_read = _held(view, store, scope, key)
        if held_read is not None:
            return held_read
        made: HomeRead | None = None
        whole_read: HomeRead | None = None
        if contains is not None and bodies and whole is not None:
            # A new search: the notes of the held whole read (made once) that hold a literal.
            base = _held(view, store, scope, WHOLE)
            if base is None:
                base = whole_read = _keep(view, WHOLE, _entries_only(whole()))
            if not base.refused and not base.rows_served:
                made = _filtered(base, contains)
        if made is None:
            made = whole_read = fresh()
        kept = _keep(view, key, made)
    if whole_read is not None and len(whole_read) >= SETTLE_NOTES:
        # A whole home was read and is held (its watches added before the read): in a
        # long-lived host it is frozen out of the collector's passes, once per whole read.
        heap.settle_after_load()
    return kept


WHOLE: Key = (True, None)
"""The whole home with bodies: what a new search is filtered from."""


def _held(view: _View, store: FolderReader, scope: str, key: Key) -> HomeRead | None:
    """The read ``key`` held by ``view``, patched with the folders changed since (or None)."""
    held_read = view.reads.get(key)
    if held_read is None:
        return None
    waiting = view.pending.pop(key, None)
    if waiting is not None:
        bodies, contains = key
        folders, notes = waiting
        # A note with a refused second spelling: which spelling is the note is decided by
        # the whole folder.
        twins = {r.path for r in held_read.refused if r.reason == TWIN_REASON}
        folders |= {_folder(n) for n in notes if n in twins}
        notes = {n for n in notes if _folder(n) not in folders}
        if folders:
            held_read = _patched(held_read, store.read_folders(scope, folders, bodies, contains))
        if notes:
            held_read = _patched_notes(held_read, store.read_notes(scope, notes, bodies, contains))
        view.reads[key] = held_read
    view.reads.move_to_end(key)
    return held_read


def _keep(view: _View, key: Key, made: HomeRead) -> HomeRead:
    view.reads[key] = made
    view.pending.pop(key, None)
    while len(view.reads) > READS_MAX:
        gone, _ = view.reads.popitem(last=False)
        view.pending.pop(gone, None)
    return made


def _entries_only(read: HomeRead) -> HomeRead:
    """``read`` with its notes served from disk-cache rows built into entries (their bodies
    included), or ``read`` itself if a row cannot be built."""
    rows = read.rows
    if rows is None or not read.rows_served:
        return read
    built = [(path, rows.entry(row)) for path, row in read.rows_served]
    entries = [(path, entry) for path, entry in built if entry is not None]
    if len(entries) < len(built):
        return read
    return HomeRead(read.scope, read.entries + entries, None, [], read.refused)


def _filtered(whole: HomeRead, contains: Sequence[str]) -> HomeRead:
    """The notes of ``whole`` (usable notes with bodies, nothing refused) whose body holds
    one of ``contains``: what a fresh read with ``contains`` finds."""
    found = [
        (path, entry)
        for path, entry in whole.entries
        if any(literal in (entry.body or "") for literal in contains)
    ]
    return HomeRead(whole.scope, found, None, [], [])


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _patched_notes(held: HomeRead, update: tuple[set[str], HomeRead]) -> HomeRead:
    """``held`` with the re-read note files replaced by what ``update`` found."""
    notes, found = update
    refused: list[Refused] = [r for r in held.refused if r.path not in notes]
    return HomeRead(
        held.scope,
        [e for e in held.entries if e[0] not in notes] + found.entries,
        held.rows,
        [r for r in held.rows_served if r[0] not in notes],
        refused + found.refused,
    )


def _patched(held: HomeRead, update: tuple[set[str], HomeRead]) -> HomeRead:
    """``held`` with the notes of the re-read folders replaced by what ``update`` found."""
    folders, found = update
    return HomeRead(
        held.scope,
        [e for e in held.entries if _folder(e[0]) not in folders] + found.entries,
        held.rows,
        [r for r in held.rows_served if _folder(r[0]) not in folders],
        [r for r in held.refused if r.path.endswith("/") or _folder(r.path) not in folders]
        + found.refused,
    )
