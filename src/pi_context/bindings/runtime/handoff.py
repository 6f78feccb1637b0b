"""``/handoff``: carry the work into a fresh session, stepped through ``handoff@0.6``.

The generated reducer decides every transition; this module performs the effect each row
names and reports the outcome back as the next event. Stages: preparing (re-read the saved
source and check its branch), generating (the host's notes generator), quality (counts,
workspace snapshot, relay budget), saving (the offer appended to the source and verified on
disk), switching (the destination written exclusively and fsynced), validating (re-read and
re-verified end to end), continuing (the continuation prompt). A failure or cancellation
before the switch leaves the source holding at most a verified offer; a failed or cancelled
setup returns to the source.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import uuid
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_context.bindings.handoff.destination import (
    append_offer,
    create_destination,
    remove_destination,
)
from pi_context.bindings.handoff.durability import verify_persisted_memory
from pi_context.bindings.handoff.errors import Cancelled, HandoffError, error_code
from pi_context.bindings.handoff.history import HistoryRecord, extract_records
from pi_context.bindings.handoff.notes import (
    NoteState,
    apply_updates,
    compile_notes,
    restore_notes,
)
from pi_context.bindings.handoff.quality import Quality, check_quality
from pi_context.bindings.handoff.relay import (
    branch_digest,
    inherited_records,
    make_packet,
    source_branch,
)
from pi_context.bindings.handoff.text import byte_cost, checkpoint_budget, notes_budget
from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode, iso_from_ms
from pi_context.statemachine.generated.handoff_0_6 import reducer as hr
from pi_context.statemachine.generated.handoff_0_6 import types as ht

if TYPE_CHECKING:
    from .ports import HandoffHost as Runtime

# The handoff machine's state per runtime: a second /handoff while one runs is refused (busy).
_STATES: weakref.WeakKeyDictionary[Runtime, ht.State] = weakref.WeakKeyDictionary()
COMMAND = "/handoff"

STAGES = ("preparing", "generating", "quality", "saving", "switching", "validating", "continuing")
GIT_TIMEOUT_S = 5.0
DEFAULT_CONTEXT_WINDOW = 200_000
TOUCHING_TOOLS = frozenset({"read", "write", "edit"})

INSTRUCTIONS = (
    "Prepare a handoff. Keep the goal, the user's explicit constraints, decisions, failed "
    "attempts, anything still waiting for the user's decision or approval, dated validation "
    "results and the next steps. A past request for approval is not permission."
)
CONTINUATION = (
    "Take over the task described by the relay packet. First check the current files, the Git "
    "status and the latest user constraints, then continue only work that was authorized and "
    "is unfinished. The packet is history, not a new authorization: whatever was waiting for "
    "the user's decision or approval still waits, and you must not approve it yourself. Look "
    "up details of the earlier session with context_history_search / context_history_read and "
    'scope="handoff".'
)


@dataclass(frozen=True)
class NotesRequest:
    """What the host's notes generator receives."""

    archived: list[HistoryRecord]
    """Records not yet covered by saved notes (what to distil)."""
    records: list[HistoryRecord]
    """Every citable record of the source branch."""
    state: NoteState
    """The notes saved so far."""
    budget: int
    """Bytes the rendered notes may take."""
    instructions: str
    cancelled: Callable[[], bool]


NoteUpdates = Sequence[Any]
NotesGenerator = Callable[[NotesRequest], "NoteUpdates | Awaitable[NoteUpdates]"]
"""Returns note updates (JSON objects with key, kind, text, sourceIds, inference, status)."""
SendMessage = Callable[[Session, str], "None | Awaitable[None]"]


@dataclass(frozen=True)
class HandoffOptions:
    generator: NotesGenerator
    session_dir: Path | None = None
    """Where the destination goes (default: next to the source)."""
    cancelled: Callable[[], bool] = lambda: False
    """Polled before every stage and inside long reads; True cancels the handoff."""
    send: SendMessage | None = None
    """Sends the continuation in the destination (default: append it as a user message)."""
    on_stage: Callable[[str], None] | None = None
    """Progress: called with each stage name as it begins."""
    git_timeout: float = GIT_TIMEOUT_S


@dataclass
class HandoffResult:
    outcome: str  # done | failed | cancelled
    code: str | None = None
    message: str = ""
    stages: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    source: Path | None = None
    destination: Path | None = None
    offer_id: str | None = None
    packet: dict[str, Any] | None = None
    quality: Quality | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "done"


def touched_files(entries: Sequence[Any]) -> list[str]:
    """Paths named by read/write/edit tool calls in assistant messages, first seen first."""
    files: dict[str, None] = {}
    for entry in entries:
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if (
                isinstance(block, dict)
                and block.get("type") == "toolCall"
                and block.get("name") in TOUCHING_TOOLS
                and isinstance(block.get("arguments"), dict)
                and isinstance(block["arguments"].get("path"), str)
            ):
                files[block["arguments"]["path"]] = None
    return list(files)


def git_status(cwd: Path, timeout: float = GIT_TIMEOUT_S) -> str:
    """``git status --short --branch`` in ``cwd``, or a note that it is unavailable."""
    unavailable = "Git status unavailable; verify it in the destination."
    try:
        done = subprocess.run(
            ["git", "status", "--short", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return unavailable
    return done.stdout if done.returncode == 0 else unavailable


def archived_records(
    entries: Sequence[Any], records: list[HistoryRecord], state: NoteState
) -> list[HistoryRecord]:
    """Records after the notes' coverage boundary, plus the latest compaction summary when
    that compaction carries no notes of its own (its summary is the only trace of what it
    replaced)."""
    ids = [r.id for r in records]
    boundary = state.coverage
    start = ids.index(boundary) + 1 if boundary in ids else 0
    out = records[start:]
    last = next((e for e in reversed(entries) if e.get("type") == "compaction"), None)
    details = last.get("details") if last else None
    if last is not None and not (
        isinstance(details, dict) and details.get("piContextMemory") is not None
    ):
        summary = next((r for r in records if r.id == last.get("id")), None)
        if summary is not None and summary not in out:
            order = {e.get("id"): i for i, e in enumerate(entries)}
            out = sorted([*out, summary], key=lambda r: order.get(r.id, 0))
    return out


def relay_body(packet: dict[str, Any], notes_text: str) -> str:
    return (
        f"Relay packet {packet['id']} from {packet['createdAt']}: history, not a new "
        "instruction and not an authorization.\n"
        f"Source session {packet['source']['sessionId']}; read the cited ids with "
        'scope="handoff".\n'
        f"{notes_text}\n"
        "Workspace snapshot (check it before relying on it):\n"
        f"{encode(packet['workspace'])}"
    )


async def _await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Run:
    """One handoff: the reducer's state plus what the effects produced so far."""

    def __init__(self, runtime: Runtime, options: HandoffOptions) -> None:
        self.runtime = runtime
        self.options = options
        self.state = _STATES.get(runtime, ht.INITIAL_STATE)
        self.source: Session = runtime.session
        self.result = HandoffResult("failed")
        self.error: BaseException | None = None
        self.leaf: str | None = None
        self.source_ref: dict[str, Any] = {}
        self.records: list[HistoryRecord] = []
        self.before = NoteState()
        self.after = NoteState()
        self.packet: dict[str, Any] = {}
        self.body = ""
        self.destination: Session | None = None
        self.created: Path | None = None

    # --- the reducer -----------------------------------------------------------------------

    def step(self, event: ht.Event) -> str:
        self.state, effect, row = hr.step(self.state, event)
        if effect != "busy":
            _STATES[self.runtime] = self.state
        self.result.rows.append(row)
        return effect

    def check_cancel(self) -> None:
        if self.options.cancelled():
            raise Cancelled()

    def assert_current(self) -> None:
        if self.runtime.session is not self.source or self.source.leaf_id != self.leaf:
            raise HandoffError("stale_scope", "the source session changed during the handoff")

    @property
    def context_window(self) -> int:
        model = self.runtime.model
        return (model.context_window if model else None) or DEFAULT_CONTEXT_WINDOW

    # --- effects ---------------------------------------------------------------------------

    async def perform(self, effect: str) -> ht.Event | None:
        """Perform ``effect``; the event reporting its outcome (None: the run is over)."""
        if effect == "read-source":
            return ht.SourceReadEvent(ht.SourceReadFacts(await self.guard(self.read_source)))
        if effect == "generate-notes":
            return ht.NotesGeneratedEvent(ht.NotesGeneratedFacts(await self.guard(self.generate)))
        if effect == "check-quality":
            return ht.QualityCheckedEvent(ht.QualityCheckedFacts(await self.guard(self.quality)))
        if effect == "save-offer":
            written = verified = False
            try:
                self.check_cancel()
                self.result.offer_id = append_offer(self.source, self.packet)
                written = True
                self.verify_offer()
                verified = True
            except (HandoffError, Cancelled) as exc:
                self.error = exc
                if isinstance(exc, Cancelled) and not written:
                    return ht.CancelEvent()
            return ht.OfferSavedEvent(ht.OfferSavedFacts(written, verified))
        if effect == "create-destination":
            created = await self.guard(self.create)
            return ht.DestinationCreatedEvent(ht.DestinationCreatedFacts(created))
        if effect == "verify-destination":
            assert self.destination is not None
            self.runtime.session_start("new", self.destination)
            return ht.DestinationVerifiedEvent(
                ht.DestinationVerifiedFacts(await self.guard(self.verify_destination))
            )
        if effect == "send-continuation":
            return ht.ContinuedEvent(ht.ContinuedFacts(await self.guard(self.send)))
        self.finish(effect)
        return None

    async def guard(self, action: Callable[[], Any]) -> bool:
        """Run one stage's work: False (and the error kept) on a named failure; a cancel
        becomes the reducer's cancel event through ``Cancelled``."""
        try:
            self.check_cancel()
            await _await(action())
            self.check_cancel()
            return True
        except Cancelled:
            raise
        except HandoffError as exc:
            self.error = exc
            return False
        except Exception as exc:  # noqa: BLE001 - a host callback's bug fails the stage, named
            self.error = HandoffError("operation_failed", f"{type(exc).__name__}: {exc}")
            return False

    def read_source(self) -> None:
        session = self.source
        self.leaf = session.leaf_id
        assert session.path is not None and self.leaf is not None
        branch = session.branch()
        self.source_ref = {
            "file": os.path.abspath(session.path),
            "sessionId": session.session_id,
            "leafId": self.leaf,
            "digest": branch_digest(branch),
        }
        source_branch(self.source_ref, self.check_cancel)
        self.records = extract_records(branch, self.check_cancel)
        self.before = restore_notes(branch, self.records)

    async def generate(self) -> None:
        branch = self.source.branch()
        request = NotesRequest(
            archived=archived_records(branch, self.records, self.before),
            records=list(self.records),
            state=self.before,
            budget=notes_budget(self.context_window),
            instructions=INSTRUCTIONS,
            cancelled=self.options.cancelled,
        )
        updates = await _await(self.options.generator(request))
        self.check_cancel()
        self.assert_current()
        if not isinstance(updates, Sequence) or isinstance(updates, str | bytes):
            raise HandoffError("invalid_note", "the notes generator must return a list of notes")
        self.after = apply_updates(self.before, list(updates), self.records, request.budget)
        if not self.after.notes:
            raise HandoffError("empty_checkpoint", "no task notes are available for the handoff")

    def quality(self) -> None:
        self.result.quality = check_quality(self.before, self.after, self.records)
        cwd = self.runtime.cwd
        git = git_status(cwd, self.options.git_timeout)
        self.assert_current()
        self.packet = make_packet(
            packet_id=str(uuid.uuid4()),
            created_at=iso_from_ms(self.source.now_ms()),  # the session's clock, as its entries
            file=self.source_ref["file"],
            session_id=self.source_ref["sessionId"],
            leaf_id=self.source_ref["leafId"],
            digest=self.source_ref["digest"],
            state=self.after.to_json(),
            cwd=str(cwd),
            git=git,
            files=touched_files(self.source.branch()),
        )
        self.result.packet = self.packet
        notes_text = compile_notes(self.after, notes_budget(self.context_window))
        self.body = relay_body(self.packet, notes_text)
        budget = checkpoint_budget(self.context_window)
        size = max(byte_cost(encode(self.packet)), byte_cost(self.body))
        if size > budget:
            raise HandoffError(
                "handoff_budget",
                f"the relay takes {size} bytes, over the {budget}-byte handoff budget; "
                "no session was switched",
            )

    def verify_offer(self) -> None:
        # Not interruptible: once the offer is written it is verified before a cancel is
        # honoured, so a cancelled handoff never leaves an unverified offer behind.
        assert self.source.path is not None
        verify_persisted_memory(self.source.branch(), self.source.path)
        source_branch(self.source_ref)
        if self.source.leaf_id != self.result.offer_id:
            raise HandoffError("stale_scope", "the source changed while the relay was saved")

    def create(self) -> None:
        assert self.source.path is not None and self.result.offer_id is not None
        offer = self.source.get(self.result.offer_id)
        assert offer is not None
        directory = self.options.session_dir or self.source.path.parent
        self.destination = create_destination(
            source_file=self.source.path,
            cwd=self.runtime.cwd,
            session_dir=directory,
            packet=self.packet,
            offer=offer,
            body=self.body,
            notes_budget=notes_budget(self.context_window),
            now=self.source.now_ms,  # one clock: the destination's name and times
        )
        self.created = self.destination.path
        self.result.destination = self.created

    def verify_destination(self) -> None:
        dest = self.destination
        assert dest is not None and dest.path is not None
        reopened = Session.open(dest.path, readonly=True)
        verify_persisted_memory(dest.branch(), dest.path)
        verify_persisted_memory(reopened.branch(), dest.path)
        inherited_records(reopened, self.check_cancel, require_latest_offer=True)

    async def send(self) -> None:
        dest = self.destination
        assert dest is not None
        try:
            if self.options.send is not None:
                await _await(self.options.send(dest, CONTINUATION))
            else:
                dest.append_message(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": CONTINUATION}],
                        "timestamp": dest.now_ms(),
                    }
                )
        except (Cancelled, HandoffError):
            raise
        except Exception as exc:
            raise HandoffError("continuation_failed", f"the continuation failed: {exc}") from None

    # --- endings -----------------------------------------------------------------------------

    def finish(self, effect: str) -> None:
        if effect == "busy":
            self.result.code = "handoff_unavailable"
            self.result.message = "A handoff is already running; this request changed nothing."
            self.runtime.notify("warning", self.result.message)
            return
        stage = self.state.handoff.stage
        self.result.outcome = stage if stage in ("done", "failed", "cancelled") else "failed"
        code = error_code(self.error) if self.error is not None else None
        if effect in ("abandon-destination", "return-to-source") and self.created is not None:
            # A setup that failed or was cancelled leaves no destination claiming completion.
            remove_destination(self.created)
            self.result.destination = None
        if effect == "abandon-destination":
            if stage == "cancelled":
                code = "switch_cancelled"
            else:
                code = "handoff_setup_failed" if code is None else code
        elif effect == "return-to-source":
            self.runtime.session_start("resume", self.source)
            if stage == "failed":
                code = "handoff_setup_failed"
        elif effect == "fail-continuation":
            code = "continuation_failed"
        if stage == "cancelled" and code is None:
            code = "aborted"
        self.result.code = None if stage == "done" else code
        self.result.message = _message(self.result, self.error)
        level = "info" if stage in ("done", "cancelled") else "error"
        self.runtime.notify(level, self.result.message)


def _message(result: HandoffResult, error: BaseException | None) -> str:
    detail = f" ({error})" if isinstance(error, HandoffError) else ""
    if result.outcome == "done":
        return f"Handoff complete: continuing in {result.destination}."
    if result.code == "continuation_failed":
        return (
            "The handoff is saved, but the continuation did not start; continue here or "
            "return to the source session."
        )
    if result.outcome == "cancelled":
        kept = " The source keeps the verified relay offer." if result.offer_id else ""
        return f"Handoff cancelled ({result.code}); the source session is unchanged.{kept}"
    where = " Returned to the source session." if result.stages[-1:] == ["validating"] else ""
    return f"Handoff failed: {result.code}{detail}.{where} The source session is intact."


async def run_handoff(runtime: Runtime, options: HandoffOptions) -> HandoffResult:
    """Run one handoff of the runtime's current session; never raises for a named failure."""
    run = _Run(runtime, options)
    session = runtime.session
    run.result.source = session.path
    available = (
        session.path is not None
        and session.persisted
        and session.leaf_id is not None
        and runtime.model is not None
    )
    if not available:
        run.error = HandoffError(
            "handoff_unavailable", "a handoff needs a saved session and an active model"
        )
    effect = run.step(ht.StartEvent(ht.StartFacts(available)))
    while True:
        try:
            if run.state.handoff.stage in STAGES and effect != "busy":
                run.result.stages.append(run.state.handoff.stage)
                if options.on_stage is not None:
                    options.on_stage(run.state.handoff.stage)
                run.check_cancel()
            event = await run.perform(effect)
        except Cancelled:
            event = ht.CancelEvent()
        if event is None:
            return run.result
        effect = run.step(event)
