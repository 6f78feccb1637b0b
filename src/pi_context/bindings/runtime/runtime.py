"""The host runtime: one object per session that an agent loop calls at its lifecycle points.

``Runtime`` is a façade. It owns no policy and little code of its own: each entry point gathers
the facts the spec's event needs and hands the work to a collaborator with one job:

* ``lifecycle`` (``Lifecycle``): session, model, enabled switch, generation, abort signal,
  the staleness check of a boundary build and the enabled precondition;
* ``window`` (``WindowView``): the active branch, its window and its usage;
* ``control`` (``Control``): the generated reducer of the selected spec; each step carries its
  row, effect, host action, cause and duplicate flag from the generated tables;
* ``boundaries`` (``Boundaries``): boots, the reset boundary, root boots and tail repair;
* ``effects`` (``Effects``): performs each step's host action (commit and continue, commit
  and stop, recover and retry, acknowledge) and announces what became durable;
* ``budget`` (``Budget``): thresholds, reminder and warning staging;
* ``commands`` (``Commands``), ``tools`` (``RuntimeTools``) and ``/handoff`` (``handoff``).

Lifecycle transitions (session start, tree navigation, shutdown) clear the reducer and bump a
generation counter; a reset built across such a transition, an abort, a session switch or
``/pi-context off`` is discarded as stale. The runtime never writes a reset on its own at a
turn: turn-end and settle results carry drafts the host appends (``Runtime.append`` validates,
appends and verifies them on disk).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pi_context.bindings.session import Session
from pi_context.bindings.session.context import current_system_message
from pi_context.bindings.session.dialect import WARNING, custom_type
from pi_context.bindings.session.windows import (
    MissingBootError,
    check_session_id,
    current_window_id,
    provider_projection,
)
from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolResult
from pi_context.statemachine.host_facts import (
    BeforeSettleHostFacts,
    ProviderContextHostFacts,
    TurnEndHostFacts,
)
from pi_context.statemachine.lazy_facts import Lazy

from . import tree as tree_nav
from .budget import Budget, Policy, Usage, resolve_policy
from .builder import Boundaries
from .commands import Commands, WaitForIdle
from .config import ModelInfo, ResetBuilder, RuntimeConfig
from .control import Control, Step
from .effects import Effects, Notices
from .lifecycle import Lifecycle
from .overflow import is_context_overflow
from .protocol import WARNING_TEXT
from .results import (
    BoundaryResult,
    CommandResult,
    CompactDecision,
    ContextResult,
    Notice,
    ResetRecord,
    StartResult,
)
from .settings import default_agent_dir, load_settings
from .tool_host import RuntimeTools
from .tree import TreeSummaryDecision
from .via import Via
from .window import WindowView

if TYPE_CHECKING:
    from pi_context.bindings.handoff.controller import HandoffOptions, HandoffResult, Handoffs
    from pi_context.bindings.handoff.panel import SessionPanel

__all__ = [
    "BoundaryResult",
    "ContextResult",
    "ModelInfo",
    "Notice",
    "ResetBuilder",
    "ResetRecord",
    "Runtime",
    "RuntimeConfig",
    "StartResult",
    "Step",
]

Entry = dict[str, Any]
Draft = dict[str, Any]
Message = dict[str, Any]
Outcome = Literal["completed", "aborted", "error"]
OUTCOMES: tuple[str, ...] = ("completed", "aborted", "error")
START_REASONS: tuple[str, ...] = ("startup", "reload", "new", "resume", "fork")
_STOP_OUTCOMES = {"aborted": "aborted", "error": "error"}
"""An assistant message's ``stopReason`` -> the outcome of the turn it ended."""


def turn_outcome(assistant: Mapping[str, Any]) -> str:
    """The outcome a Pi assistant message ends its turn with: ``aborted`` or ``error`` as its
    ``stopReason`` says, else ``completed``."""
    return _STOP_OUTCOMES.get(str(assistant.get("stopReason")), "completed")


class Runtime:
    """The pi-context runtime for one session."""

    def __init__(self, session: Session, config: RuntimeConfig | None = None) -> None:
        self.config = config or RuntimeConfig()
        self.control = Control(self.config.spec)
        self.lifecycle = Lifecycle(
            session, self.config.model, self.config.enabled, lambda: self.window.window_id
        )
        self.window = WindowView(
            self.lifecycle, self.config.usage, self.config.fork_safe_window_ids
        )
        self._notices = Notices(self.config.notify)
        self.budget = Budget(
            self._load_policy,
            self._notices.notify,
            live=self.config.policy is not None,
            dialect=self.config.dialect,
        )
        self.boundaries = Boundaries(
            self.lifecycle, self.window, self.config, lambda: self.cwd, self.notify, self
        )
        self.effects = Effects(
            self.lifecycle, self.window, self.budget, self.boundaries, self._notices
        )
        self.commands = Commands(
            self.lifecycle,
            self.control,
            self.window,
            self.budget,
            self.boundaries,
            self.effects,
            self._notices,
        )
        self.tools = RuntimeTools(
            self.lifecycle, self.control, self.window, self.budget, self.config, lambda: self.cwd
        )

    # --- identity and state ---------------------------------------------------------------------

    session = Via[Session]("lifecycle.session")
    session_id = Via[str]("lifecycle.session.session_id")
    model = Via[ModelInfo | None]("lifecycle.model")
    enabled = Via[bool]("lifecycle.enabled")
    generation = Via[int]("lifecycle.generation")

    @property
    def cwd(self) -> Path:
        if self.config.cwd is not None:
            return self.config.cwd
        session = self.lifecycle.session
        return Path(session.cwd) if session.cwd else Path.cwd()

    notices = Via[list[Notice]]("_notices.notices")
    resets = Via[list[ResetRecord]]("effects.resets")

    def branch(self) -> Sequence[Entry]:
        """The active branch (root to leaf)."""
        return self.window.branch()

    def messages(self) -> list[Message]:
        """The session's model projection of the active branch."""
        return self.window.messages()

    window_id = Via[str]("window.window_id")

    def usage(self) -> Usage | None:
        """Usage of the active window (None when it cannot be known)."""
        return self.window.usage()

    def notify(self, level: str, text: str) -> None:
        self._notices.notify(level, text)

    def drain_notices(self) -> list[Notice]:
        return self._notices.drain()

    def _load_policy(self) -> Policy:
        if self.config.policy is not None:
            return self.config.policy()
        trusted = self.config.project_trusted
        loaded = load_settings(
            self.config.agent_dir or default_agent_dir(),
            self.cwd,
            bool(trusted() if callable(trusted) else trusted),
        )
        model = self.lifecycle.model
        policy = resolve_policy(loaded.merged, model.key if model else None, self.config.dialect)
        return replace(policy, problems=loaded.problems + policy.problems)

    # --- boots and boundaries -------------------------------------------------------------------

    def notes_snapshot(self) -> Any:
        return self.boundaries.notes_snapshot()

    def boot_text(self, window_id: str, previous: str | None) -> str:
        """Acquire one notes snapshot and render the boot of ``window_id`` from it."""
        return self.boundaries.boot_text(window_id, previous)

    def reset_drafts(self) -> list[Draft]:
        """The default boundary: checkpoint, marker (fresh id), boot, continuation."""
        return self.boundaries.reset_drafts()

    def ensure_boot(self) -> StartResult:
        """Create the root boot once, or complete an interrupted reset tail; else nothing."""
        return self.boundaries.ensure_boot()

    # --- lifecycle entry points -----------------------------------------------------------------

    def _transition(self, *, active: bool = True) -> None:
        self.control.clear()
        self.lifecycle.transition(active=active)
        self.budget.transition()
        self.effects.forget()

    def session_start(self, reason: str = "startup", session: Session | None = None) -> StartResult:
        """startup/reload/new/resume/fork: clear, re-read settings, ensure the boot."""
        if reason not in START_REASONS:
            raise ValueError(f"unknown session start reason {reason!r}; expected {START_REASONS}")
        # A session whose id cannot name addressable windows is refused before anything is
        # written to it (WindowIdError); a refused switch keeps the current session.
        check_session_id((session or self.session).session_id)
        if session is not None:
            self.lifecycle.session = session
        self._transition()
        self.budget.policy()
        return self.ensure_boot()

    def tree(self, leaf_id: str | None = None) -> StartResult:
        """Tree navigation to ``leaf_id`` (None: the host already moved the leaf)."""
        if leaf_id is not None:
            self.session.move_leaf(leaf_id)
        self._transition()
        return self.ensure_boot()

    def before_tree(
        self,
        destination_id: str,
        source_id: str | None = None,
        wants_summary: bool = True,
    ) -> TreeSummaryDecision:
        """The host's ``session_before_tree`` hook: may Pi summarize the branch being left?

        ``source_id`` defaults to the current leaf. When either branch (root to leaf) holds a
        reset marker the summary is suppressed and the user is told why; otherwise Pi's own
        summary proceeds. Works while off as well: existing markers stay authoritative.
        """
        source = tree_nav.branch_of(self.session, source_id, "source")
        destination = tree_nav.branch_of(self.session, destination_id, "destination")
        decision = tree_nav.decide(source, destination, wants_summary)
        if decision.notice is not None:
            self.notify("info", decision.notice)
        return decision

    def navigate_tree(
        self, target_id: str, summarize: tree_nav.Summarizer | None = None
    ) -> tree_nav.Navigation:
        """A whole ``/tree`` navigation as Pi performs it, with pi-context's hooks.

        ``summarize`` is the host's native branch summarizer (None: no summary wanted). The
        leaf lands on the target, or on its parent for a user or custom message (whose text is
        returned for the editor); then ``tree`` clears the machine and ensures the boot.
        """
        source_id = self.session.leaf_id
        decision = self.before_tree(target_id, source_id, summarize is not None)
        leaf, editor_text = tree_nav.landing_leaf(self.session, target_id)
        summary = ""
        if summarize is not None and not decision.suppress:
            abandoned = tree_nav.abandoned_entries(self.session, source_id, target_id)
            summary = summarize(abandoned) if abandoned else ""
        summary_id = None
        if summary:
            summary_id = self.session.branch_with_summary(leaf, summary)
        elif leaf is None:
            self.session.reset_leaf()
        else:
            self.session.move_leaf(leaf)
        self.tree()
        return tree_nav.Navigation(decision, self.session.leaf_id, summary_id, editor_text)

    def shutdown(self) -> None:
        self._transition(active=False)

    def model_select(self, model: ModelInfo | None) -> None:
        """A new model: its context window and override apply from the next decision."""
        self.lifecycle.model = model
        self.budget.transition()

    def turn_start(self) -> None:
        """A turn starts: announce reminders and resets that are now durable in the window."""
        self.lifecycle.run_continues()
        self.effects.announce_committed(final=False)

    def context(
        self,
        messages: Sequence[Message] | None = None,
        queued: bool | Lazy = False,
    ) -> ContextResult:
        """The per-request hook (Pi's ``context_with_system``): the provider messages for the
        active window.

        ``messages`` defaults to the session's own projection of the active branch; ``queued``
        says whether steering or follow-up messages wait (it may be a callable). Where the
        spec decides at this hook (0.34's ``provider_context``), its step comes first: a
        request it cancels (the empty follow-up after a committed stop) aborts the run here
        and carries only the system message (``cancelled``).
        """
        branch = self.branch()
        source = list(messages) if messages is not None else self.messages()
        step = self._provider_context(queued)
        if step is not None and step.meaning.cancels:
            head = current_system_message(source)
            self.abort()
            return ContextResult(
                [head] if head is not None else [], abort=True, cancelled=True, step=step
            )
        try:
            provider = provider_projection(
                branch,
                source,
                self.session_id,
                fork_safe=self.window.fork_safe,
                cut_at_boot=self.config.cut_at_boot,
            )
        except MissingBootError:
            head = current_system_message(source)
            self.notify(
                "error",
                f"pi-context: window {self.window_id} has no boot message, so its history was "
                f"not sent; run {self.control.reset_command} to start a fresh window",
            )
            return ContextResult([head] if head is not None else [], abort=True, step=step)
        if self.lifecycle.refuse_while_off("the budget") is not None:
            return ContextResult(provider, step=step)
        window = current_window_id(branch, self.session_id, fork_safe=self.window.fork_safe)
        usage = self.window.usage_of(branch, source)
        decision = self.budget.on_context(branch, window, usage.remaining if usage else None)
        if decision.inject_warning:
            provider.append(
                {
                    "role": "custom",
                    "customType": custom_type(WARNING, self.config.dialect),
                    "content": WARNING_TEXT,
                    "display": False,
                    "timestamp": self.session.now_ms(),
                }
            )
            if self.control.has_close_out:
                # The budget's close-out: the reducer decides whether it is new.
                self.control.close_out(window, "automatic")
        return ContextResult(provider, staged=decision.staged, step=step)

    def _provider_context(self, queued: bool | Lazy) -> Step | None:
        """The spec's provider-context step, when the running spec decides there."""
        if not self.control.accepts("provider_context"):
            return None
        facts = ProviderContextHostFacts(
            window_id=self.window_id,
            queued=queued,
            committed=self.window.boundary_committed,
            user_since_boundary=self.window.user_since_boundary,
        )
        return self.control.provider_context(facts)

    def _hard_reserve_due(self) -> bool:
        """The ``hardReserveDue`` fact exactly as the spec's ``why`` defines it: automatic
        resets allowed and the active window's remaining tokens at or below the hard reserve
        (false while usage is unknown)."""
        return self.budget.hard_reserve_due(self.window.remaining())

    async def turn_end(
        self,
        outcome: str = "completed",
        assistant: Mapping[str, Any] | None = None,
        incoming: Sequence[Draft] = (),
        queued: bool | Lazy = False,
    ) -> BoundaryResult:
        """A turn finished. Returns the drafts to append (incoming first) and whether to go on.

        ``assistant`` is the turn's final assistant message (used to detect a context overflow);
        ``queued`` says whether steering or follow-up messages wait (it may be a callable).
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown turn outcome {outcome!r}; expected one of {OUTCOMES}")
        token = self.lifecycle.token()
        window = self.window_id
        aborted = outcome == "aborted" or self.lifecycle.aborted
        overflow = False
        if not aborted and assistant is not None:
            context_window = self.window.context_window(self.window.host_usage())
            overflow = is_context_overflow(assistant, context_window)
        facts = TurnEndHostFacts(
            window_id=window,
            aborted=aborted,
            overflow=overflow,
            failed=outcome == "error" or overflow,
            enabled=self.enabled,
            queued=queued,
            automatic_reset_enabled=self.budget.automatic,
            hard_reserve_due=self._hard_reserve_due,
        )
        if aborted:
            self.budget.discard()
            budget_drafts: list[Draft] = []
        else:
            budget_drafts = self.budget.consume(window)
        step = self.control.turn_end(facts)
        return await self.effects.perform(step, incoming, budget_drafts, token, window)

    def run_outcome(self) -> str:
        """How the run ended, as a host's settle event reports it: ``aborted`` after an abort
        signal, else the ``stopReason`` of the last assistant message on the active branch
        (``aborted`` or ``error``), else ``completed``."""
        if self.lifecycle.aborted:
            return "aborted"
        for entry in reversed(self.branch()):
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                return turn_outcome(message)
        return "completed"

    async def before_settle(
        self, queued: bool | Lazy = False, outcome: str | None = None
    ) -> BoundaryResult:
        """The run is about to settle: the close-out fallback or the one overflow recovery.

        ``outcome`` is the run's outcome as the host reports it (``completed``, ``aborted``,
        ``error``); by default it is read from the session (``run_outcome``).
        """
        if outcome is not None and outcome not in OUTCOMES:
            raise ValueError(f"unknown run outcome {outcome!r}; expected one of {OUTCOMES}")
        token = self.lifecycle.token()
        window = self.window_id
        ended = outcome if outcome is not None else self.run_outcome()
        facts = BeforeSettleHostFacts(
            window_id=window,
            aborted=ended == "aborted",
            failed=ended == "error",
            enabled=lambda: self.enabled,
            queued=queued,
            automatic_reset_enabled=self.budget.automatic,
        )
        step = self.control.before_settle(facts)
        return await self.effects.perform(step, [], [], token, window)

    def settled(self) -> None:
        """The run settled: end the failure chain, drop staging, announce what is durable."""
        self.control.settled()
        self.lifecycle.run_continues()
        self.effects.announce_committed(final=True)
        self.budget.discard()

    def agent_end(self) -> None:
        """Nothing to do: resets commit at turn end or before settle, never here."""

    def abort(self) -> None:
        """The host aborted the run: every pending phase and staged draft is dropped, and a
        boundary being built now is stale."""
        self.control.abort()
        self.lifecycle.abort()
        self.budget.discard()

    def append(self, drafts: Sequence[Draft]) -> list[str]:
        """Append a result's drafts in order.

        A batch carrying a reset boundary is validated as a whole before the first write, synced
        and verified on disk. A batch without one (incoming and budget drafts) holds independent
        entries: each is validated as it is appended, without copying the branch. A boundary
        this runtime returned before a lifecycle change (an abort, a switch, ``/pi-context
        off``...) is stale and is not written; the host's own drafts of that result still are,
        into the session they were made for. The ids of the entries written.
        """
        return self.effects.append(drafts)

    # --- commands -------------------------------------------------------------------------------

    async def wipe_memory_command(
        self, wait_for_idle: WaitForIdle | None = None, prompt: str | None = None
    ) -> CommandResult:
        """The reset command (``/wipe-memory``; ``/clear-memory`` from a508f68 on): a manual
        close-out of the current window (see ``commands``); from 6bcd8b5 on it may carry a
        follow-up prompt (the command's argument), which the run goes on with after the reset
        (a generation without one refuses it)."""
        return await self.commands.wipe_memory(wait_for_idle, prompt)

    async def clear_memory_command(
        self, wait_for_idle: WaitForIdle | None = None, prompt: str | None = None
    ) -> CommandResult:
        """``/clear-memory``, the reset command's name from a508f68 on (the same command)."""
        return await self.commands.wipe_memory(wait_for_idle, prompt)

    def pi_context_command(self, argument: str = "") -> CommandResult:
        """``/pi-context on|off|status``."""
        return self.commands.pi_context(argument)

    def notesoup_command(self, argument: str = "") -> CommandResult:
        """``/notesoup on|off|status``: the same toggle under the extension's name from 0.38.0
        (``/pi-context`` before); both stay available whatever the dialect."""
        return self.commands.pi_context(argument)

    # --- handoff (each method delegates to the handoff collaborator; see handoff.py) ---------

    @cached_property
    def handoffs(self) -> Handoffs:
        from pi_context.bindings.handoff.controller import Handoffs

        return Handoffs(self)

    async def handoff_command(self, options: HandoffOptions) -> HandoffResult:
        """``/handoff``: continue in a fresh session through a verified relay (see ``handoff``,
        a collaborator that drives this runtime through ``ports.HandoffHost``)."""
        return await self.handoffs.handoff(options)

    async def auto_handoff(self) -> HandoffResult | None:
        """Call when idle: hands off by itself when the automatic policy says so."""
        return await self.handoffs.check_pressure()

    async def auto_handoff_command(self, argument: str = "") -> str:
        """``/handoff auto on|off|pause|resume|status``."""
        return await self.handoffs.command(argument)

    def model_call(self, **call: Any) -> None:
        """Host hook: log one of the host's model calls (see ``Handoffs.model_call``)."""
        self.handoffs.model_call(**call)

    def session_panel(self) -> dict[str, Any]:
        """The session panel's report (what ``pi-context session panel --json`` prints)."""
        return self.handoffs.panel()

    def open_panel(self, on_update: Callable[[list[str]], None] | None = None) -> SessionPanel:
        return self.handoffs.open_panel(on_update)

    def export_session(self, out: Path) -> Path:
        """``session export``: the panel as Markdown at ``out``."""
        return self.handoffs.export(out)

    def close(self) -> None:
        """``session close``: close the open panels."""
        self.handoffs.close()

    def before_compact(self) -> CompactDecision:
        """``/compact`` (and native compaction): cancelled while enabled or on a marked branch."""
        return self.commands.compact()

    # --- tools ----------------------------------------------------------------------------------

    def tool_context(self) -> ToolContext:
        """The context a tool call of this session runs in (it carries this runtime)."""
        return self.tools.context()

    def served_tools(self) -> dict[str, Tool]:
        """The tools this runtime offers the model, by name (the reset tool under the running
        generation's name only); ``call_tool`` also accepts the reset tool's other name."""
        return self.tools.served()

    def tool_schemas(self) -> list[dict[str, JSONValue]]:
        """Function-calling declarations of every tool the runtime serves."""
        return self.tools.schemas()

    def wipe_memory(self) -> ToolResult:
        """The model asks for a fresh window: recorded once per window, committed at turn end."""
        return self.tools.wipe_memory()

    def get_context_remaining(self) -> ToolResult:
        """Tokens left before the final warning (0 at or past it; null when unknown)."""
        return self.tools.get_context_remaining()

    def call_tool(self, name: str, args: Mapping[str, JSONValue] | None = None) -> ToolResult:
        """Run any pi-context tool for this session; bad arguments become error results."""
        return self.tools.call(name, args)
