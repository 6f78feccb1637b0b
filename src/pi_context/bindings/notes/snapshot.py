"""The closed boot snapshot: all five homes, each read at most once, frozen for one boot.

A boot renders its notes index from this value alone, so one boot can never mix two reads of
the filesystem. Reading never writes: no file is created, touched or repaired.

A home that does not exist is simply empty. A home that exists but cannot be read (a
permission error, a file where a folder should be…) is left out on its own: the other homes
are kept, and the snapshot carries a model-facing notice to retry with ``notes_list`` and a
one-line notice for the human.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter

from pi_context.bindings.notes.diskcache import Rows
from pi_context.bindings.notes.frontmatter import NoteMeta, crumpled_at
from pi_context.bindings.notes.homes import SCOPES
from pi_context.bindings.notes.records import Refused
from pi_context.bindings.notes.store import HomeReadError, NoteError, NoteStore
from pi_context.support.frozen import frozen
from pi_context.support.gc_pause import gc_paused


class SnapshotNote:
    """One note of the snapshot. A note served from the disk cache keeps the rows it came
    from (bytes read when the snapshot was taken, never re-read) and builds its metadata
    and decodes its body only when asked: a boot reads every note's time and stale flag
    (plain fields here) but shows a few bodies of thousands."""

    __slots__ = (
        "scope",
        "path",
        "updated_at",
        "stale",
        "size_bytes",
        "_meta",
        "_body",
        "_rows",
        "_row",
        "_store",
    )

    def __init__(
        self,
        scope: str,
        path: str,
        body: str | None,
        meta: NoteMeta | None,
        size_bytes: int,
        rows: Rows | None = None,
        row: int = -1,
        store: NoteStore | None = None,
        updated_at: int = 0,
        stale: bool = False,
    ) -> None:
        """``meta`` or (``rows``, ``row``, ``updated_at``, ``stale``) say the metadata."""
        self.scope = scope
        self.path = path
        self.size_bytes = size_bytes
        self._meta = meta
        self.updated_at = updated_at if meta is None else meta.updated_at
        self.stale = stale if meta is None else meta.stale
        self._body = body
        self._rows = rows
        self._row = row
        self._store = store

    @property
    def meta(self) -> NoteMeta:
        if self._meta is None:
            assert self._rows is not None
            self._meta = self._rows.meta(self._row)
        return self._meta

    @property
    def body(self) -> str:
        if self._body is None:
            assert self._rows is not None
            body = self._rows.body_of(self._row)
            if body is None:
                # The cache file was damaged in place after the snapshot was taken (only a
                # foreign writer does that): the note file is the best remaining source.
                body = _read_now(self._store, self.scope, self.path)
            self._body = body
        return self._body

    def __repr__(self) -> str:
        return f"SnapshotNote({self.scope!r}, {self.path!r}, {self.size_bytes} bytes)"


def _read_now(store: NoteStore | None, scope: str, path: str) -> str:
    if store is None:
        return ""
    try:
        return store.read(scope, path, allow_legacy=True).body
    except NoteError:
        return ""


@frozen
class HomeFailure:
    scope: str
    error: str


@frozen
class NotesSnapshot:
    notes: tuple[SnapshotNote, ...]
    """Every usable note of the loaded homes but crumpled ones, most recently updated first."""
    loaded: tuple[str, ...]
    """Scopes read successfully (an absent home counts: it is empty)."""
    unavailable: tuple[str, ...]
    """Scopes this identity has no home for (no session id, no model id)."""
    failures: tuple[HomeFailure, ...]
    refused: tuple[Refused, ...]

    def index(self) -> tuple[SnapshotNote, ...]:
        """The boot index: every note except stale ones, most recently updated first."""
        return tuple(note for note in self.notes if not note.stale)

    @property
    def complete(self) -> bool:
        return not self.failures

    def recovery_notice(self) -> str | None:
        """What the model is told when a home is missing from the index, else ``None``."""
        if not self.failures:
            return None
        scopes = ", ".join(failure.scope for failure in self.failures)
        return (
            f"The notes index is incomplete: the {scopes} home could not be read. "
            "Call notes_list to retry before relying on it."
        )

    def human_notice(self) -> str | None:
        """One line for the human (shown once per boot), else ``None``."""
        if not self.failures:
            return None
        details = "; ".join(f"{failure.scope}: {failure.error}" for failure in self.failures)
        return f"pi-context: notes index incomplete ({details})"

    def legacy_notice(self) -> str | None:
        legacy = [item for item in self.refused if "legacy" in item.reason]
        if not legacy:
            return None
        return (
            f"{len(legacy)} note(s) use legacy snake_case metadata and are not indexed; "
            "run `pi-context notes migrate --apply`"
        )


def load_snapshot(store: NoteStore) -> NotesSnapshot:
    """Read each available home exactly once and freeze the result."""
    with gc_paused():
        return _load_snapshot(store)


def _load_snapshot(store: NoteStore) -> NotesSnapshot:
    available = store.homes.available()
    notes: list[SnapshotNote] = []
    loaded: list[str] = []
    failures: list[HomeFailure] = []
    refused: list[Refused] = []
    for scope in available:
        try:
            read = store.read_home(scope, bodies=True)
        except HomeReadError as exc:
            failures.append(HomeFailure(scope, exc.message))
            continue
        loaded.append(scope)
        refused.extend(read.refused)
        rows = read.rows
        if rows is not None and read.rows_served:
            # Crumpled notes are left out of the boot, as the extension leaves them out.
            kept = [
                pair for pair in read.rows_served if crumpled_at(rows.extra_lines(pair[1])) is None
            ]
            paths = [path for path, _row in kept]
            served = [row for _path, row in kept]
            count = len(served)
            notes.extend(
                map(
                    SnapshotNote,
                    repeat(scope, count),
                    paths,
                    repeat(None, count),
                    repeat(None, count),
                    rows.body_sizes(served),
                    repeat(rows, count),
                    served,
                    repeat(store, count),
                    rows.updated_of(served),
                    rows.stale_of(served),
                )
            )
        key = ("snapshot", scope)
        for path, entry in read.entries:
            if crumpled_at(entry.extra_lines) is not None:
                continue
            # Built once per file version: a long-lived host re-boots over the same notes.
            note = entry.memo.get(key)
            if note is None or note.path != path:
                body = entry.body or ""
                size = len(body.encode("utf-8", "surrogatepass"))
                note = SnapshotNote(scope, path, body, entry.meta, size)
                entry.memo[key] = note
            notes.append(note)
    # The order of ``list_order`` (newest first, then path, then scope), without building
    # a second record per note: the snapshot of 50,000 notes is a hot path of every boot.
    # Three stable sorts on single attributes (no key tuple per note), least significant first.
    notes.sort(key=attrgetter("scope"))
    notes.sort(key=attrgetter("path"))
    notes.sort(key=attrgetter("updated_at"), reverse=True)
    ordered = tuple(notes)
    unavailable = tuple(scope for scope in SCOPES if scope not in available)
    return NotesSnapshot(ordered, tuple(loaded), unavailable, tuple(failures), tuple(refused))
