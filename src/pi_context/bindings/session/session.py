"""``Session``: a Pi-compatible session tree bound to one JSONL file (or to memory).

The tree logic lives in ``tree.py``/``context.py`` (pure); file work in ``store.py``. This
module opens, creates, navigates and forks a session; its in-memory state and Pi's write rules
are ``state.py``, its appends ``appends.py``, its ids and clocks ``ids.py``. Opening a file never
writes to it (Pi does; see docs/sessions.md): migration and torn-tail repair are applied on disk
only at the first write.
"""

from __future__ import annotations

import copy
import os
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pi_context.support.clock import now_ms
from pi_context.support.gc_pause import gc_paused

from . import tree as tr
from .appends import _Appends, _apply_draft
from .errors import Problem, SessionError
from .ids import (
    Clock,
    Entry,
    UuidSource,
    _check_session_id,
    _to_ms,
    default_session_dir,
    seeded_uuids,
    uuidv7,
)
from .jsonl import encode_line, iso_from_ms
from .lazy import ById, LazyEntries
from .migrate import CURRENT_VERSION, derived_ids, header_version, migrate, needs_migration
from .runs import Clean, runs_of
from .store import (
    Durability,
    create_exclusive,
    is_header,
    line_decoder,
    read_raw,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, spelt out as in the other modules
if TYPE_CHECKING:
    from .marks import Marks

__all__ = [
    "Clock",
    "Entry",
    "Session",
    "UuidSource",
    "default_session_dir",
    "seeded_uuids",
    "uuidv7",
]


class Session(_Appends):
    """One session tree. Entries are plain JSON dicts in file order; do not mutate them."""

    # -----------------------------------------------------------------------------------------
    # construction

    @classmethod
    def create(
        cls,
        cwd: Path,
        session_dir: Path | None = None,
        *,
        session_id: str | None = None,
        now: Clock | None = None,
        uuids: UuidSource | None = None,
        parent_session: str | None = None,
        durability: Durability = Durability.BOUNDARY,
    ) -> Session:
        """A new persisted session; its file appears with the first user/assistant message."""
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        session = cls._new(cwd, session_id, now, uuids, parent_session, True, durability)
        stamp = session._header["timestamp"].replace(":", "-").replace(".", "-")
        session._path = Path(os.path.abspath(directory)) / f"{stamp}_{session.session_id}.jsonl"
        return session

    @classmethod
    def in_memory(
        cls,
        cwd: Path,
        *,
        session_id: str | None = None,
        now: Clock | None = None,
        uuids: UuidSource | None = None,
    ) -> Session:
        """A session that never touches the filesystem."""
        return cls._new(cwd, session_id, now, uuids, None, False, Durability.NONE)

    @classmethod
    def _new(
        cls,
        cwd: Path,
        session_id: str | None,
        now: Clock | None,
        uuids: UuidSource | None,
        parent_session: str | None,
        persist: bool,
        durability: Durability,
    ) -> Session:
        if session_id is not None:
            _check_session_id(session_id)
        clock = now or now_ms
        ms = _to_ms(clock())
        header: Entry = {
            "type": "session",
            "version": CURRENT_VERSION,
            "id": session_id or uuidv7(ms),
            "timestamp": iso_from_ms(ms),
            "cwd": os.path.abspath(os.fspath(cwd)),
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        return cls(
            header=header,
            path=None,
            persist=persist,
            now=clock,
            uuids=uuids,
            durability=durability,
        )

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        readonly: bool = False,
        create_missing: bool = False,
        now: Clock | None = None,
        uuids: UuidSource | None = None,
        durability: Durability = Durability.BOUNDARY,
        lazy: bool = True,
        marks: Marks | None = None,
    ) -> Session:
        """Load a session file as Pi does (never hangs, never writes while loading).

        A missing file is an error unless ``create_missing`` (Pi's behaviour: a new session that
        will be created at ``path``). ``readonly`` sessions refuse every append. A clean file's
        entries are decoded when first read (``lazy.py``); ``lazy=False`` decodes them all now,
        for a caller that will read every one (it saves reading each line's shape first).
        With ``marks`` (``marks.py``), ``marked`` lists the entries a reader must look at,
        when the file is clean (else it is None).
        """
        path = Path(os.path.abspath(path))
        with gc_paused(freeze=True):  # one pause over parse and load (see gc_paused)
            return cls._open(path, readonly, create_missing, now, uuids, durability, lazy, marks)

    @classmethod
    def _open(
        cls,
        path: Path,
        readonly: bool,
        create_missing: bool,
        now: Clock | None,
        uuids: UuidSource | None,
        durability: Durability,
        lazy: bool = True,
        marks: Marks | None = None,
    ) -> Session:
        try:
            raw = read_raw(path, lazy=lazy, marks=marks)
        except FileNotFoundError:
            if not create_missing:
                raise SessionError("no such session file", path) from None
            session = cls._new(Path.cwd(), None, now, uuids, None, True, durability)
            session._path = path
            session._readonly = readonly
            return session
        torn_only = not raw.values and [p.kind for p in raw.problems] == ["torn-tail"]
        if raw.size == 0 or torn_only:
            # Pi writes a fresh header into an empty file; we do it with the first append. A
            # file holding only a torn first line (a crash while creating it) is treated the
            # same way; the fragment stays on disk as a skipped line (Pi would refuse the file).
            session = cls._new(Path.cwd(), None, now, uuids, None, True, durability)
            session._path = path
            session._readonly = readonly
            session._flushed = True
            session._header_on_disk = False
            session._tail_checked = not raw.unterminated
            session.problems = list(raw.problems)
            return session
        if not raw.values or not is_header(raw.values[0]):
            raise SessionError(_not_a_session_reason(raw), path, _not_a_session_line(raw))
        header = raw.values[0]
        session = cls(
            header=header,
            path=path,
            persist=True,
            now=now,
            uuids=uuids,
            durability=durability,
            readonly=readonly,
        )
        session._load(raw.values, raw.lines, raw.problems, raw.clean, raw.kinds, raw.shared)
        if marks is not None and session._file_values is None:  # a clean load: see ``_load``
            session.marked = [index - 1 for index in raw.marked]
        session._flushed = True
        session._tail_checked = not raw.unterminated
        return session

    def _load(
        self,
        values: list[Any],
        numbers: Sequence[int] | None,
        problems: Iterable[Problem],
        clean: Clean | None = None,
        kinds: list[Any] | None = None,
        shared: dict[str, str] | None = None,
    ) -> None:
        """Index ``values`` (the header first; the list is kept as the file's values) with
        their source lines (None: not from a file) and, from a parse, what it gathered while
        the entries were clean (``runs.Clean``: it takes the place of the loop below) and each
        value's ``type`` (``kinds``) and the strings its values share (``shared``). A clean
        parse's entries stay lines until read (``lazy.py``); any other load decodes them all
        first."""
        shared = {} if shared is None else shared
        self.problems = list(problems)
        runs = runs_of(clean) if clean is not None and not self._entries else None
        if (
            runs is not None
            and clean is not None
            and numbers is not None
            and kinds is not None
            and not needs_migration(values)
        ):  # see runs.py
            self._runs = runs
            self._file_values = None  # the header, then the entries
            del values[0], kinds[0]
            lazy = LazyEntries(values, kinds, shared)
            self._entries, self._by_id = lazy, ById(clean.by_id, lazy)
            self._lines = numbers[1:] if isinstance(numbers, array) else array("q", numbers[1:])
            if clean.by_id:
                self._leaf_id = next(reversed(clean.by_id))  # ids are unique: the newest's
            self._labels, self._label_stamps = tr.resolve_labels(clean.labels)
            return
        decode = None
        for index, value in enumerate(values):
            if type(value) is bytes:
                decode = decode or line_decoder(shared)
                values[index] = decode(value)
        if needs_migration(values):
            old = header_version(values)
            migrate(values, derived_ids(values))
            clean = None  # migration gives entries new ids
            self._needs_rewrite = True
            self.problems.append(
                Problem(
                    "migrated", None, f"version {old!r} migrated to {CURRENT_VERSION} in memory"
                )
            )
        self._file_values = values
        problems_out = self.problems
        entries: list[Entry] = []
        by_id: dict[str, Entry] = {}
        self._entries, self._by_id, lines = entries, by_id, self._lines
        label_values: list[Entry] = []
        # A parent cycle needs an entry whose parent was not loaded before it (a forward or
        # dangling reference) or an id that repeats; without either the cycle walk is skipped.
        forward: list[str] = []
        repeats = False
        for index in range(1, len(values)):
            value = values[index]
            line = numbers[index] if numbers is not None else 0
            if type(value) is not dict:
                what = type(value).__name__
                problems_out.append(
                    Problem("not-an-object", line, f"skipped JSON value of type {what}")
                )
                continue
            kind = value.get("type")
            if kind == "session":
                problems_out.append(Problem("extra-header", line, "extra session header ignored"))
                continue
            if kind == "label":
                label_values.append(value)
            entry_id = value.get("id")
            if type(entry_id) is not str or not entry_id:
                problems_out.append(
                    Problem("missing-id", line, "entry without a string id skipped")
                )
                continue
            if entry_id in by_id:
                repeats = True
                problems_out.append(
                    Problem("duplicate-id", line, f"id {entry_id} repeats; this later entry wins")
                )
            if kind == "message" and type(value.get("message")) is not dict:
                problems_out.append(
                    Problem("bad-message", line, "message entry without a message object")
                )
            parent = value.get("parentId")
            if type(parent) is str and parent not in by_id:
                forward.append(parent)
            entries.append(value)
            lines.append(line)
            by_id[entry_id] = value
        if entries:
            self._leaf_id = entries[-1]["id"]
        self._labels, self._label_stamps = tr.resolve_labels(label_values)
        if not repeats and not any(parent in by_id for parent in forward):
            return
        cycles = tr.find_cycles(by_id)
        if cycles:
            line_of = {id(e): ln for e, ln in zip(entries, lines, strict=True)}
            for cycle in cycles:
                first = by_id[cycle[0]]
                found = line_of.get(id(first))
                problems_out.append(Problem("cycle", found or None, _cycle_text(cycle)))

    def append_draft(self, draft: dict[str, Any]) -> str:
        """Append one boundary draft (``type`` + fields, no id/parentId/timestamp)."""
        return _apply_draft(self, draft)

    def append_drafts(
        self, drafts: Sequence[dict[str, Any]], *, checkpoint: bool = True
    ) -> list[str]:
        """Validate all drafts against a copy of the branch, then append them in order.

        Nothing is written if any draft is invalid. With ``checkpoint`` the file is synced after
        the batch (unless durability is NONE).
        """
        preview = self._preview()
        for index, draft in enumerate(drafts):
            try:
                _apply_draft(preview, draft)
            except SessionError as exc:
                raise SessionError(
                    f"draft {index} ({draft.get('type')!r}) rejected: {exc.reason}"
                ) from exc
        ids = [_apply_draft(self, draft) for draft in drafts]
        if checkpoint and self._durability is not Durability.NONE:
            self.sync()
        return ids

    def _preview(self) -> Session:
        clone = Session(
            header=copy.deepcopy(self._header),
            path=None,
            persist=False,
            now=self._now,
            uuids=self._uuids,
            durability=Durability.NONE,
        )
        clone._load([clone._header] + [copy.deepcopy(e) for e in self.branch()], None, [])
        clone._leaf_id = self._leaf_id
        return clone

    # -----------------------------------------------------------------------------------------
    # navigation

    def move_leaf(self, entry_id: str) -> None:
        """Pi ``branch(id)``: the next append becomes a child of ``entry_id`` (not persisted)."""
        if entry_id not in self._by_id:
            raise SessionError(f"entry {entry_id} not found", self._path)
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """The next append becomes a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self,
        from_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """Move the leaf to ``from_id`` and append a ``branch_summary`` of the abandoned path."""
        if from_id is not None and from_id not in self._by_id:
            raise SessionError(f"entry {from_id} not found", self._path)
        old_leaf = self._leaf_id if self._leaf_id is not None else "root"
        previous = self._leaf_id
        self._leaf_id = from_id
        entry = self._base("branch_summary")
        entry["fromId"] = old_leaf
        entry["summary"] = summary
        for key, value in (("details", details), ("usage", usage), ("fromHook", from_hook)):
            if value is not None:
                entry[key] = value
        try:
            return self._append_entry(entry)
        except BaseException:
            self._leaf_id = previous
            raise

    # -----------------------------------------------------------------------------------------
    # fork

    def fork(
        self, target: Path, *, cwd: Path | None = None, session_id: str | None = None
    ) -> Session:
        """Pi ``forkFrom``: a new file with a new id holding every entry of this session.

        ``target`` is a directory (Pi's file name is generated) or a ``.jsonl`` path.
        """
        ms = _to_ms(self._now())
        sid = session_id or uuidv7(ms)
        _check_session_id(sid)
        stamp = iso_from_ms(ms)
        target = Path(os.path.abspath(target))
        if target.suffix == ".jsonl":
            new_path = target
        else:
            new_path = target / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        header: Entry = {
            "type": "session",
            "version": CURRENT_VERSION,
            "id": sid,
            "timestamp": stamp,
            "cwd": os.path.abspath(os.fspath(cwd)) if cwd is not None else self.cwd,
        }
        if self._path is not None:
            header["parentSession"] = os.fspath(self._path)
        data = encode_line(header) + b"".join(encode_line(e) for e in self._entries)
        create_exclusive(new_path, data, sync=self._durability is not Durability.NONE)
        return Session.open(new_path, now=self._now, uuids=self._uuids, durability=self._durability)

    def clone_branch(
        self,
        leaf_id: str | None = None,
        target_dir: Path | None = None,
        *,
        session_id: str | None = None,
    ) -> Session:
        """Pi ``createBranchedSession``: a new session holding only the root->leaf path.

        Label entries are dropped from the path (later entries re-chained past them) and the
        labels that apply to path entries are re-appended at the end. The new file is written at
        once if the path holds a conversation (exclusive create), otherwise on the first
        user/assistant message, as for any new session.
        """
        path = self.branch(leaf_id)
        if not path:
            raise SessionError("cannot clone an empty branch", self._path)
        kept: list[Entry] = []
        replacement: dict[str, str] = {}
        pending: list[str] = []
        parent: str | None = None
        for entry in path:
            if entry.get("type") == "label":
                pending.append(entry["id"])
                continue
            for label_id in pending:
                replacement[label_id] = entry["id"]
            pending.clear()
            copy_ = {**entry, "parentId": parent}
            if entry.get("type") == "compaction":
                first = entry.get("firstKeptEntryId")
                if "firstKeptEntryId" in entry and first != entry["id"]:
                    copy_["firstKeptEntryId"] = replacement.get(first, first)  # type: ignore[arg-type]
            kept.append(copy_)
            parent = entry["id"]
        ms = _to_ms(self._now())
        sid = session_id or uuidv7(ms)
        _check_session_id(sid)
        stamp = iso_from_ms(ms)
        header: Entry = {
            "type": "session",
            "version": CURRENT_VERSION,
            "id": sid,
            "timestamp": stamp,
            "cwd": self.cwd,
        }
        if self._persist and self._path is not None:
            header["parentSession"] = os.fspath(self._path)
        clone = Session(
            header=header,
            path=None,
            persist=self._persist,
            now=self._now,
            uuids=self._uuids,
            durability=self._durability,
        )
        values = [header, *kept]
        clone._load(values, None, [])
        on_path = {e["id"] for e in kept}
        for target, label in list(self._labels.items()):
            if target in on_path:
                entry_id = clone._new_entry_id()
                label_entry: Entry = {
                    "type": "label",
                    "id": entry_id,
                    "parentId": clone._leaf_id,
                    "timestamp": self._label_stamps.get(target),
                    "targetId": target,
                    "label": label,
                }
                values.append(label_entry)
                clone._entries.append(label_entry)
                clone._lines.append(0)
                clone._by_id[entry_id] = label_entry
                clone._leaf_id = entry_id
        clone._labels, clone._label_stamps = tr.resolve_labels(values)
        if self._persist:
            directory = (
                Path(target_dir)
                if target_dir is not None
                else (self._path.parent if self._path is not None else Path.cwd())
            )
            name = f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
            clone._path = Path(os.path.abspath(directory)) / name
            if clone._has_conversation():
                data = b"".join(encode_line(v) for v in values)
                create_exclusive(clone._path, data, sync=clone._sync(True))
                clone._flushed = True
                clone._tail_checked = True
        return clone


CYCLE_SHOWN = 6  # ids of a long cycle shown at each end; the rest is counted


def _cycle_text(cycle: list[str]) -> str:
    """A cycle as a short line, however long it is (a 100k-entry cycle is one short warning)."""
    if len(cycle) <= 2 * CYCLE_SHOWN:
        walk = " -> ".join([*cycle, cycle[0]])
    else:
        hidden = len(cycle) - 2 * CYCLE_SHOWN
        walk = " -> ".join(
            [*cycle[:CYCLE_SHOWN], f"... {hidden} more ...", *cycle[-CYCLE_SHOWN:], cycle[0]]
        )
    return f"parent cycle of {len(cycle)} entries: {walk}; walks stop there"


def _not_a_session_line(raw: Any) -> int | None:
    """The line a "not a Pi session" error names: the byte-order mark's (line 1), else the
    first JSON value's."""
    bom = next((p.line for p in raw.problems if p.kind == "bom"), None)
    if bom is not None:
        return int(bom)
    return int(raw.lines[0]) if raw.values else None


def _not_a_session_reason(raw: Any) -> str:
    if any(p.kind == "bom" for p in raw.problems):
        return "not a Pi session: the file starts with a UTF-8 byte-order mark (remove EF BB BF)"
    if not raw.values:
        return "not a Pi session: no line parses as JSON"
    first = raw.values[0]
    return (
        "not a Pi session: the first JSON value must be a header "
        '{"type":"session","id":...}, found ' + repr(first)[:80]
    )
