"""The host runtime: one object per session that an agent loop calls at its lifecycle points.

The runtime owns no policy of its own. At each entry point it gathers facts (lazily, in the
spec's order), steps the generated reset-control reducer and performs the effect it names:

* host action ``commit-continue`` -> the turn-end composer appends checkpoint, marker, boot,
  continuation after the turn's incoming and budget drafts, and asks the host to continue;
* ``commit-stop`` -> the same boundary, but the run stops there (no continuation turn);
* ``recover`` -> the same boundary, plus a retry of the failed request;
* ``acknowledge`` -> a recorded request (for ``/wipe-memory`` the hidden close-out warning is
  recorded and the host is asked to start an ordinary model turn so the model can checkpoint).

The host action of each effect is declared in the spec and read from the generated package;
the runtime never looks at row ids or spec names, so any committed spec can be selected.

Lifecycle transitions (session start, tree navigation, shutdown) clear the reducer and bump a
generation counter; a reset built across such a transition is discarded as stale. The runtime
never writes a reset on its own: turn-end and settle results carry drafts the host appends
(``Runtime.append`` validates, appends and verifies them on disk).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pi_context.bindings.notes.homes import NotesHomes, notes_root
from pi_context.bindings.notes.snapshot import NotesSnapshot, load_snapshot
from pi_context.bindings.notes.store import NoteStore
from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.boundary import (
    artifact_kind,
    commit_boundary,
    plan_tail_repair,
    reset_drafts,
)
from pi_context.bindings.session.context import current_system_message, projection_entries
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.windows import (
    MissingBootError,
    check_session_id,
    current_reset,
    current_window_id,
    estimate_tokens,
    is_window_boot_entry,
    mint_window_id,
    needs_root_boot,
    previous_window_id,
    provider_projection,
    root_window_id,
    window_usage,
)
from pi_context.bindings.tools import JSONValue, ToolContext, ToolError, ToolResult, all_tools

from . import commands
from . import tools as runtime_tools
from . import tree as tree_nav
from .boot import BootInput, render_boot
from .budget import Budget, Policy, Usage, countdown, resolve_policy
from .commands import CommandResult, CompactDecision, WaitForIdle
from .composer import Composed, ResetBuild, compose

if TYPE_CHECKING:
    from .handoff import HandoffOptions, HandoffResult
from .control import COMMITS, DEFAULT_SPEC, Control, Step, is_duplicate, reset_cause
from .overflow import is_context_overflow
from .protocol import (
    ALREADY_PENDING_STATUS,
    BOOT_TYPE,
    CONTINUATION_TEXT,
    REQUESTED_STATUS,
    WARNING_TEXT,
    WARNING_TYPE,
    cleared_notice,
)
from .settings import default_agent_dir, load_settings
from .tree import TreeSummaryDecision

Entry = dict[str, Any]
Draft = dict[str, Any]
Message = dict[str, Any]
Outcome = Literal["completed", "aborted", "error"]
OUTCOMES: tuple[str, ...] = ("completed", "aborted", "error")
START_REASONS: tuple[str, ...] = ("startup", "reload", "new", "resume", "fork")
ResetBuilder = Callable[["Runtime"], "Sequence[Draft] | Awaitable[Sequence[Draft]]"]


@dataclass(frozen=True)
class ModelInfo:
    """The model in use: its id, provider and context window (tokens), when known."""

    id: str
    provider: str | None = None
    context_window: int | None = None

    @property
    def key(self) -> str | None:
        """``provider/id``, the key of ``compaction.modelOverrides``."""
        return f"{self.provider}/{self.id}" if self.provider else None


Level = Literal["info", "warning", "error"]
LEVELS: tuple[str, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Notice:
    """A message for the user (not the model), at info, warning or error level."""

    level: Level
    text: str


@dataclass(frozen=True)
class RuntimeConfig:
    """How the host embeds the runtime. Every field has a working default."""

    notes_home: Path | None = None
    """Notes root (else ``$PI_NOTES_HOME``, else ``~/.pi/agent/notes``)."""
    cwd: Path | None = None
    """Project root for the project notes home and ``.pi/settings.json`` (default: session cwd)."""
    agent_dir: Path | None = None
    """Where the global ``settings.json`` lives (else ``$PI_CODING_AGENT_DIR`` or ~/.pi/agent)."""
    agent_name: str = "pi"
    model: ModelInfo | None = None
    spec: str = DEFAULT_SPEC
    project_trusted: bool | Callable[[], bool] = True
    """Whether the project's settings apply; a callable is asked whenever settings are read."""
    usage: Callable[[], Usage | None] | None = None
    """Host-reported usage of the root window (Pi's ``getContextUsage``); else estimated."""
    policy: Callable[[], Policy] | None = None
    """An injected policy, resolved live on every decision instead of reading settings files."""
    enabled: bool = True
    rng: random.Random | None = None
    """Source of minted window ids (seed it for reproducible runs)."""
    build_reset: ResetBuilder | None = None
    """Replaces the boundary builder (it may be async); default: ``Runtime.reset_drafts``."""
    notify: Callable[[Notice], None] | None = None
    fork_safe_window_ids: bool = False
    """Name a new session's windows after its whole id (``pcw:<session id>:root``) instead of
    the extension's first 8 characters (``pcw:<8 chars>:root``). A fork made within a minute of
    its source shares those 8 characters, so under the extension's rule it takes the source's
    copied root boot (with the source session's notes index) for its own; this option gives it
    its own. Trade-off: the TypeScript extension does not know such a root id and writes a
    second root boot when it opens the session. Off by default. Either way a session keeps
    the naming its boots and markers were written with."""


@dataclass(frozen=True)
class StartResult:
    """What ``session_start``/``tree`` did about the boot of the active window."""

    action: Literal["root-boot", "repaired", "present", "refused", "disabled"]
    entry_ids: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class ContextResult:
    """The provider request for the active window, from ``Runtime.context``."""

    messages: list[Message]
    """What to send to the provider."""
    abort: bool = False
    """The request must not be sent (the active window has no boot)."""
    staged: str | None = None
    """``reminder`` or ``warning`` when this request staged one."""


@dataclass(frozen=True)
class BoundaryResult:
    """A turn end or settle: drafts for the host to append, and what to do next."""

    drafts: list[Draft]
    continue_: bool
    """Start another turn (a reset was committed: its continuation is the prompt)."""
    step: Step
    cause: str = ""
    """Why a reset committed (``wipe_memory``, ``hard reserve``, ``close-out at stop``,
    ``manual close-out``, ``overflow recovery``), else empty."""
    window_id: str | None = None
    """The new window when ``drafts`` carry a reset boundary."""
    retry: bool = False
    """Overflow recovery: re-run the failed request in the new window."""
    failure: str | None = None
    stale: bool = False

    @property
    def effect(self) -> str:
        return self.step.effect


@dataclass(frozen=True)
class ResetRecord:
    window_id: str
    previous_window_id: str
    cause: str
    stopped: bool = False
    """The boundary's host action was commit-stop: the run ended after it."""


@dataclass(frozen=True)
class _Token:
    """What must not change while a reset is being built."""

    generation: int
    session_id: str
    window_id: str
    enabled: bool


class Runtime:
    """The pi-context runtime for one session."""

    def __init__(self, session: Session, config: RuntimeConfig | None = None) -> None:
        self.config = config or RuntimeConfig()
        self.session = session
        self.enabled = self.config.enabled
        self.model = self.config.model
        self.control = Control(self.config.spec)
        self.generation = 0
        self.notices: list[Notice] = []
        self.resets: list[ResetRecord] = []
        self.budget = Budget(self._load_policy, self.notify, live=self.config.policy is not None)
        self._rng: random.Random = self.config.rng or random.SystemRandom()
        self._last_outcome: str | None = None
        self._announce: str | None = None
        self._notes_notified: set[str] = set()
        self._branch_key: tuple[int, str | None] | None = None
        self._branch: list[Entry] = []
        self._messages_key: tuple[int, str | None] | None = None
        self._messages: list[Message] = []
        runtime_tools.register_live(self)

    # --- identity -------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def cwd(self) -> Path:
        if self.config.cwd is not None:
            return self.config.cwd
        return Path(self.session.cwd) if self.session.cwd else Path.cwd()

    def branch(self) -> list[Entry]:
        """The active branch (cached per leaf: a leaf's root path never changes)."""
        key = (id(self.session), self.session.leaf_id)
        if self._branch_key != key:
            self._branch = self.session.branch()
            self._branch_key = key
        return list(self._branch)

    def messages(self) -> list[Message]:
        """The session's model projection of the active branch (cached per leaf, like ``branch``).

        Only the messages are needed here, so Pi's thinking-level/model scan is skipped.
        """
        key = (id(self.session), self.session.leaf_id)
        if self._messages_key != key:
            self._messages = [m for _, ms in projection_entries(self.branch()) for m in ms]
            self._messages_key = key
        return list(self._messages)

    @property
    def window_id(self) -> str:
        return current_window_id(
            self.branch(), self.session_id, fork_safe=self.config.fork_safe_window_ids
        )

    def _token(self) -> _Token:
        return _Token(self.generation, self.session_id, self.window_id, self.enabled)

    def notify(self, level: str, text: str) -> None:
        notice = Notice(cast(Level, level) if level in LEVELS else "info", text)
        self.notices.append(notice)
        if self.config.notify is not None:
            self.config.notify(notice)

    def drain_notices(self) -> list[Notice]:
        out, self.notices = self.notices, []
        return out

    # --- settings and usage ---------------------------------------------------------------------

    def _trusted(self) -> bool:
        trusted = self.config.project_trusted
        return bool(trusted() if callable(trusted) else trusted)

    def _load_policy(self) -> Policy:
        if self.config.policy is not None:
            return self.config.policy()
        agent_dir = self.config.agent_dir or default_agent_dir()
        loaded = load_settings(agent_dir, self.cwd, self._trusted())
        policy = resolve_policy(loaded.merged, self.model.key if self.model else None)
        return replace(policy, problems=loaded.problems + policy.problems)

    def _context_window(self, host: Usage | None) -> int | None:
        if self.model is not None and self.model.context_window:
            return self.model.context_window
        return host.context_window if host is not None else None

    def _usage(self, branch: Sequence[Entry], messages: Sequence[Message]) -> Usage | None:
        host = self.config.usage() if self.config.usage is not None else None
        if current_reset(branch) is None:
            # The root window: the host's own figure when it reports one.
            if self.config.usage is not None:
                return host
            window = self._context_window(None)
            return Usage(estimate_tokens(messages), window) if window else None
        # After a reset only this window counts: provider usage recorded before the marker
        # is excluded by estimating over the projected window alone.
        window = self._context_window(host)
        if not window:
            return None
        return Usage(window_usage(branch, messages, self.session_id), window)

    def usage(self) -> Usage | None:
        """Usage of the active window (None when it cannot be known)."""
        branch = self.branch()
        return self._usage(branch, self.messages())

    # --- boot and reset construction ------------------------------------------------------------

    def notes_homes(self) -> NotesHomes:
        """The five notes homes of this runtime's identity (session, cwd, agent, model)."""
        return NotesHomes(
            root=notes_root(self.config.notes_home),
            session_id=self.session_id,
            project_root=self.cwd,
            agent_name=self.config.agent_name,
            model_id=self.model.id if self.model else None,
        )

    def notes_snapshot(self) -> NotesSnapshot:
        return load_snapshot(NoteStore(self.notes_homes()))

    def boot_text(self, window_id: str, previous: str | None) -> str:
        """Acquire one notes snapshot and render the boot of ``window_id`` from it."""
        opened = self._now_ms()
        snapshot = self.notes_snapshot()
        notice = snapshot.human_notice()
        if notice and window_id not in self._notes_notified:
            self._notes_notified.add(window_id)
            self.notify("warning", notice)
        homes = self.notes_homes()
        return render_boot(
            BootInput(
                agent_name=str(homes.slug("agent")),
                first_window_id=root_window_id(
                    self.session_id, self.branch(), fork_safe=self.config.fork_safe_window_ids
                ),
                current_window_id=window_id,
                previous_window_id=previous,
                notes=snapshot,
                model_name=str(homes.slug("model")),
                opened_ms=opened,
            )
        )

    def reset_drafts(self) -> list[Draft]:
        """The default boundary: checkpoint, marker (fresh id), boot, continuation."""
        branch = self.branch()
        new_id = mint_window_id(
            branch, self.session_id, self._rng, fork_safe=self.config.fork_safe_window_ids
        )
        previous = current_window_id(
            branch, self.session_id, fork_safe=self.config.fork_safe_window_ids
        )
        return reset_drafts(
            branch,
            self.session_id,
            self.boot_text(new_id, previous),
            CONTINUATION_TEXT,
            window_id=new_id,
        )

    def _builder(self) -> ResetBuild:
        custom = self.config.build_reset
        if custom is None:
            return self.reset_drafts
        return lambda: custom(self)

    def ensure_boot(self) -> StartResult:
        """Create the root boot once, or complete an interrupted reset tail; else nothing."""
        branch = self.branch()
        plan = plan_tail_repair(branch)
        if plan.status == "no-marker":
            if not self.enabled:
                return StartResult("disabled")
            messages = self.messages()
            if not needs_root_boot(
                branch, messages, self.session_id, fork_safe=self.config.fork_safe_window_ids
            ):
                return StartResult("present")
            root = root_window_id(
                self.session_id, branch, fork_safe=self.config.fork_safe_window_ids
            )
            entry_id = self.session.append_custom_message(
                BOOT_TYPE, self.boot_text(root, None), False, {"windowId": root}
            )
            return StartResult("root-boot", (entry_id,))
        if plan.status == "complete":
            return StartResult("present")
        if plan.status == "refused":
            self.notify(
                "warning",
                f"pi-context: window {plan.window_id} has an incomplete reset that cannot be "
                f"repaired ({plan.reason}); run /wipe-memory to start a fresh window",
            )
            return StartResult("refused", reason=plan.reason)
        assert plan.window_id is not None and plan.marker_id is not None
        previous = previous_window_id(
            branch, self.session_id, plan.marker_id, fork_safe=self.config.fork_safe_window_ids
        )
        drafts = plan.drafts(self.boot_text(plan.window_id, previous), CONTINUATION_TEXT)
        ids = self.session.append_drafts(drafts)
        return StartResult("repaired", tuple(ids), reason=", ".join(plan.missing))

    # --- lifecycle entry points -----------------------------------------------------------------

    def _transition(self) -> None:
        self.control.clear()
        self.generation += 1
        self.budget.transition()
        self._announce = None
        self._last_outcome = None

    def session_start(self, reason: str = "startup", session: Session | None = None) -> StartResult:
        """startup/reload/new/resume/fork: clear, re-read settings, ensure the boot."""
        if reason not in START_REASONS:
            raise ValueError(f"unknown session start reason {reason!r}; expected {START_REASONS}")
        # A session whose id cannot name addressable windows is refused before anything is
        # written to it (WindowIdError); a refused switch keeps the current session.
        check_session_id((session or self.session).session_id)
        if session is not None:
            runtime_tools.unregister_live(self)
            self.session = session
            self._branch_key = self._messages_key = None
            runtime_tools.register_live(self)
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
        self._transition()
        runtime_tools.unregister_live(self)

    def model_select(self, model: ModelInfo | None) -> None:
        """A new model: its context window and override apply from the next decision."""
        self.model = model
        self.budget.transition()

    def turn_start(self) -> None:
        """Announce reminders and resets that are now durable in the active window."""
        self._announce_committed(final=False)

    def context(self, messages: Sequence[Message] | None = None) -> ContextResult:
        """The per-request hook: the provider messages for the active window.

        ``messages`` defaults to the session's own projection of the active branch.
        """
        branch = self.branch()
        source = list(messages) if messages is not None else self.messages()
        try:
            provider = provider_projection(
                branch, source, self.session_id, fork_safe=self.config.fork_safe_window_ids
            )
        except MissingBootError:
            head = current_system_message(source)
            self.notify(
                "error",
                f"pi-context: window {self.window_id} has no boot message, so its history was "
                "not sent; run /wipe-memory to start a fresh window",
            )
            return ContextResult([head] if head is not None else [], abort=True)
        if not self.enabled:
            return ContextResult(provider)
        window = current_window_id(
            branch, self.session_id, fork_safe=self.config.fork_safe_window_ids
        )
        usage = self._usage(branch, source)
        decision = self.budget.on_context(branch, window, usage.remaining if usage else None)
        if decision.inject_warning:
            provider.append(
                {
                    "role": "custom",
                    "customType": WARNING_TYPE,
                    "content": WARNING_TEXT,
                    "display": False,
                    "timestamp": self._now_ms(),
                }
            )
            if self.control.has_close_out:
                # The budget's close-out: the reducer decides whether it is new.
                self.control.close_out(window, "automatic")
        return ContextResult(provider, staged=decision.staged)

    async def turn_end(
        self,
        outcome: str = "completed",
        assistant: Mapping[str, Any] | None = None,
        incoming: Sequence[Draft] = (),
        queued: bool | Callable[[], bool] = False,
    ) -> BoundaryResult:
        """A turn finished. Returns the drafts to append (incoming first) and whether to go on.

        ``assistant`` is the turn's final assistant message (used to detect a context overflow);
        ``queued`` says whether steering or follow-up messages wait (it may be a callable).
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown turn outcome {outcome!r}; expected one of {OUTCOMES}")
        token = self._token()
        branch = self.branch()
        window = current_window_id(
            branch, self.session_id, fork_safe=self.config.fork_safe_window_ids
        )
        aborted = outcome == "aborted"
        overflow = False
        if not aborted and assistant is not None:
            host = self.config.usage() if self.config.usage is not None else None
            overflow = is_context_overflow(assistant, self._context_window(host))
        failed = outcome == "error" or overflow
        self._last_outcome = "aborted" if aborted else ("error" if failed else "completed")

        def hard_reserve_due() -> bool:
            usage = self._usage(branch, self.messages())
            return self.budget.hard_reserve_due(usage.remaining if usage else None)

        facts = self.control.facts(
            "turn_end",
            window_id=window,
            aborted=aborted,
            overflow=overflow,
            failed=failed,
            enabled=self.enabled,
            queued=queued,
            automatic_reset_enabled=self.budget.automatic,
            hard_reserve_due=hard_reserve_due,
        )
        if aborted:
            self.budget.discard()
            budget_drafts: list[Draft] = []
        else:
            budget_drafts = self.budget.consume(window)
        step = self.control.turn_end(facts)
        reset = self._builder() if step.host in COMMITS else None
        composed = await compose(incoming, budget_drafts, reset, lambda: self._token() == token)
        return self._finish(step, composed, window)

    async def before_settle(self, queued: bool | Callable[[], bool] = False) -> BoundaryResult:
        """The run is about to settle: the close-out fallback or the one overflow recovery."""
        token = self._token()
        window = self.window_id
        facts = self.control.facts(
            "before_settle",
            window_id=window,
            aborted=self._last_outcome == "aborted",
            failed=self._last_outcome == "error",
            enabled=lambda: self.enabled,
            queued=queued,
            automatic_reset_enabled=self.budget.automatic,
        )
        step = self.control.before_settle(facts)
        if step.host in COMMITS:
            composed = await compose([], [], self._builder(), lambda: self._token() == token)
        else:
            composed = Composed([])
        return self._finish(step, composed, window)

    def settled(self) -> None:
        """The run settled: end the failure chain, drop staging, announce what is durable."""
        self.control.settled()
        self._announce_committed(final=True)
        self.budget.discard()
        self._last_outcome = None

    def agent_end(self) -> None:
        """Nothing to do: resets commit at turn end or before settle, never here."""

    def abort(self) -> None:
        """The host aborted the run: every pending phase and staged draft is dropped."""
        self.control.abort()
        self.budget.discard()
        self._last_outcome = "aborted"

    def append(self, drafts: Sequence[Draft]) -> list[str]:
        """Append a result's drafts in order.

        A batch carrying a reset boundary is validated as a whole before the first write, synced
        and verified on disk. A batch without one (incoming and budget drafts) holds independent
        entries: each is validated as it is appended, without copying the branch.
        """
        if not drafts:
            return []
        if any(artifact_kind(draft) for draft in drafts):
            return commit_boundary(self.session, drafts)
        return [self.session.append_draft(draft) for draft in drafts]

    # --- effects --------------------------------------------------------------------------------

    def _finish(self, step: Step, composed: Composed, previous: str) -> BoundaryResult:
        if composed.failure:
            self.notify("warning", composed.failure)
        cause = reset_cause(step) if composed.window_id else ""
        if composed.window_id:
            self._announce = composed.window_id
            self.resets.append(
                ResetRecord(composed.window_id, previous, cause, step.host == "commit-stop")
            )
        return BoundaryResult(
            drafts=composed.drafts,
            # a commit-and-stop boundary is written like any other, but the run ends there
            continue_=composed.continue_ and step.host != "commit-stop",
            step=step,
            cause=cause,
            window_id=composed.window_id,
            retry=step.host == "recover" and composed.continue_,
            failure=composed.failure,
            stale=composed.stale,
        )

    def _announce_committed(self, *, final: bool) -> None:
        branch = self.branch()
        window = current_window_id(
            branch, self.session_id, fork_safe=self.config.fork_safe_window_ids
        )
        self.budget.notify_committed(branch, window, final=final)
        if self._announce is None:
            return
        if self._announce == window and any(
            is_window_boot_entry(entry, window) for entry in branch
        ):
            self.notify("info", cleared_notice(window))
            self._announce = None
        elif final:
            self._announce = None  # never committed: an uncommitted reset announces nothing

    def _now_ms(self) -> int:
        import time

        return time.time_ns() // 1_000_000

    # --- commands -------------------------------------------------------------------------------

    async def wipe_memory_command(self, wait_for_idle: WaitForIdle | None = None) -> CommandResult:
        """``/wipe-memory``: a manual close-out of the current window (see ``commands``)."""
        return await commands.wipe_memory_command(self, wait_for_idle)

    def pi_context_command(self, argument: str = "") -> CommandResult:
        """``/pi-context on|off|status``."""
        return commands.pi_context_command(self, argument)

    async def handoff_command(self, options: HandoffOptions) -> HandoffResult:
        """``/handoff``: continue in a fresh session through a verified relay (see ``handoff``)."""
        from .handoff import run_handoff

        return await run_handoff(self, options)

    def before_compact(self) -> CompactDecision:
        """``/compact`` (and native compaction): cancelled while enabled or on a marked branch."""
        return commands.compact_command(self)

    # --- tools ----------------------------------------------------------------------------------

    def tool_context(self) -> ToolContext:
        return ToolContext(
            session_path=self.session.path,
            notes_home=self.config.notes_home,
            cwd=self.cwd,
            session_id=self.session_id,
            agent_name=self.config.agent_name,
            model_id=self.model.id if self.model else None,
            leaf_id=self.session.leaf_id,
        )

    def tool_schemas(self) -> list[dict[str, JSONValue]]:
        """Function-calling declarations of every tool the runtime serves."""
        return [tool.schema() for tool in all_tools().values()]

    def wipe_memory(self) -> ToolResult:
        """The model asks for a fresh window: recorded once per window, committed at turn end."""
        if not self.enabled:
            payload: dict[str, JSONValue] = {
                "error": "pi-context is off, so wipe_memory is unavailable; "
                "the user can turn it back on with /pi-context on"
            }
            return ToolResult(text=encode(payload), details=payload, is_error=True)
        window = self.window_id
        step = self.control.tool_request(window)
        duplicate = is_duplicate(step)
        payload = {
            "status": ALREADY_PENDING_STATUS if duplicate else REQUESTED_STATUS,
            "window_id": window,
            "message": "This window ends after the current tool batch; a fresh one follows.",
        }
        return ToolResult(text=encode(payload), details=payload, terminate=True)

    def get_context_remaining(self) -> ToolResult:
        """Tokens left before the final warning (0 at or past it; null when unknown)."""
        usage = self.usage()
        left = countdown(usage.remaining if usage else None, self.budget.thresholds)
        payload: dict[str, JSONValue] = {"remaining_tokens": left}
        return ToolResult(text=encode(payload), details=payload)

    def call_tool(self, name: str, args: Mapping[str, JSONValue] | None = None) -> ToolResult:
        """Run any pi-context tool for this session; bad arguments become error results."""
        arguments = {} if args is None else args
        try:
            if not isinstance(arguments, Mapping):
                raise ToolError(encode({"error": f"{name} arguments must be a JSON object"}))
            if name in runtime_tools.RUNTIME_TOOL_NAMES:
                runtime_tools.check_no_arguments(name, arguments)
                return self.wipe_memory() if name == "wipe_memory" else self.get_context_remaining()
            tool = all_tools().get(name)
            if tool is None:
                known = ", ".join(sorted(all_tools()))
                raise ToolError(encode({"error": f"unknown tool {name!r}; known tools: {known}"}))
            return tool.run(self.tool_context(), arguments)
        except ToolError as exc:
            return ToolResult(text=str(exc), is_error=True)
        except SessionError as exc:
            return ToolResult(text=encode({"error": str(exc)}), is_error=True)
