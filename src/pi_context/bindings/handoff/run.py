"""One handoff episode, stepped through ``handoff@0.6-auto``: perform the effect each row
names, report its outcome as the next event, until the spec reaches an end.

Effects map to methods of ``HandoffRun`` by name (``read-source`` → ``read_source``); a stage's
method returns the event that reports its outcome, an ending's method returns None. Every
stage runs inside ``guard``: a named failure, a host callback's bug or a full disk becomes the
stage's failing report, a cancel becomes the spec's cancel event — nothing escapes, so the
spec always decides what happens next, and the result code is the end stage's.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff import outcomes
from pi_context.bindings.handoff.api import (
    CONTINUATION,
    DEFAULT_CONTEXT_WINDOW,
    INSTRUCTIONS,
    HandoffOptions,
    HandoffOwner,
    HandoffResult,
    NotesRequest,
    _Requests,
    archived_records,
    git_status,
    touched_files,
)
from pi_context.bindings.handoff.destination import (
    append_offer,
    append_record,
    create_destination,
    remove_destination,
)
from pi_context.bindings.handoff.durability import verify_persisted_memory
from pi_context.bindings.handoff.errors import Cancelled, HandoffError, error_code, outcome_of
from pi_context.bindings.handoff.history import HistoryRecord, extract_records
from pi_context.bindings.handoff.notes import NoteState, apply_updates, compile_notes, restore_notes
from pi_context.bindings.handoff.quality import check_quality
from pi_context.bindings.handoff.relay import (
    branch_digest,
    inherited_records,
    make_packet,
    relay_body,
    source_branch,
)
from pi_context.bindings.handoff.text import byte_cost, checkpoint_budget, notes_budget
from pi_context.bindings.operations import Operation
from pi_context.bindings.operations.operation import iso
from pi_context.bindings.operations.progress import HANDOFF
from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.jsonl import encode
from pi_context.statemachine.typed import handoff_0_6_auto as ht

RUNNING = (
    ht.HandoffPreparing,
    ht.HandoffGenerating,
    ht.HandoffQuality,
    ht.HandoffSaving,
    ht.HandoffSwitching,
    ht.HandoffValidating,
    ht.HandoffContinuing,
)
STAGES: tuple[str, ...] = tuple(cls.stage for cls in RUNNING)
ENDED = (ht.HandoffFailed, ht.HandoffCancelled)


def is_running(state: ht.State) -> bool:
    return isinstance(state.handoff, RUNNING)


async def _await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class _Ready:
    """``offer_saved``'s lazy ``ready`` fact: the host's assertReady, then its onSwitch — asked
    only if read (an automatic handoff's offer, verified)."""

    def __init__(self, run: HandoffRun, written: bool, verified: bool) -> None:
        self.written = written
        self.verified = verified
        self._run = run

    @property
    def ready(self) -> bool:
        options = self._run.options
        try:
            if options.assert_ready is not None:
                options.assert_ready()
            if options.on_switch is not None:  # the seed calls it right before the switch
                options.on_switch()
            return True
        except HandoffError as exc:
            self._run.error = exc
        except Exception as exc:  # noqa: BLE001 - a host callback's bug is named, not raised
            self._run.error = HandoffError("handoff_not_ready", f"{type(exc).__name__}: {exc}")
        return False


class HandoffRun:
    """One episode: a /handoff, a pressure check, or an automatic-handoff command."""

    def __init__(self, owner: HandoffOwner, options: HandoffOptions | None) -> None:
        self.owner = owner
        self.host = owner.host
        self.options = options or HandoffOptions(generator=lambda request: [])
        self.source: Session = owner.host.session
        self.result = HandoffResult("")
        self.error: BaseException | None = None
        self.operation: Operation | None = None
        self.leaf: str | None = None
        self.source_ref: dict[str, Any] = {}
        self.records: list[HistoryRecord] = []
        self.before = NoteState()
        self.after = NoteState()
        self.packet: dict[str, Any] = {}
        self.body = ""
        self.destination: Session | None = None
        self.created: Path | None = None
        self.switched = False
        self.max_requests: int | None = None

    # --- the loop ----------------------------------------------------------------------------

    async def drive(self, effect: str) -> HandoffResult:
        """Perform ``effect`` and every effect after it until the spec reaches an end."""
        stage = None
        while True:
            state = self.owner.state
            try:
                if (
                    self.operation is not None
                    and is_running(state)
                    and state.handoff.stage != stage
                ):
                    stage = state.handoff.stage
                    self._enter(stage)
                event = await self.perform(effect)
            except Cancelled:
                event = ht.CancelEvent()
            if event is None:
                return self.result
            effect = self.owner.step(event, self.result.rows)

    async def perform(self, effect: str) -> ht.Event | None:
        method: Callable[[], Any] | None = getattr(self, effect.replace("-", "_"), None)
        if method is None:
            raise RuntimeError(f"{ht.SPEC_ID}: effect {effect!r} has no performer")
        event: ht.Event | None = await _await(method())
        if event is None and self.operation is not None:
            self._end()
        return event

    def _enter(self, stage: str) -> None:
        self.result.stages.append(stage)
        if self.operation is not None:
            self.operation.stage(stage)
        if self.options.on_stage is not None:
            self.options.on_stage(stage)
        # The cancel is polled by the stage's own effect (its guard), so the effect the spec
        # named always runs: an automatic start takes its attempt even if cancelled at once.

    def check_cancel(self) -> None:
        if self.options.cancelled():
            raise Cancelled()

    def assert_current(self) -> None:
        if self.host.session is not self.source or self.source.leaf_id != self.leaf:
            raise HandoffError("stale_scope", "the source session changed during the handoff")

    async def guard(self, action: Callable[[], Any]) -> bool:
        """Run one stage's work: False (and the error kept) on any failure; a cancel is raised
        (it becomes the spec's cancel event)."""
        try:
            self.check_cancel()
            await _await(action())
            self.check_cancel()
            return True
        except Cancelled:
            raise
        except HandoffError as exc:
            self.error = exc
        except (SessionError, OSError) as exc:
            self.error = HandoffError("storage_failed", str(exc))
        except Exception as exc:  # noqa: BLE001 - a host callback's bug fails the stage, named
            self.error = HandoffError("operation_failed", f"{type(exc).__name__}: {exc}")
        return False

    @property
    def context_window(self) -> int:
        model = self.host.model
        window = getattr(model, "context_window", None) if model is not None else None
        return window or DEFAULT_CONTEXT_WINDOW

    # --- starts ------------------------------------------------------------------------------

    def begin(self, available: bool, trigger: dict[str, Any]) -> None:
        """The episode is a handoff: open its operation (the log and progress)."""
        session = self.host.session
        self.result.source = session.path
        self.operation = Operation(
            self.owner.logs, HANDOFF, session.path, session.session_id, trigger
        )
        self.result.operation_id = self.operation.id
        self.result.log_path = self.operation.log_path
        if not available:
            self.error = HandoffError(
                "handoff_unavailable", "a handoff needs a saved session and an active model"
            )

    async def read_source(self) -> ht.Event:
        return ht.SourceReadEvent(ht.SourceReadFacts(await self.guard(self._read_source)))

    async def begin_automatic(self) -> ht.Event:
        self.owner.take_attempt()
        self.max_requests = self.owner.policy.max_requests
        return await self.read_source()

    def _read_source(self) -> None:
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

    # --- stages ------------------------------------------------------------------------------

    async def generate_notes(self) -> ht.Event:
        return ht.NotesGeneratedEvent(ht.NotesGeneratedFacts(await self.guard(self._generate)))

    async def _generate(self) -> None:
        timeout_ms = self.owner.policy.generation_timeout_ms
        tracked = _Requests(
            self.operation, self.max_requests, timeout_ms, self.owner.state.handoff.stage
        )
        request = NotesRequest(
            archived=archived_records(self.source.branch(), self.records, self.before),
            records=list(self.records),
            state=self.before,
            budget=notes_budget(self.context_window),
            instructions=INSTRUCTIONS,
            cancelled=self.options.cancelled,
            max_requests=self.max_requests,
            _requests=tracked,
        )
        if self.operation is not None:
            tracked.first = self.operation.call(1, timeout_ms)
        try:
            updates = await asyncio.wait_for(self._call_generator(request), timeout_ms / 1000)
        except TimeoutError:
            failure = HandoffError(
                "checkpoint_timeout",
                f"the notes generator did not finish within {timeout_ms / 1000:g}s",
            )
            self._end_calls(tracked, failure)
            raise failure from None
        except BaseException as exc:
            self._end_calls(tracked, exc)
            raise
        self._end_calls(tracked, None)
        self.check_cancel()
        self.assert_current()
        if not isinstance(updates, list | tuple):
            raise HandoffError("invalid_note", "the notes generator must return a list of notes")
        self.after = apply_updates(self.before, list(updates), self.records, request.budget)
        if not self.after.notes:
            raise HandoffError("empty_checkpoint", "no task notes are available for the handoff")

    async def _call_generator(self, request: NotesRequest) -> Any:
        """The host's generator: a coroutine runs on the loop, a plain function in a worker
        thread (so the generation timeout holds for both)."""
        generator = self.options.generator
        if inspect.iscoroutinefunction(generator):
            return await generator(request)

        def call() -> Any:
            try:
                return generator(request)
            except StopIteration:  # it cannot cross a future: it would hang the handoff
                raise HandoffError(
                    "operation_failed", "the notes generator raised StopIteration"
                ) from None

        return await _await(await asyncio.to_thread(call))

    def _end_calls(self, tracked: _Requests, error: BaseException | None) -> None:
        """End every request the generator left open (and the first, if it logged none) with
        the generation's outcome; requests it ended itself keep theirs."""
        outcome = outcome_of(error)
        code = None if error is None else error_code(error)
        for call in [*tracked.calls, *([tracked.first] if tracked.first else [])]:
            call.end(outcome, code)

    async def check_quality(self) -> ht.Event:
        return ht.QualityCheckedEvent(ht.QualityCheckedFacts(await self.guard(self._quality)))

    def _quality(self) -> None:
        self.result.quality = check_quality(self.before, self.after, self.records)
        if self.operation is not None:
            self.operation.quality(self.result.quality.to_json())
        cwd = self.host.cwd
        git = git_status(cwd, self.options.git_timeout)
        self.assert_current()
        self.packet = make_packet(
            packet_id=str(uuid.uuid4()),
            created_at=iso(self.owner.clock()),  # the log's clock: the parent's window ends here
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

    def save_offer(self) -> ht.Event:
        written = verified = False
        try:
            self.check_cancel()
            self.result.offer_id = append_offer(self.source, self.packet)
            written = True
            self._verify_offer()
            verified = True
        except Cancelled as exc:
            self.error = exc
            if not written:
                return ht.CancelEvent()
        except HandoffError as exc:
            self.error = exc
        except (SessionError, OSError) as exc:
            self.error = HandoffError("storage_failed", str(exc))
        return ht.OfferSavedEvent(_Ready(self, written, verified))

    def _verify_offer(self) -> None:
        # Not interruptible: once the offer is written it is verified before a cancel is
        # honoured, so a cancelled handoff never leaves an unverified offer behind.
        assert self.source.path is not None
        verify_persisted_memory(self.source.branch(), self.source.path)
        source_branch(self.source_ref)
        if self.source.leaf_id != self.result.offer_id:
            raise HandoffError("stale_scope", "the source changed while the relay was saved")

    async def create_destination(self) -> ht.Event:
        created = await self.guard(self._create)
        return ht.DestinationCreatedEvent(ht.DestinationCreatedFacts(created))

    def _create(self) -> None:
        assert self.source.path is not None and self.result.offer_id is not None
        offer = self.source.get(self.result.offer_id)
        assert offer is not None
        directory = self.options.session_dir or self.source.path.parent
        self.destination = create_destination(
            source_file=self.source.path,
            cwd=self.host.cwd,
            session_dir=directory,
            packet=self.packet,
            offer=offer,
            body=self.body,
            notes_budget=notes_budget(self.context_window),
            automatic=self.owner.record().to_json(),
            now=self.source.now_ms,  # one clock: the source session's, as the packet and the log
        )
        self.created = self.destination.path
        self.result.destination = self.created

    async def verify_destination(self) -> ht.Event:
        ok = await self.guard(self._open_and_verify)
        return ht.DestinationVerifiedEvent(ht.DestinationVerifiedFacts(ok))

    async def verify_destination_automatic(self) -> ht.Event:
        async def stamp() -> None:
            await self._open_and_verify()
            dest = self.destination
            assert dest is not None
            now = self.owner.clock()
            record = auto.stamped(self.owner.record(), now)
            append_record(dest, record.to_json())
            self._verify(dest)
            self.owner.stamp(now)

        ok = await self.guard(stamp)
        return ht.DestinationVerifiedEvent(ht.DestinationVerifiedFacts(ok))

    async def _open_and_verify(self) -> None:
        dest = self.destination
        assert dest is not None
        if not await self._switch(dest, "new"):
            raise Cancelled()
        if self.operation is not None:
            self.operation.move(dest.path, dest.session_id)
        self._verify(dest)

    def _verify(self, dest: Session) -> None:
        assert dest.path is not None
        reopened = Session.open(dest.path, readonly=True)
        verify_persisted_memory(dest.branch(), dest.path)
        verify_persisted_memory(reopened.branch(), dest.path)
        inherited_records(reopened, self.check_cancel, require_latest_offer=True)

    async def _switch(self, session: Session, reason: str) -> bool:
        """Switch the host to ``session``; False when the host's switch was cancelled."""
        self.switched = True
        hook = self.options.switch
        if hook is None:
            self.host.session_start(reason, session)
            return True
        return bool(await _await(hook(session, reason)))

    async def send_continuation(self) -> ht.Event:
        return ht.ContinuedEvent(ht.ContinuedFacts(await self.guard(self._send)))

    async def _send(self) -> None:
        dest = self.destination
        assert dest is not None
        if self.options.send is not None:
            await _await(self.options.send(dest, CONTINUATION))
        else:
            dest.append_message(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": CONTINUATION}],
                    "timestamp": self.owner.clock(),
                }
            )

    # --- endings -----------------------------------------------------------------------------

    def none(self) -> None:
        """No work (a report that changed nothing, or the end of a handoff)."""

    def busy(self) -> None:
        self.result.refused = True
        self.result.outcome = outcomes.FAILED
        self.result.code = outcomes.BUSY_CODE
        self.result.message = outcomes.BUSY_MESSAGE
        self.host.notify("warning", self.result.message)

    def fail(self) -> None:
        """The ending's work is only the report (``_end``)."""

    def fail_continuation(self) -> None:
        """The host stays in the verified destination; the report says so."""

    def abandon_destination(self) -> None:
        self._remove_created()

    async def return_to_source(self) -> None:
        self._remove_created()
        await self._return()

    def fail_attempt(self) -> None:
        self._end()
        self._record_on(self.source, self.result.code)

    def abandon_attempt(self) -> None:
        self.abandon_destination()
        self.fail_attempt()

    async def return_from_attempt(self) -> None:
        await self.return_to_source()
        self.fail_attempt()

    def pause_destination(self) -> None:
        self._end()
        if self.destination is not None:
            self._record_on(self.destination, self.result.code)

    def record_automatic(self) -> None:
        self._record_on(self.host.session, self.owner.failure)

    def record_resume(self) -> None:
        self.owner.attempts.clear()
        self._record_on(self.host.session, None)

    def report_exhausted(self) -> None:
        policy = self.owner.policy
        self.host.notify(
            "warning",
            f"Automatic handoff reached its limit of {policy.max_attempts} attempts within "
            f"{policy.attempt_window_ms / 60_000:g} minutes; it starts again once attempts age "
            "out, or after /handoff auto resume.",
        )

    def _record_on(self, session: Session, failure: str | None) -> None:
        self.owner.failure = failure
        record = self.owner.record()
        try:
            append_record(session, record.to_json())
        except HandoffError as exc:
            self.host.notify(
                "error",
                f"The automatic-handoff state could not be saved ({exc.message}); reopen the "
                "saved session before relying on it.",
            )

    def _remove_created(self) -> None:
        if self.created is not None:
            # A setup that failed or was cancelled leaves no destination claiming completion.
            remove_destination(self.created)
            self.result.destination = None

    async def _return(self) -> None:
        """Back to the source; a cancelled or failed return is said, with the /resume hint."""
        try:
            self.result.returned = await self._switch(self.source, "resume")
        except Exception:  # noqa: BLE001 - the switch back must not hide the failure itself
            self.result.returned = False
        if not self.result.returned and self.host.session is not self.source:
            self.result.returned = False

    def _end(self) -> None:
        """Fill in the result from the end state (once) and tell the host."""
        if self.result.outcome:
            return
        state = self.owner.state
        stage = state.handoff.stage
        code = state.handoff.code if isinstance(state.handoff, ENDED) else None
        self.result.outcome = stage
        self.result.trigger = state.trigger
        self.result.code = outcomes.result_code(stage, code, self.error)
        if self.operation is not None:
            self.operation.finish(outcomes.operation_outcome(stage), self.result.code)
            self.result.log_path = self.operation.log_path
        source = str(self.source.path) if self.source.path else None
        level, text = outcomes.ending_message(
            outcomes.Ending(
                stage,
                self.result.code,
                self.error,
                str(self.result.destination) if self.result.destination else None,
                source,
                self.result.offer_id is not None,
                self.result.returned,
            )
        )
        self.result.message = text
        self.host.notify(level, text)
