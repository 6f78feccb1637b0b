"""A session's in-memory state (entries, ids, labels, leaf) and Pi's write rules: nothing
reaches disk until the session holds a user or assistant message, then header and buffered
entries are written with exclusive create, and every later entry is one append."""

from __future__ import annotations

import os
from array import array
from pathlib import Path
from typing import Any

from pi_context.support.clock import now_ms
from pi_context.support.gc_pause import gc_paused
from pi_context.support.regular import open_regular

from . import context as ctx
from . import tree as tr
from .errors import Problem, SessionError
from .ids import Clock, Entry, UuidSource, _default_uuid, _to_ms
from .jsonl import encode_line, iso_from_ms
from .lazy import Branch, ById, LazyEntries
from .outline import OutlineRow, outline
from .runs import Runs, add_entry, drop_entry, run_path
from .store import (
    Durability,
    append,
    create_exclusive,
    ends_with_newline,
)
from .store import rewrite as rewrite_file

_CONVERSATION_ROLES = ("user", "assistant")


class _State:
    """The state and persistence of a ``Session`` (which is one)."""

    def __init__(
        self,
        *,
        header: Entry,
        path: Path | None,
        persist: bool,
        now: Clock | None,
        uuids: UuidSource | None,
        durability: Durability,
        readonly: bool = False,
    ) -> None:
        self._header = header
        self._path = path
        self._persist = persist
        self._readonly = readonly
        self._now: Clock = now or now_ms
        self._uuids: UuidSource = uuids or _default_uuid
        self._durability = durability
        # Pi's fileEntries (for whole-file rewrites; None after a clean load, where they are
        # the header and then the entries: see ``_values``), the entries, and the id index: a
        # clean load's are lazy (``lazy.py``), any other session's plain.
        self._file_values: list[Any] | None = [header]
        self._entries: list[Entry] | LazyEntries = []
        self._lines: array[int] = array("q")  # source line of each entry (0: appended here)
        self._by_id: dict[str, Entry] | ById = {}
        self._labels: dict[Any, Any] = {}
        self._label_stamps: dict[Any, Any] = {}
        self._leaf_id: str | None = None
        self._branch_cache: tuple[Any, Branch] | None = None
        self._runs: Runs | None = None  # a clean load's runs, until the entries change
        self.marked: list[int] | None = None
        """After ``Session.open(marks=...)`` of a clean file: the entries (indexes, in order)
        a reader must look at (``store.read_raw``); None after any other load."""
        self._flushed = False
        self._header_on_disk = True
        self._needs_rewrite = False
        self._tail_checked = False
        self.problems: list[Problem] = []
        self.backup_path: Path | None = None

    # -----------------------------------------------------------------------------------------
    # state

    @property
    def session_id(self) -> str:
        sid: str = self._header["id"]
        return sid

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def header(self) -> Entry:
        return self._header

    @property
    def cwd(self) -> str | None:
        cwd = self._header.get("cwd")
        return cwd if isinstance(cwd, str) else None

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def entries(self) -> list[Entry]:
        with gc_paused(freeze=True):  # every entry read: as a load (see gc_paused)
            return list(self._entries)

    @property
    def is_persistent(self) -> bool:
        """Whether this session is bound to a file (not ``in_memory``)."""
        return self._persist

    @property
    def persisted(self) -> bool:
        """Whether the file exists with this session's entries (Pi's ``flushed``)."""
        return self._persist and self._flushed

    def _values(self) -> list[Any]:
        """Pi's fileEntries: every value of the file (or of a new session), the header first."""
        if self._file_values is None:
            with gc_paused(freeze=True):  # every entry read: as a load (see gc_paused)
                return [self._header, *self._entries]
        return self._file_values

    @property
    def session_name(self) -> str | None:
        entries = self._entries
        if self._file_values is None and isinstance(entries, LazyEntries):
            kinds = entries.kinds  # only the newest session_info is decoded
            for index in range(len(kinds) - 1, -1, -1):
                if kinds[index] == "session_info":
                    return tr.session_name([entries[index]])
            return None
        return tr.session_name(self._values())

    @property
    def labels(self) -> dict[Any, Any]:
        return dict(self._labels)

    def line_of(self, entry_id: str) -> int | None:
        """Source line of the (winning) entry with this id, if it was loaded from a file."""
        by_id = self._by_id
        if isinstance(by_id, ById):
            position = by_id.position(entry_id)
            if position is not None:
                return self._lines[position] or None
        entry = by_id.get(entry_id)
        for candidate, line in zip(self._entries, self._lines, strict=True):
            if candidate is entry:
                return line or None
        return None

    def get(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def label(self, entry_id: str) -> Any:
        return self._labels.get(entry_id)

    def children(self, parent_id: str | None) -> list[Entry]:
        return [e for e in self._by_id.values() if e.get("parentId") == parent_id]

    def _leaf_entry(self, leaf_id: str | None) -> Entry | None:
        if leaf_id is None:
            leaf_id = self._leaf_id
            if leaf_id is None:
                return None
        entry = self._by_id.get(leaf_id)
        if entry is None:
            raise SessionError(f"entry {leaf_id} not found", self._path)
        return entry

    def branch(self, leaf_id: str | None = None) -> Branch:
        """Root -> leaf path (Pi ``getBranch``); cycles end the walk instead of hanging. The
        entries of a clean load's path are decoded as they are read (``lazy.Branch``).

        The last path walked is remembered until the entries change (a later entry can change
        any path: a duplicate id wins over its namesake, a new id can be a dangling parent)."""
        leaf = self._leaf_entry(leaf_id)
        key = (id(leaf), len(self._entries), len(self._by_id))
        cached = self._branch_cache
        if cached is not None and cached[0] == key and (not cached[1] or cached[1][-1] is leaf):
            return cached[1]
        runs, entries = self._runs, self._entries
        if runs is not None and runs.size == len(entries) and entries and leaf is entries[-1]:
            path = Branch(entries, run_path(runs, len(entries) - 1), ascending=True)  # newest
        else:
            path = Branch(tr.branch_path(leaf, self._by_id))
        self._branch_cache = (key, path)
        return path

    def context_entries(self, leaf_id: str | None = None) -> list[Entry]:
        return ctx.context_entries(self.branch(leaf_id))

    def projection(self, leaf_id: str | None = None) -> dict[str, Any]:
        """``{"messages", "thinkingLevel", "model"}`` as Pi's ``buildSessionContext``."""
        with gc_paused():
            return ctx.projection(self.branch(leaf_id))

    def projection_entries(self, leaf_id: str | None = None) -> list[tuple[Entry, list[Any]]]:
        return ctx.projection_entries(self.branch(leaf_id))

    def tree(self) -> list[tr.TreeNode]:
        with gc_paused(freeze=True):  # every entry read: as a load (see gc_paused)
            return tr.build_tree(self._entries, self._labels)

    def outline(self) -> list[OutlineRow]:
        """Every entry once, depth-first: Pi's tree, then parts cut out of parent cycles."""
        with gc_paused(freeze=True):  # hundreds of thousands of acyclic rows (see gc_paused)
            return outline(self._entries, self._labels)

    def duplicate_ids(self) -> dict[str, list[int | None]]:
        """Each id written more than once, with the lines of all its entries (the last wins)."""
        lines: dict[str, list[int | None]] = {}
        for entry, line in zip(self._entries, self._lines, strict=True):
            lines.setdefault(entry["id"], []).append(line or None)
        return {entry_id: found for entry_id, found in lines.items() if len(found) > 1}

    def view(self, leaf_id: str | None = None, *, tree: bool = True) -> dict[str, Any]:
        """The fixtures' view: leafId, branchIds, contextEntryIds, projection, sessionName, tree
        (the nested tree is left out with ``tree=False``)."""
        with gc_paused(freeze=True):  # the branch's entries read (see gc_paused)
            return self._view(leaf_id, tree)

    def _view(self, leaf_id: str | None, tree: bool) -> dict[str, Any]:
        path = self.branch(leaf_id)
        view = {
            "leafId": path[-1]["id"] if path else None,
            "branchIds": [e["id"] for e in path],
            "contextEntryIds": [e["id"] for e in ctx.context_entries(path)],
            "projection": ctx.projection(path),
            "sessionName": self.session_name,
        }
        if tree:
            view["tree"] = tr.tree_view(self.tree())
        return view

    # -----------------------------------------------------------------------------------------
    # ids, time, persistence

    def _new_entry_id(self) -> str:
        for _ in range(100):
            candidate = self._uuids()[:8]
            if candidate not in self._by_id:
                return candidate
        return self._uuids()

    def now_ms(self) -> int:
        """This session's clock in ms since the epoch: what it stamps entries with. A host that
        writes times of its own (notes, packets, a handoff's destination) reads this one clock."""
        return _to_ms(self._now())

    def _timestamp(self) -> str:
        return iso_from_ms(self.now_ms())

    def _has_conversation(self) -> bool:
        for value in self._values():
            if isinstance(value, dict) and value.get("type") == "message":
                message = value.get("message")
                if isinstance(message, dict) and message.get("role") in _CONVERSATION_ROLES:
                    return True
        return False

    def _sync(self, boundary: bool) -> bool:
        if self._durability is Durability.ALWAYS:
            return True
        return boundary and self._durability is Durability.BOUNDARY

    def _append_entry(self, entry: Entry) -> str:
        if self._readonly:
            raise SessionError("session was opened read-only", self._path)
        started = self._extend_runs(entry)
        if self._file_values is not None:
            self._file_values.append(entry)
        self._entries.append(entry)
        self._lines.append(0)
        previous_leaf = self._leaf_id
        shadowed = self._by_id.get(entry["id"])
        self._by_id[entry["id"]] = entry
        self._leaf_id = entry["id"]
        try:
            self._persist_entry(entry)
        except BaseException:
            # An entry that is not on disk must not become a parent of later entries.
            if self._file_values is not None:
                self._file_values.pop()
            self._entries.pop()
            self._lines.pop()
            if shadowed is None:
                del self._by_id[entry["id"]]
            else:
                self._by_id[entry["id"]] = shadowed
            self._leaf_id = previous_leaf
            if self._runs is not None and started is not None:
                drop_entry(self._runs, started)
            raise
        return str(entry["id"])

    def _extend_runs(self, entry: Entry) -> bool | None:
        """Keep a clean load's runs (``runs.py``) over an entry about to be appended, so a
        branch stays a walk by runs that decodes nothing; they are dropped where the entry's
        id is not new or its parent is one they do not place. What ``add_entry`` says."""
        runs, by_id = self._runs, self._by_id
        if runs is None:
            return None
        entry_id, parent_id = entry["id"], entry.get("parentId")
        parent = (
            by_id.position(parent_id)
            if isinstance(by_id, ById) and type(parent_id) is str
            else None
        )
        if (
            not isinstance(by_id, ById)
            or runs.size != len(self._entries)
            or entry_id in by_id
            or (parent is None and parent_id in by_id)
        ):
            self._runs = None
            return None
        started = add_entry(runs, entry_id, parent_id, parent)
        if started is None:
            self._runs = None
        return started

    def _persist_entry(self, entry: Entry) -> None:
        if not self._persist or self._path is None:
            return
        if not self._flushed:
            if not self._has_conversation():
                return
            data = b"".join(encode_line(v) for v in self._values())
            create_exclusive(self._path, data, sync=self._sync(True))
            self._flushed = True
            self._tail_checked = True
            return
        if self._needs_rewrite:
            self._rewrite_whole_file()
            return
        prefix = b""
        if not self._tail_checked and not ends_with_newline(self._path):
            prefix = b"\n"  # terminate a torn last line instead of gluing onto it
        if not self._header_on_disk:
            prefix += encode_line(self._header)
        append(self._path, prefix + encode_line(entry), sync=self._sync(False))
        self._header_on_disk = True
        self._tail_checked = True

    def _rewrite_whole_file(self) -> None:
        assert self._path is not None
        data = b"".join(encode_line(v) for v in self._values())
        self.backup_path = rewrite_file(
            self._path, data, backup_suffix=".pre-migration", sync=self._sync(True)
        )
        self._needs_rewrite = False
        self._tail_checked = True

    def sync(self) -> None:
        """Force the file to stable storage (a checkpoint; see the durability policy)."""
        if self._persist and self._flushed and self._path is not None and self._path.exists():
            fd, _info = open_regular(self._path)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _base(self, kind: str) -> Entry:
        return {
            "type": kind,
            "id": self._new_entry_id(),
            "parentId": self._leaf_id,
            "timestamp": self._timestamp(),
        }
