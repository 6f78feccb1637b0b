"""``/handoff`` and automatic handoff: the runtime's handoff collaborator, stepped through
``handoff@0.6-auto``.

The generated reducer decides every transition; ``Handoffs`` holds its state (one per
runtime, never a module global), feeds it the host's facts — a manual start, the budget
owner's context pressure, the replay of the open session's automatic-handoff record, the
user's automatic-handoff commands — and hands each effect to a ``HandoffRun``, which performs
it (see ``handoff_run``). Stages: preparing (re-read the saved source and check its branch),
generating (the host's notes generator), quality (counts, workspace snapshot, relay budget),
saving (the offer appended to the source and verified on disk), switching (the destination
written exclusively and fsynced), validating (opened, re-read and re-verified end to end),
continuing (the continuation prompt). A failure or cancellation before the switch leaves the
source holding at most a verified offer; a failed or cancelled setup returns to the source.

Every handoff is an operation in the session's operation log, and every log event is also
shown to the user as progress text through the runtime's notify callback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff.api import (
    CONTINUATION,
    GIT_TIMEOUT_S,
    INSTRUCTIONS,
    HandoffOptions,
    HandoffResult,
    NotesGenerator,
    NotesRequest,
    archived_records,
    git_status,
    touched_files,
)
from pi_context.bindings.handoff.automatic import AutoHandoffPolicy, AutoRecord
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.panel import (
    ContextUsage,
    SessionPanel,
    session_panel,
    write_export,
)
from pi_context.bindings.handoff.relay import relay_body
from pi_context.bindings.handoff.run import STAGES, HandoffRun, is_running
from pi_context.bindings.operations import (
    CallUsage,
    OperationLogs,
    log_model_call,
    progress_text,
    tool_signature,
)
from pi_context.bindings.operations.progress import FOREGROUND
from pi_context.bindings.runtime.ports import HandoffHost
from pi_context.bindings.session import Session
from pi_context.statemachine.typed import handoff_0_6_auto as ht
from pi_context.statemachine.typed import typed

__all__ = [
    "CONTINUATION",
    "GIT_TIMEOUT_S",
    "INSTRUCTIONS",
    "STAGES",
    "AutoHandoffPolicy",
    "HandoffOptions",
    "HandoffResult",
    "Handoffs",
    "NotesGenerator",
    "NotesRequest",
    "archived_records",
    "git_status",
    "relay_body",
    "run_handoff",
    "touched_files",
]

COMMAND = "/handoff"
SPEC_ID = ht.SPEC_ID
HANDOFF = typed(ht.SPEC_ID)
"""The handoff lifecycle's handle (the one discovery rule), typed with its classes."""


@dataclass(frozen=True, slots=True)
class _Pressure:
    """``pressure``'s facts; the lazy ones are computed only when the table reads them."""

    owner: Handoffs
    due: bool
    available: bool
    now: int

    @property
    def cooled(self) -> bool:
        return auto.cooled(self.owner.attempts, self.owner.policy, self.now)

    @property
    def attempts_left(self) -> bool:
        return auto.attempts_left(self.owner.attempts, self.owner.policy, self.now)


class Handoffs:
    """The handoff lifecycle of one runtime: its spec state and what the host configured."""

    def __init__(self, host: HandoffHost) -> None:
        self.host = host
        self.state: ht.State = ht.initial_state()
        self.policy = AutoHandoffPolicy()
        self.automatic: HandoffOptions | None = None
        """The options automatic handoffs run with (None: the host runs none)."""
        self.clock: Callable[[], int] = lambda: self.host.session.now_ms()
        """Milliseconds since the epoch: the open session's clock, the one its entries are
        stamped with (attempts, stamps, cooldowns, the packet, the log; tests move it)."""
        self.logs = OperationLogs(on_event=self._progress, clock=lambda: self.clock())
        self.attempts: list[int] = []
        self.failure: str | None = None
        self.replayed = auto.Replayed(None)
        self.last: HandoffResult | None = None
        self.row: str | None = None
        """The row the last step fired (a replay's, a command's or a stage's)."""
        self._seen: Session | None = None
        self._running = 0
        self._panels: list[SessionPanel] = []

    # --- configuration ------------------------------------------------------------------------

    def configure(
        self,
        automatic: HandoffOptions | None = None,
        policy: AutoHandoffPolicy | None = None,
        log_dir: Path | None = None,
    ) -> None:
        """Run automatic handoffs with ``automatic`` under ``policy``; logs go to ``log_dir``."""
        self.automatic = automatic
        if policy is not None and policy != self.policy:
            self.policy = policy
            self._seen = None  # replay again: the policy's default and figures changed
        if log_dir is not None:
            self.logs.directory = log_dir

    # --- the reducer --------------------------------------------------------------------------

    def step(self, event: ht.Event, rows: list[str] | None = None) -> str:
        self.state, effect, row = HANDOFF.step(self.state, event)
        self.row = row
        if rows is not None:
            rows.append(row)
        return effect

    def record(self) -> AutoRecord:
        """The automatic state as a record (what a record-writing effect writes)."""
        return auto.record_for(self.state.automatic, self.attempts, self.failure)

    def take_attempt(self) -> None:
        self.attempts.append(self.clock())

    def stamp(self, now: int) -> None:
        """The verified destination's stamp: the pending attempt becomes ``now``."""
        if self.attempts:
            self.attempts[-1] = now
        self.failure = None

    def sync(self) -> None:
        """Replay the open session's automatic-handoff record when the session changed."""
        session = self.host.session
        if session is self._seen:
            return
        self._seen = session
        replayed = auto.replay(session.branch())
        if not self._running:
            self.replayed = replayed
            record = replayed.record
            self.attempts = list(record.attempts) if record else []
            self.failure = record.failure if record else None
        facts = auto.restore_facts(replayed.record, self.policy, self.clock())
        self.step(
            ht.RestoreEvent(
                ht.RestoreFacts(facts.enabled, facts.paused, facts.cooling, facts.attempts_left)
            )
        )

    def _available(self) -> bool:
        session = self.host.session
        return (
            session.path is not None
            and session.persisted
            and session.leaf_id is not None
            and self.host.model is not None
        )

    def _progress(self, event: dict[str, Any]) -> None:
        text = progress_text(event)
        if text is not None:
            self.host.notify("info", text)
        for panel in list(self._panels):
            try:
                panel.refresh()
            except Exception:  # noqa: BLE001 - a panel that cannot refresh is closed, not fatal
                panel.close()
                self._panels.remove(panel)

    # --- entry points -------------------------------------------------------------------------

    async def handoff(self, options: HandoffOptions) -> HandoffResult:
        """``/handoff``: a manual handoff of the open session (never raises for a named
        failure; a second one while one runs is refused)."""
        self.sync()
        run = HandoffRun(self, options)
        available = self._available()
        idle = not is_running(self.state)
        effect = self.step(ht.StartEvent(ht.StartFacts(available)), run.result.rows)
        if idle:
            run.begin(available, {"kind": self.state.trigger})
        return await self._drive(run, effect)

    async def check_pressure(self) -> HandoffResult | None:
        """The host is idle: start an automatic handoff if the policy says so (None: none
        started). Pressure is the budget owner's usage of the active window."""
        self.sync()
        if self.automatic is None:
            return None
        usage = self.host.usage()
        tokens = getattr(usage, "tokens", None)
        window = getattr(usage, "context_window", None)
        percent = 100 * tokens / window if tokens is not None and window else None
        due = percent is not None and percent >= self.policy.pressure_percent
        run = HandoffRun(self, self.automatic)
        idle = not is_running(self.state)
        effect = self.step(
            ht.PressureEvent(_Pressure(self, due, self._available(), self.clock())), run.result.rows
        )
        if not (idle and is_running(self.state)):
            await run.perform(effect)
            return None
        trigger = {
            "kind": self.state.trigger,
            "percent": round(percent or 0.0, 1),
            "threshold": self.policy.pressure_percent,
        }
        run.begin(True, trigger)
        return await self._drive(run, effect)

    async def _drive(self, run: HandoffRun, effect: str) -> HandoffResult:
        self._running += 1
        try:
            result = await run.drive(effect)
        finally:
            self._running -= 1
            self._seen = self.host.session
        if not result.refused:
            self.last = result
        return result

    async def command(self, argument: str) -> str:
        """``/handoff auto on|off|pause|resume|status``: the text to show the user."""
        self.sync()
        word = argument.strip().lower()
        if word in ("", "status"):
            return self.status_text()
        name = auto.COMMANDS.get(word)
        if name is None:
            return f"Usage: {COMMAND} auto on|off|pause|resume|status"
        event: ht.Event = getattr(ht, name)()
        run = HandoffRun(self, None)
        before = self.state.automatic
        effect = self.step(event, run.result.rows)
        await run.perform(effect)
        if run.result.refused:
            return run.result.message
        if self.state.automatic == before:
            return f"Automatic handoff is already {self.status_text(short=True)}."
        return f"Automatic handoff is now {self.status_text(short=True)}."

    def status_text(self, short: bool = False) -> str:
        status = auto.describe(self.state.automatic, self.record(), self.policy, self.clock())
        return status if short else f"Automatic handoff: {status}."

    def model_call(
        self,
        *,
        started_ms: int,
        ended_ms: int,
        outcome: str = "ok",
        code: str | None = None,
        usage: CallUsage | None = None,
        tools: Sequence[tuple[str, Any]] = (),
        kind: str = FOREGROUND,
    ) -> None:
        """The host's hook for its own model calls: logged in the open session's log (tokens,
        cost, duration, outcome; ``tools`` as (name, arguments) pairs)."""
        session = self.host.session
        log_model_call(
            self.logs,
            session.path if session.persisted else None,
            session.session_id,
            kind=kind,
            started_ms=started_ms,
            ended_ms=ended_ms,
            outcome=outcome,
            code=code,
            usage=usage,
            tools=[tool_signature(name, arguments) for name, arguments in tools],
        )

    # --- the panel ---------------------------------------------------------------------------

    def panel(self) -> dict[str, Any]:
        """The session panel of the open session (see ``bindings/handoff/panel``), with what
        only the running host knows: the provider's usage, the policy, the live state."""
        self.sync()
        session = self.host.session
        if session.path is None or not session.persisted:
            raise HandoffError("handoff_unavailable", "the session is not saved yet")
        usage = self.host.usage()
        model = self.host.model
        window = getattr(usage, "context_window", None) or getattr(model, "context_window", None)
        context = ContextUsage(getattr(usage, "tokens", None), window)
        return session_panel(
            session.path,
            usage=context,
            policy=self.policy,
            automatic_status=self.state.automatic,
            automatic_record=self.record(),
            log_dir=self.logs.directory,
            log_failure=self.logs.failure,
        )

    def open_panel(self, on_update: Callable[[list[str]], None] | None = None) -> SessionPanel:
        """A live panel, refreshed on every operation event until it is closed."""
        panel = SessionPanel(self.panel, on_update)
        self._panels.append(panel)
        return panel

    def export(self, out: Path) -> Path:
        """Write the panel of the open session to ``out`` as Markdown."""
        return write_export(self.panel(), out)

    def close(self) -> None:
        """Close every open panel (the seed's ``session close``)."""
        for panel in self._panels:
            panel.close()
        self._panels.clear()


async def run_handoff(host: Any, options: HandoffOptions) -> HandoffResult:
    """Run one manual handoff of ``host``'s current session (a ``Runtime``)."""
    handoffs: Handoffs = host.handoffs
    return await handoffs.handoff(options)
