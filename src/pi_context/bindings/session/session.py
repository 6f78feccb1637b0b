"""``Session``: a Pi-compatible session tree bound to one JSONL file (or to memory).

The tree logic lives in ``tree.py``/``context.py`` (pure); file work in ``store.py``. This class
owns the in-memory state and Pi's write rules: nothing reaches disk until the session holds a user
or assistant message, then header + buffered entries are written with exclusive create, and every
later entry is one append. Opening a file never writes to it (Pi does; see docs/sessions.md):
migration and torn-tail repair are applied on disk only at the first write.
"""

from __future__ import annotations

import copy
import os
import re
import secrets
import uuid
from array import array
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pi_context.bindings.addresses import SESSION_ID_MAX_CHARS
from pi_context.clock import now_ms
from pi_context.gc_pause import gc_paused
from pi_context.regular import open_regular

from . import context as ctx
from . import tree as tr
from .errors import Problem, SessionError
from .jsonl import encode_line, iso_from_ms
from .migrate import CURRENT_VERSION, derived_ids, header_version, migrate, needs_migration
from .outline import OutlineRow, outline
from .store import (
    Durability,
    append,
    create_exclusive,
    ends_with_newline,
    is_header,
    read_raw,
)
from .store import rewrite as rewrite_file

Entry = dict[str, Any]
Clock = Callable[[], "int | float | datetime"]
UuidSource = Callable[[], str]

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_CONVERSATION_ROLES = ("user", "assistant")


def _check_session_id(session_id: str) -> None:
    """Refuse a custom id the binding would write into a new header: Pi's pattern, and at most
    ``SESSION_ID_MAX_CHARS`` (the id names the notes folder and every window id)."""
    if not SESSION_ID_PATTERN.match(session_id):
        raise SessionError(
            f"invalid session id {session_id[:80]!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    if len(session_id) > SESSION_ID_MAX_CHARS:
        raise SessionError(
            f"session id is {len(session_id)} characters; the limit is {SESSION_ID_MAX_CHARS}"
        )


def _default_uuid() -> str:
    return str(uuid.uuid4())


def uuidv7(ms: int, random_bytes: bytes | None = None) -> str:
    """A UUIDv7 string for ``ms`` (Pi's session id format)."""
    rand = bytearray(random_bytes if random_bytes is not None else secrets.token_bytes(10))
    value = bytearray(ms.to_bytes(6, "big")) + rand[:10]
    value[6] = 0x70 | (value[6] & 0x0F)
    value[8] = 0x80 | (value[8] & 0x3F)
    hexed = value.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def default_agent_dir() -> Path:
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return Path(os.path.expanduser(env)).resolve()
    return Path.home() / ".pi" / "agent"


def default_session_dir(cwd: Path, agent_dir: Path | None = None) -> Path:
    """Pi's per-project directory: ``<agent>/sessions/--<cwd with / \\ : as ->--``."""
    resolved = os.path.abspath(os.fspath(cwd))
    safe = re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", resolved))
    return (agent_dir or default_agent_dir()) / "sessions" / f"--{safe}--"


def seeded_uuids(seed: int) -> UuidSource:
    """A deterministic UUID source for tests (``random.Random(seed)`` based)."""
    import random

    rng = random.Random(seed)
    return lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))


class Session:
    """One session tree. Entries are plain JSON dicts in file order; do not mutate them."""

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
        self._file_values: list[Any] = [header]  # Pi's fileEntries (for whole-file rewrites)
        self._entries: list[Entry] = []
        self._lines: array[int] = array("q")  # source line of each entry (0: appended here)
        self._by_id: dict[str, Entry] = {}
        self._labels: dict[Any, Any] = {}
        self._label_stamps: dict[Any, Any] = {}
        self._leaf_id: str | None = None
        self._branch_cache: tuple[Any, list[Entry]] | None = None
        self._flushed = False
        self._header_on_disk = True
        self._needs_rewrite = False
        self._tail_checked = False
        self.problems: list[Problem] = []
        self.backup_path: Path | None = None

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
    ) -> Session:
        """Load a session file as Pi does (never hangs, never writes while loading).

        A missing file is an error unless ``create_missing`` (Pi's behaviour: a new session that
        will be created at ``path``). ``readonly`` sessions refuse every append.
        """
        path = Path(os.path.abspath(path))
        with gc_paused():  # one pause over parse and load (see gc_paused)
            return cls._open(path, readonly, create_missing, now, uuids, durability)

    @classmethod
    def _open(
        cls,
        path: Path,
        readonly: bool,
        create_missing: bool,
        now: Clock | None,
        uuids: UuidSource | None,
        durability: Durability,
    ) -> Session:
        try:
            raw = read_raw(path)
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
            raise SessionError(
                _not_a_session_reason(raw), path, raw.lines[0] if raw.values else None
            )
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
        session._load(raw.values, raw.lines, raw.problems)
        session._flushed = True
        session._tail_checked = not raw.unterminated
        return session

    def _load(
        self, values: list[Any], numbers: Sequence[int] | None, problems: Iterable[Problem]
    ) -> None:
        """Index ``values`` (the header first; the list is kept as the file's values) with
        their source lines (None: not from a file)."""
        self.problems = list(problems)
        if needs_migration(values):
            old = header_version(values)
            migrate(values, derived_ids(values))
            self._needs_rewrite = True
            self.problems.append(
                Problem(
                    "migrated", None, f"version {old!r} migrated to {CURRENT_VERSION} in memory"
                )
            )
        self._file_values = values
        problems_out = self.problems
        entries, lines, by_id = self._entries, self._lines, self._by_id
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
        return list(self._entries)

    @property
    def is_persistent(self) -> bool:
        """Whether this session is bound to a file (not ``in_memory``)."""
        return self._persist

    @property
    def persisted(self) -> bool:
        """Whether the file exists with this session's entries (Pi's ``flushed``)."""
        return self._persist and self._flushed

    @property
    def session_name(self) -> str | None:
        return tr.session_name(self._file_values)

    @property
    def labels(self) -> dict[Any, Any]:
        return dict(self._labels)

    def line_of(self, entry_id: str) -> int | None:
        """Source line of the (winning) entry with this id, if it was loaded from a file."""
        entry = self._by_id.get(entry_id)
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

    def branch(self, leaf_id: str | None = None) -> list[Entry]:
        """Root -> leaf path (Pi ``getBranch``); cycles end the walk instead of hanging.

        The last path walked is remembered until the entries change (a later entry can change
        any path: a duplicate id wins over its namesake, a new id can be a dangling parent)."""
        leaf = self._leaf_entry(leaf_id)
        key = (id(leaf), len(self._entries), len(self._by_id))
        cached = self._branch_cache
        if cached is not None and cached[0] == key and (not cached[1] or cached[1][-1] is leaf):
            return list(cached[1])
        path = tr.branch_path(leaf, self._by_id)
        self._branch_cache = (key, path)
        return list(path)

    def context_entries(self, leaf_id: str | None = None) -> list[Entry]:
        return ctx.context_entries(self.branch(leaf_id))

    def projection(self, leaf_id: str | None = None) -> dict[str, Any]:
        """``{"messages", "thinkingLevel", "model"}`` as Pi's ``buildSessionContext``."""
        with gc_paused():
            return ctx.projection(self.branch(leaf_id))

    def projection_entries(self, leaf_id: str | None = None) -> list[tuple[Entry, list[Any]]]:
        return ctx.projection_entries(self.branch(leaf_id))

    def tree(self) -> list[tr.TreeNode]:
        return tr.build_tree(self._entries, self._labels)

    def outline(self) -> list[OutlineRow]:
        """Every entry once, depth-first: Pi's tree, then parts cut out of parent cycles."""
        with gc_paused():  # hundreds of thousands of acyclic rows (see gc_paused)
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
        with gc_paused():
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
        for value in self._file_values:
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
            self._file_values.pop()
            self._entries.pop()
            self._lines.pop()
            if shadowed is None:
                del self._by_id[entry["id"]]
            else:
                self._by_id[entry["id"]] = shadowed
            self._leaf_id = previous_leaf
            raise
        return str(entry["id"])

    def _persist_entry(self, entry: Entry) -> None:
        if not self._persist or self._path is None:
            return
        if not self._flushed:
            if not self._has_conversation():
                return
            data = b"".join(encode_line(v) for v in self._file_values)
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
        data = b"".join(encode_line(v) for v in self._file_values)
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

    # -----------------------------------------------------------------------------------------
    # appends (Pi's key order matters: it is the byte order on disk)

    def append_message(self, message: dict[str, Any]) -> str:
        if not isinstance(message, dict):
            raise SessionError("a message must be a JSON object")
        entry = self._base("message")
        entry["message"] = message
        return self._append_entry(entry)

    def append_thinking_level_change(self, level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return self._append_entry(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append_entry(entry)

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Any, note: str | None = None
    ) -> str:
        entry = self._base("usage")
        entry.update(kind=kind, provider=provider, model=model, usage=usage)
        if note:
            entry["note"] = note
        return self._append_entry(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """A compaction; ``first_kept_entry_id=None`` retains nothing (stored as its own id)."""
        timestamp = self._timestamp()
        system = ctx.current_system_message(self.projection()["messages"])
        entry_id = self._new_entry_id()
        entry: Entry = {
            "type": "compaction",
            "id": entry_id,
            "parentId": self._leaf_id,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": entry_id if first_kept_entry_id is None else first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        for key, value in (("details", details), ("usage", usage), ("fromHook", from_hook)):
            if value is not None:
                entry[key] = value
        if system is not None:
            from .jsonl import js_date_ms

            entry["systemMessage"] = {**system, "timestamp": js_date_ms(timestamp)}
        return self._append_entry(entry)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        entry: Entry = {"type": "custom", "customType": custom_type}
        if data is not None:
            entry["data"] = data
        base = self._base("custom")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self._append_entry(entry)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool, details: Any = None
    ) -> str:
        entry: Entry = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if details is not None:
            entry["details"] = details
        base = self._base("custom_message")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        from .jsonl import js_trim

        entry = self._base("session_info")
        entry["name"] = js_trim(re.sub(r"[\r\n]+", " ", name))
        return self._append_entry(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with None/"" clear) the label of an entry."""
        if target_id not in self._by_id:
            raise SessionError(f"entry {target_id} not found", self._path)
        entry = self._base("label")
        entry["targetId"] = target_id
        if label is not None:
            entry["label"] = label
        entry_id = self._append_entry(entry)
        if label:
            self._labels[target_id] = label
            self._label_stamps[target_id] = entry["timestamp"]
        else:
            self._labels.pop(target_id, None)
            self._label_stamps.pop(target_id, None)
        return entry_id

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        """A branch-local edit of an earlier model-visible entry (None removes it)."""
        if replacement is not None and (
            not isinstance(replacement, dict)
            or "content" not in replacement
            or not isinstance(replacement["content"], str | list)
        ):
            raise SessionError("context edit replacement must be None or {'content': str | list}")
        target = self._by_id.get(target_id)
        if target is None:
            raise SessionError(f"entry {target_id} not found", self._path)
        if not any(e is target or e.get("id") == target_id for e in self.branch()):
            raise SessionError(f"entry {target_id} is not on the active branch", self._path)
        message = target.get("message") if target.get("type") == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        if not (target.get("type") == "custom_message" or role in ctx.EDITABLE_ROLES):
            raise SessionError(
                f"entry {target_id} does not contribute editable model content", self._path
            )
        normalized = replacement
        if (
            replacement is not None
            and role in ("assistant", "toolResult")
            and isinstance(replacement["content"], str)
        ):
            normalized = {"content": [{"type": "text", "text": replacement["content"]}]}
        entry = self._base("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = normalized
        return self._append_entry(entry)

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
        clone._load([header, *kept], None, [])
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
                clone._file_values.append(label_entry)
                clone._entries.append(label_entry)
                clone._lines.append(0)
                clone._by_id[entry_id] = label_entry
                clone._leaf_id = entry_id
        clone._labels, clone._label_stamps = tr.resolve_labels(clone._file_values)
        if self._persist:
            directory = (
                Path(target_dir)
                if target_dir is not None
                else (self._path.parent if self._path is not None else Path.cwd())
            )
            name = f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
            clone._path = Path(os.path.abspath(directory)) / name
            if clone._has_conversation():
                data = b"".join(encode_line(v) for v in clone._file_values)
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


def _to_ms(value: int | float | datetime) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return int(value)


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


def _apply_draft(session: Session, draft: dict[str, Any]) -> str:
    if not isinstance(draft, dict):
        raise SessionError("a draft must be a JSON object")
    kind = draft.get("type")
    if kind == "custom":
        return session.append_custom(_str(draft, "customType"), draft.get("data"))
    if kind == "custom_message":
        return session.append_custom_message(
            _str(draft, "customType"),
            draft.get("content"),
            bool(draft.get("display")),
            draft.get("details"),
        )
    if kind == "context_edit":
        return session.append_context_edit(_str(draft, "targetId"), draft.get("replacement"))
    if kind == "compaction":
        first_kept = draft.get("firstKeptEntryId")
        if first_kept is not None and not isinstance(first_kept, str):
            raise SessionError("compaction draft firstKeptEntryId must be a string or null")
        tokens = draft.get("tokensBefore")
        if tokens is None:
            from .windows import estimate_tokens

            tokens = estimate_tokens(session.projection()["messages"])
        return session.append_compaction(
            str(draft.get("summary", "")),
            first_kept,
            tokens,
            draft.get("details"),
            True,
            draft.get("usage"),
        )
    if kind == "message":
        return session.append_message(draft.get("message"))  # type: ignore[arg-type]
    if kind == "label":
        return session.append_label(_str(draft, "targetId"), draft.get("label"))
    if kind == "session_info":
        return session.append_session_info(_str(draft, "name"))
    if kind == "model_change":
        return session.append_model_change(_str(draft, "provider"), _str(draft, "modelId"))
    if kind == "thinking_level_change":
        return session.append_thinking_level_change(_str(draft, "thinkingLevel"))
    raise SessionError(f"unsupported draft type {kind!r}")


def _str(draft: dict[str, Any], key: str) -> str:
    value = draft.get(key)
    if not isinstance(value, str):
        raise SessionError(f"{draft.get('type')} draft needs a string {key!r}")
    return value
