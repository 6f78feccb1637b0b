"""Runtime conformance: the real ``Runtime`` checked against its spec, as a host drives it.

For each reset-control spec a hypothesis ``RuleBasedStateMachine`` is generated whose rules are
host-level operations on a real ``Runtime`` over a real session file and a real notes home (in
a temporary directory): model turns (each outcome, any usage band, with or without the model's
``wipe_memory`` calls and queued messages), the user's ``/wipe-memory``, aborts, settles,
``/pi-context off``/``on``, tree navigation, session switches, shutdown, policy changes, and
asynchronous boundary builds that a lifecycle change interrupts at one of their await points.

Beside it runs a *mirror*: the spec interpreter (``pi_context.spec.interpret``, not the
generated code) fed the facts a host would report, derived from what the test itself did
(the outcome it chose, the usage band it wrote, the queue it filled, the switch it flipped).
After every operation:

* the runtime's step names the mirror's row, effect, cause (the spec's ``cause``), duplicate
  flag (the effect's ``duplicate``) and lazy reads, and their states agree;
* a boundary (checkpoint -> marker -> boot -> continuation, in that order) is in the drafts
  exactly when the effect's host action commits and the build stayed current; a stale build
  commits nothing, continues nothing and announces nothing;
* continue, stop and retry are what the host action declares;
* every window on the branch has one boot, and "memory cleared" is announced only for a
  window whose boot is durable on disk, once.

``MUTANTS`` break the runtime one way each (a gate removed, a fact inverted, the abort check
dropped, the cause table shifted, ...); ``kill_mutants`` runs the same machine against each
and reports which ones it catches. ``pi-context verify`` runs both for every reset-control spec.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from pi_context.spec import interpret
from pi_context.spec.model import HOST_ACTION_MEANINGS, Spec

Wire = dict[str, Any]

CONTEXT_WINDOW = 200_000
RESERVE = 16_384
BANDS: dict[str, int] = {
    # tokens used; every band sits thousands of tokens away from every budget line, so the
    # estimates of what follows the last reply never move a turn across one
    "low": 20_000,
    "reminder": CONTEXT_WINDOW - 35_000,
    "warning": CONTEXT_WINDOW - 22_000,
    "hard": CONTEXT_WINDOW - 5_000,
}
OUTCOMES = ("completed", "error", "overflow", "silent-overflow", "aborted")
"""A silent overflow is a reply that stopped normally but reports more input than the window."""
OUTCOME_DRAWS = ("completed", "completed", "error", "overflow", "silent-overflow", "aborted")
"""Outcomes as the random runs draw them (completed turns and overflows are what build up the
states worth checking)."""
INTERRUPTIONS = ("abort", "tree", "off", "switch", "shutdown")
AWAIT_POINTS = 3
"""The test's boundary builder awaits this many times; an interruption lands before one of
them, or (at point ``AWAIT_POINTS``) after the result is returned, before the host appends."""


class RuntimeMismatch(AssertionError):
    """The runtime did something its spec does not say."""


# --- the mirror ----------------------------------------------------------------------------------


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass
class Mirror:
    """The spec interpreter, fed the facts a host would report."""

    spec: Spec
    state: Wire = field(init=False)

    def __post_init__(self) -> None:
        self.state = interpret.initial_state(self.spec)

    def has(self, event: str) -> bool:
        return self.spec.event(event) is not None

    def step(self, event: str, **fields: Any) -> tuple[interpret.Step, str, bool]:
        """Step ``event``: the interpreter's step, the row's cause and the duplicate flag."""
        declared = self.spec.event(event)
        assert declared is not None, event
        wire: Wire = {"type": event}
        facts = fields.pop("facts", None)
        for f in declared.fields:
            wire[f.name] = fields[f.name]
        if declared.facts:
            assert facts is not None
            wire["facts"] = {f.name: facts[_fact_alias(f.name)] for f in declared.facts}
        pre = self.state
        done = interpret.step(self.spec, pre, wire)
        self.state = done.state
        row = next(r for r in self.spec.rows if r.id == done.row)
        cause = interpret.cause_text(row, pre) or ""
        effect = self.spec.effect(done.effect)
        duplicate = effect is not None and effect.duplicate
        return done, cause, duplicate

    def meaning(self, effect: str) -> Any:
        declared = self.spec.effect(effect)
        assert declared is not None and declared.host is not None
        return HOST_ACTION_MEANINGS[declared.host]


def _fact_alias(name: str) -> str:
    return "hardReserveDue" if name == "thresholdDue" else name


# --- the machine ---------------------------------------------------------------------------------


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise RuntimeMismatch(message)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_767_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


class RuntimeConformance(RuleBasedStateMachine):
    """Host-level operations on a real Runtime, checked step by step against the mirror."""

    SPEC: Spec  # set on each generated subclass
    examples = 0  # set-ups run (one per hypothesis example)
    rows: set[str]  # rows the runtime fired, over every example (each subclass its own)
    stale = 0  # boundary builds an interruption made stale

    def __init__(self) -> None:
        super().__init__()
        self._tmp = tempfile.TemporaryDirectory(prefix="pi-context-runtime-")
        self.root = Path(self._tmp.name)
        self.mirror = Mirror(self.SPEC)
        self.clock = _Clock()
        self.enabled = True
        self.automatic = True
        self.run_aborted = False
        self.interrupt: tuple[str, int] | None = None
        self.interrupted = False
        self.announced: set[str] = set()
        self.sessions: list[Any] = []
        self.rt: Any = None
        self.mirror_last_clear: Expected | None = None
        type(self).examples += 1

    # --- set-up --------------------------------------------------------------------------------

    @initialize()
    def start(self) -> None:
        from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
        from pi_context.bindings.runtime.budget import Policy, thresholds_for
        from pi_context.bindings.session import Durability, Session, seeded_uuids

        project = self.root / "project"
        for index in range(2):
            self.sessions.append(
                Session.create(
                    project,
                    self.root / "sessions",
                    now=self.clock,
                    uuids=seeded_uuids(index + 1),
                    durability=Durability.NONE,
                )
            )

        def policy() -> Policy:
            return Policy(thresholds_for(RESERVE, 24_576), self.automatic)

        self.rt = Runtime(
            self.sessions[0],
            RuntimeConfig(
                notes_home=self.root / "notes",
                cwd=project,
                agent_dir=self.root / "agent",
                model=ModelInfo("m", "p", CONTEXT_WINDOW),
                spec=self.SPEC.id,
                policy=policy,
                rng=random.Random(5),
                build_reset=self._build,
                notify=self._on_notice,
            ),
        )
        self.rt.session_start("startup")
        self._user("start")

    def teardown(self) -> None:
        self._tmp.cleanup()

    # --- helpers -------------------------------------------------------------------------------

    async def _build(self, runtime: Any) -> list[dict[str, Any]]:
        """The boundary builder: slow and asynchronous, maybe interrupted at an await point."""
        drafts: list[dict[str, Any]] = runtime.reset_drafts()
        for point in range(AWAIT_POINTS):
            if self.interrupt is not None and self.interrupt[1] == point:
                self.interrupted = True
                self._interrupt(self.interrupt[0])
            await asyncio.sleep(0)
        return drafts

    def _interrupt(self, what: str) -> None:
        """A lifecycle change while a boundary is being built, and the mirror's view of it."""
        rt = self.rt
        if what == "abort":
            rt.abort()
            self._mirror("abort")
            self.run_aborted = True
        elif what == "tree":
            entries = rt.session.entries
            rt.tree(entries[len(entries) // 2]["id"] if entries else None)
            self._transition()
        elif what == "off":
            rt.pi_context_command("off")
            self.enabled = False
            self._mirror("clear")
        elif what == "switch":
            self._switch()
        else:
            rt.shutdown()
            self._transition()
            rt.session_start("resume")
            self._transition()

    def _switch(self) -> None:
        other = self.sessions[1] if self.rt.session is self.sessions[0] else self.sessions[0]
        self.rt.session_start("resume", other)
        self._transition()

    def _user(self, text: str) -> None:
        self.rt.session.append_message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self.clock()}
        )

    def _window(self) -> str:
        from pi_context.bindings.session.windows import current_window_id

        session = self.rt.session
        return current_window_id(session.branch(), session.session_id)

    def _mirror(self, event: str, **fields: Any) -> Expected:
        """Step the mirror; what the runtime's own step for the same event must be."""
        done, cause, duplicate = self.mirror.step(event, **fields)
        return Expected(event, done, cause, duplicate)

    def _mark(self) -> int:
        return len(self.rt.control.history)

    def _compare(self, expected: Expected, index: int, what: str) -> None:
        """The runtime's step number ``index`` is the one the mirror expected."""
        self.rows.add(expected.done.row)
        from pi_context.bindings.runtime.control import _snake

        history = self.rt.control.history
        _check(index < len(history), f"{what}: the runtime took no {expected.event} step")
        step, done = history[index], expected.done
        _check(
            (step.event, step.row, step.effect) == (expected.event, done.row, done.effect),
            f"{what}: the runtime fired {step.row} ({step.effect}); the spec fires {done.row} "
            f"({done.effect})",
        )
        _check(
            step.cause == expected.cause,
            f"{what}: cause {step.cause!r}, the spec says {expected.cause!r}",
        )
        _check(
            step.duplicate == expected.duplicate,
            f"{what}: duplicate is {step.duplicate}, the spec says {expected.duplicate}",
        )
        consulted = tuple(_snake(name) for name in done.consulted)
        _check(
            step.consulted == consulted,
            f"{what}: the runtime read {step.consulted}; the spec reads {consulted}",
        )

    def _stepped(self, expected: Expected, what: str) -> None:
        """The runtime took exactly the mirror's step (and nothing else) just now."""
        index = self._mark() - 1
        self._compare(expected, index, what)

    def _boundary(
        self,
        result: Any,
        expected: Expected,
        what: str,
        interrupt: tuple[str, int] | None = None,
    ) -> None:
        """Checks of one turn-end or settle result, then the host appends its drafts (after a
        lifecycle change, when ``interrupt`` lands between the two)."""
        from pi_context.bindings.session.boundary import artifact_kind
        from pi_context.bindings.session.windows import is_reset_marker

        meaning = self.mirror.meaning(expected.done.effect)
        stale = meaning.commits and self.interrupted
        commits = meaning.commits and not stale
        kinds = [artifact_kind(d) for d in result.drafts]
        has_boundary = "marker" in kinds
        _check(
            has_boundary == commits,
            f"{what}: {expected.done.effect} {'commits' if commits else 'commits nothing'}"
            + (" (its build was interrupted)" if stale else "")
            + f", but the drafts {'lack' if commits else 'carry'} a boundary",
        )
        if has_boundary:
            _check(
                [d.get("type") for d in result.drafts[-4:-3]] == ["compaction"]
                and kinds[-3:] == ["marker", "boot", "continuation"]
                and not any(kinds[:-3]),
                f"{what}: the boundary is not checkpoint -> marker -> boot -> continuation",
            )
        _check(result.stale == stale, f"{what}: stale is {result.stale}, expected {stale}")
        type(self).stale += stale
        _check(
            result.continue_ == (commits and meaning.continues),
            f"{what}: continue is {result.continue_} for {expected.done.effect}",
        )
        _check(
            result.retry == (commits and meaning.retries),
            f"{what}: retry is {result.retry} for {expected.done.effect}",
        )
        _check(
            result.stop == (meaning.stops and (commits or not meaning.commits)),
            f"{what}: stop is {result.stop} for {expected.done.effect}",
        )
        resets = len(self.rt.resets)
        if commits and interrupt is not None and interrupt[1] == AWAIT_POINTS:
            session = self.rt.session
            markers = sum(is_reset_marker(e) for e in session.entries)
            self._interrupt(interrupt[0])
            self.rt.append(result.drafts)
            _check(
                sum(is_reset_marker(e) for e in session.entries) == markers
                and len(self.rt.resets) == resets,
                f"{what}: a boundary returned before a lifecycle change ({interrupt[0]}) was "
                "written after it",
            )
            return
        self.rt.append(result.drafts)
        if commits:
            _check(len(self.rt.resets) == resets + 1, f"{what}: the written reset is not recorded")
            record = self.rt.resets[-1]
            _check(
                record.window_id == result.window_id
                and record.cause == result.cause == expected.cause,
                f"{what}: the reset is recorded as {record}, cause {result.cause!r}; the spec's "
                f"cause is {expected.cause!r}",
            )

    def _reply(self, band: str, outcome: str, calls: int) -> dict[str, Any]:
        """Append the model's reply of one turn (usage in ``band``) and return it."""
        tokens = BANDS[band]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"turn {self.clock.now}"}]
            + [
                {
                    "type": "toolCall",
                    "id": f"w{self.clock.now}-{n}",
                    "name": "wipe_memory",
                    "arguments": {},
                }
                for n in range(calls)
            ],  # fmt: skip
            "api": "test",
            "provider": "p",
            "model": "m",
            "usage": {
                "input": tokens,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": tokens,
            },  # fmt: skip
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock(),
        }
        if outcome == "aborted":
            message["stopReason"] = "aborted"
        elif outcome == "error":
            message["stopReason"] = "error"
            message["errorMessage"] = "internal server error"
        elif outcome == "overflow":
            message["stopReason"] = "error"
            message["errorMessage"] = "prompt is too long: 250000 tokens > 200000 maximum"
        elif outcome == "silent-overflow":
            message["stopReason"] = "stop"
            message["usage"] = {**message["usage"], "input": CONTEXT_WINDOW + 10_000}
        self.rt.session.append_message(message)
        return message

    def _wipe_tool(self, call_id: str) -> None:
        """The model's ``wipe_memory``: served only while on (the enabled precondition)."""
        before = self._mark()
        result = self.rt.call_tool("wipe_memory", {})
        self.rt.session.append_message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "wipe_memory",
                "content": [{"type": "text", "text": result.text}],
                "isError": result.is_error,
                "timestamp": self.clock(),
            }
        )
        if not self.enabled:
            _check(result.is_error, "wipe_memory was served while pi-context is off")
            _check(self._mark() == before, "wipe_memory reached the reducer while off")
            return
        event = "tool_request" if self.mirror.has("tool_request") else "request"
        expected = self._mirror(event, windowId=self._window())
        self._stepped(expected, "wipe_memory")
        import json

        status = json.loads(result.text).get("status")
        _check(
            (status == "rollover_already_pending") == expected.duplicate and result.terminate,
            f"wipe_memory answered {status!r} for {expected.done.effect}",
        )

    # --- rules ---------------------------------------------------------------------------------

    @rule(
        band=st.sampled_from(tuple(BANDS)),
        outcome=st.sampled_from(OUTCOME_DRAWS),
        wipes=st.integers(0, 2),
        queued=st.booleans(),
        interrupt=st.one_of(
            st.none(),
            st.none(),
            st.none(),
            st.tuples(st.sampled_from(INTERRUPTIONS), st.integers(0, AWAIT_POINTS)),
        ),
        then_settle=st.sampled_from((None, None, False, True)),
    )
    def turn(
        self,
        band: str,
        outcome: str,
        wipes: int,
        queued: bool,
        interrupt: tuple[str, int] | None,
        then_settle: bool | None,
    ) -> None:
        """One model turn, as a host runs it: request, reply, tool calls, turn end, append."""
        from pi_context.bindings.runtime.protocol import WARNING_TYPE
        from pi_context.bindings.session.context import projection_entries

        rt = self.rt
        rt.turn_start()
        self.run_aborted = False
        before = self._mark()
        request = rt.context()
        if request.abort:
            return  # the host does not send a request the runtime refused
        durable = [m for _, ms in projection_entries(rt.session.branch()) for m in ms]
        injected = sum(m.get("customType") == WARNING_TYPE for m in request.messages) > sum(
            m.get("customType") == WARNING_TYPE for m in durable
        )
        window = self._window()
        if injected and self.mirror.has("close_out"):
            _check(self.enabled, "the budget warned while pi-context is off")
            expected = self._mirror("close_out", windowId=window, source="automatic")
            self._stepped(expected, "the budget's close-out")
        else:
            _check(self._mark() == before, "a request without a new warning stepped the reducer")
        reply = self._reply(band, outcome, wipes)
        for n in range(wipes):
            self._wipe_tool(f"w{n}")
        if outcome == "aborted":
            rt.abort()
            self._stepped(self._mirror("abort"), "abort")
            self.run_aborted = True
        aborted = self.run_aborted
        overflow = outcome in ("overflow", "silent-overflow") and not aborted
        facts = {
            "windowId": window,
            "aborted": aborted,
            "overflow": overflow,
            "failed": outcome == "error" or overflow,
            "enabled": self.enabled,
            "queued": queued,
            "automaticResetEnabled": self.automatic,
            "hardReserveDue": self.automatic and band == "hard",
        }
        # The reducer steps before the boundary is built, so the mirror does too; an
        # interruption during the build then reaches both as its own events.
        expected = self._mirror("turn_end", facts=facts)
        index = self._mark()
        self.interrupt, self.interrupted = interrupt, False
        try:
            host_outcome = {"overflow": "error", "silent-overflow": "completed"}.get(
                outcome, outcome
            )
            result = asyncio.run(rt.turn_end(host_outcome, reply, queued=queued))
        finally:
            self.interrupt = None
        self._compare(expected, index, "turn_end")
        self._boundary(result, expected, "turn_end", interrupt)
        if then_settle is not None and not result.continue_:
            # the run stops after this turn (``then_settle``: whether messages wait)
            self.settle(queued=then_settle, interrupt=None)

    @rule(queued=st.booleans(), interrupt=st.one_of(
        st.none(), st.tuples(st.sampled_from(INTERRUPTIONS), st.integers(0, AWAIT_POINTS))
    ))  # fmt: skip
    def settle(self, queued: bool, interrupt: tuple[str, int] | None) -> None:
        """The run stops: before_settle, append, and settled unless it continues."""
        rt = self.rt
        outcome = self._last_outcome()
        facts = {
            "windowId": self._window(),
            "queued": queued,
            "enabled": self.enabled,
            "automaticResetEnabled": self.automatic,
            "aborted": self.run_aborted or outcome == "aborted",
            "failed": not self.run_aborted and outcome == "error",
        }
        expected = self._mirror("before_settle", facts=facts)
        index = self._mark()
        self.interrupt, self.interrupted = interrupt, False
        try:
            result = asyncio.run(rt.before_settle(queued=queued))
        finally:
            self.interrupt = None
        self._compare(expected, index, "before_settle")
        self._boundary(result, expected, "before_settle", interrupt)
        if queued and not result.continue_:
            self._user("the queued message")  # queued work runs before the run settles
        elif not result.continue_:
            rt.settled()
            self.run_aborted = False
            self._stepped(self._mirror("settled"), "settled")

    def _last_outcome(self) -> str:
        for entry in reversed(self.rt.session.branch()):
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                stop = message.get("stopReason")
                return str(stop) if stop in ("aborted", "error") else "completed"
        return "completed"

    @rule()
    def wipe_command(self) -> None:
        """The user's /wipe-memory: its spec event, then the declared host action."""
        from pi_context.bindings.runtime.protocol import WARNING_TYPE

        rt = self.rt
        before = self._mark()
        entries = len(rt.session.entries)
        saved = rt.session.persisted
        command = asyncio.run(rt.wipe_memory_command())
        if not self.enabled or not saved:
            why = "while off" if not self.enabled else "in a session not saved yet"
            _check(not command.ok and self._mark() == before, f"/wipe-memory ran {why}")
            return
        window = self._window() if not self.mirror.has("manual_reset") else None
        if self.mirror.has("close_out"):
            expected = self._mirror("close_out", windowId=window, source="manual")
        else:
            expected = self._mirror("manual_reset")
        self._compare(expected, before, "/wipe-memory")
        meaning = self.mirror.meaning(expected.done.effect)
        written = rt.session.entries[entries:]
        if expected.duplicate:
            _check(written == [] and not command.start_turn, "a duplicate /wipe-memory wrote")
        elif meaning.commits:
            kinds = [e.get("customType") or e.get("type") for e in written]
            _check(len(kinds) == 4 and command.ok, f"/wipe-memory wrote {kinds}")
            _check(command.start_turn == meaning.continues, "/wipe-memory's turn is undeclared")
            _check(rt.resets[-1].cause == expected.cause, "/wipe-memory's cause is not the spec's")
        elif meaning.acknowledges:
            kinds = [e.get("customType") for e in written]
            _check(kinds == [WARNING_TYPE] and command.start_turn, f"/wipe-memory wrote {kinds}")

    @rule(
        change=st.sampled_from(
            ("abort", "off", "on", "tree", "switch", "shutdown", "automatic-off", "automatic-on")
        ),
        at=st.integers(0, 10_000),
    )
    def lifecycle(self, change: str, at: int) -> None:
        """A lifecycle change between turns: an abort, /pi-context off or on, tree navigation,
        a session switch, shutdown (and resume), or the automatic-reset setting."""
        rt = self.rt
        before = self._mark()
        if change == "abort":
            rt.abort()
            self.run_aborted = True
            self._stepped(self._mirror("abort"), "abort")
        elif change in ("off", "on"):
            rt.pi_context_command(change)
            self.enabled = change == "on"
            if self.enabled:
                _check(self._mark() == before, "/pi-context on stepped the reducer")
            else:
                self._stepped(self._mirror("clear"), "/pi-context off")
        elif change == "tree":
            entries = rt.session.entries
            if not entries:
                return
            rt.tree(entries[at % len(entries)]["id"])
            self._transition()
            self._cleared("tree navigation")
        elif change == "switch":
            self._switch()
            self._cleared("session switch")
        elif change == "shutdown":
            rt.shutdown()
            self._transition()
            rt.session_start("resume")
            self._transition()
            self._cleared("shutdown and resume")
        else:
            self.automatic = change == "automatic-on"

    @rule()
    def user_message(self) -> None:
        self._user("more")

    # --- invariants ----------------------------------------------------------------------------

    def check_all(self) -> None:
        """Every invariant, as hypothesis checks them after each rule."""
        self.states_agree()
        self.one_boot_per_window()

    @invariant()
    def states_agree(self) -> None:
        if self.rt is None:
            return
        ours = self.rt.control.state_wire()
        _check(ours == self.mirror.state, f"state {ours}; the spec's {self.mirror.state}")

    @invariant()
    def one_boot_per_window(self) -> None:
        """What the model sees of the branch holds one boot per window at most (a boot hidden
        behind a compaction the leaf sits on is out of its view and may be replaced)."""
        if self.rt is None:
            return
        from pi_context.bindings.runtime.protocol import BOOT_TYPE
        from pi_context.bindings.session.context import projection_entries

        boots: dict[str, int] = {}
        for _, messages in projection_entries(self.rt.session.branch()):
            for message in messages:
                details = message.get("details")
                if message.get("customType") == BOOT_TYPE and isinstance(details, dict):
                    window = str(details.get("windowId"))
                    boots[window] = boots.get(window, 0) + 1
        doubled = {window: n for window, n in boots.items() if n > 1}
        _check(not doubled, f"windows with more than one boot in view: {doubled}")

    def _on_notice(self, notice: Any) -> None:
        """Each notice as the runtime emits it: "memory cleared" only once a window's boot is
        durable on disk (the file re-read now), and once per window."""
        from pi_context.bindings.runtime.protocol import cleared_notice
        from pi_context.bindings.session import Session
        from pi_context.bindings.session.windows import is_window_boot_entry

        prefix = cleared_notice("")
        if not notice.text.startswith(prefix):
            return
        window = notice.text[len(prefix) :]
        _check(window not in self.announced, f"memory cleared twice for {window}")
        self.announced.add(window)
        durable = any(
            session.path is not None
            and session.path.exists()
            and any(is_window_boot_entry(e, window) for e in Session.open(session.path).entries)
            for session in self.sessions
        )
        _check(durable, f"memory cleared announced for {window} before its boot is durable")

    # --- lifecycle helpers ---------------------------------------------------------------------

    def _transition(self) -> None:
        self.mirror_last_clear = self._mirror("clear")
        self.run_aborted = False

    def _cleared(self, what: str) -> None:
        assert self.mirror_last_clear is not None
        self._stepped(self.mirror_last_clear, what)


@dataclass(frozen=True)
class Expected:
    """What the runtime's own step for ``event`` must be."""

    event: str
    done: interpret.Step
    cause: str
    duplicate: bool


# --- scenarios ----------------------------------------------------------------------------------

Op = tuple[str, dict[str, Any]]


def _turn(**given: Any) -> Op:
    values: dict[str, Any] = {
        "band": "low",
        "outcome": "completed",
        "wipes": 0,
        "queued": False,
        "interrupt": None,
        "then_settle": None,
    }
    values.update(given)
    return ("turn", values)


def _settle(queued: bool = False) -> Op:
    return ("settle", {"queued": queued, "interrupt": None})


def _change(change: str, at: int = 0) -> Op:
    return ("lifecycle", {"change": change, "at": at})


_WIPE: Op = ("wipe_command", {})

SCENARIOS: tuple[tuple[str, tuple[Op, ...]], ...] = (
    ("wipe_memory commits, twice", (_turn(wipes=1), _turn(), _WIPE, _turn(wipes=1), _turn())),
    ("a duplicate wipe_memory", (_turn(wipes=2),)),
    ("the hard reserve", (_turn(band="hard"), _turn(band="hard", then_settle=False))),
    ("no hard reserve while automatic resets are off",
     (_change("automatic-off"), _turn(band="hard"), _settle())),
    ("overflow recovery", (_turn(outcome="overflow"), _settle(), _turn(), _settle())),
    ("a spent chain", (_turn(outcome="overflow"), _settle(), _turn(outcome="overflow"), _settle())),
    ("overflow with work queued",
     (_turn(outcome="overflow"), _settle(queued=True), _turn(outcome="overflow"), _settle())),
    ("overflow without automatic resets",
     (_turn(outcome="overflow"), _change("automatic-off"), _settle())),
    ("overflow while off", (_change("off"), _turn(outcome="overflow"), _settle(), _change("on"))),
    ("a silent overflow without automatic resets",
     (_turn(outcome="silent-overflow"), _change("automatic-off"), _settle())),
    ("a close-out behind a silent overflow",
     (_turn(), _turn(outcome="silent-overflow"), _WIPE, _settle(queued=True),
      _change("automatic-off"), _settle(), _change("automatic-on"), _turn(), _settle())),
    ("the budget's close-out",
     (_turn(band="warning"), _turn(band="warning"), _settle(), _turn(band="warning"), _settle())),
    ("the budget's close-out, queued and without automatic resets",
     (_turn(band="warning"), _turn(band="warning"), _settle(queued=True),
      _change("automatic-off"), _settle())),
    ("/wipe-memory, then a stop", (_turn(), _WIPE, _WIPE, _turn(), _settle())),
    ("/wipe-memory, then wipe_memory", (_turn(), _WIPE, _turn(wipes=1), _settle())),
    ("/wipe-memory over the budget's close-out",
     (_turn(band="warning"), _turn(band="warning"), _WIPE, _turn(), _settle())),
    ("/wipe-memory while off, then on", (_turn(), _change("off"), _WIPE, _turn(wipes=1),
                                         _change("on"), _WIPE)),
    ("an error and an aborted turn", (_turn(outcome="error"), _settle(), _turn(outcome="aborted"),
                                      _settle(), _turn(wipes=1, outcome="aborted"), _settle())),
    ("an abort between turns", (_turn(wipes=1, then_settle=False), _change("abort"),
                                _turn(outcome="overflow"), _change("abort"), _settle())),
    *(
        (f"{what} during a boundary build (await point {point})",
         (_turn(wipes=1, interrupt=(what, point)), _turn(band="hard", interrupt=(what, point)),
          _turn(outcome="overflow"), ("settle", {"queued": False, "interrupt": (what, point)})))
        for what in INTERRUPTIONS
        for point in range(AWAIT_POINTS + 1)
    ),
    ("tree navigation, a switch and a shutdown",
     (_turn(wipes=1), _change("tree", 3), _turn(), _change("switch"), _turn(wipes=1),
      _change("switch"), _change("shutdown"), _turn(band="hard"))),
)  # fmt: skip
"""Host scenarios every run starts with (named, so a failure says which), before the
randomly generated runs."""


def run_scenarios(machine: type[RuntimeConformance]) -> str | None:
    """Run every scenario on a fresh machine; the first failure, named, or None."""
    for name, ops in SCENARIOS:
        state = machine()
        try:
            state.start()
            state.check_all()
            for rule_name, arguments in ops:
                getattr(state, rule_name)(**arguments)
                state.check_all()
        except Exception as exc:  # a mismatch, or the runtime itself failing
            return f"scenario {name!r}: {type(exc).__name__}: {exc}"
        finally:
            state.teardown()
    return None


# --- running it ----------------------------------------------------------------------------------


def machine_for(spec: Spec) -> type[RuntimeConformance]:
    """The runtime-conformance state machine generated for ``spec``."""
    name = f"RuntimeConformance_{spec.module_name}"
    machine: type[RuntimeConformance] = type(
        name, (RuntimeConformance,), {"SPEC": spec, "rows": set(), "stale": 0, "examples": 0}
    )
    return machine


@dataclass
class ConformanceResult:
    spec_id: str
    examples: int
    failure: str | None = None
    seconds: float = 0.0
    rows: frozenset[str] = frozenset()
    """Rows of the spec the runtime fired during the run."""
    stale: int = 0
    """Boundary builds that an interruption made stale (and that committed nothing)."""

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_conformance(
    spec: Spec, *, examples: int = 30, steps: int = 25, shrink: bool = True
) -> ConformanceResult:
    """Drive the real runtime for ``spec`` through ``examples`` generated runs of up to
    ``steps`` host operations each (derandomized: the same runs every time)."""
    machine = machine_for(spec)
    phases = (Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ()))
    config = settings(
        max_examples=max(1, examples),
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    started = time.perf_counter()
    failure = run_scenarios(machine)
    if failure is None and examples > 0:
        try:
            run_state_machine_as_test(machine, settings=config)
        except Exception as exc:  # a mismatch, or the runtime itself failing: both are findings
            failure = f"{type(exc).__name__}: {exc}"
    return ConformanceResult(
        spec.id,
        machine.examples,
        failure,
        time.perf_counter() - started,
        frozenset(machine.rows),
        machine.stale,
    )


# --- runtime mutants -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One way to break the runtime, applied for the duration of a ``with``."""

    name: str
    what: str
    apply: Callable[[], contextlib.AbstractContextManager[None]]
    equivalent: Mapping[str, str] = field(default_factory=dict)
    """Spec id -> why no host-level run of that spec can tell it from the real runtime (a
    mutant not listed for a spec must be killed there)."""


def _patch(owner: Any, attribute: str, build: Callable[[Any], Any]) -> Callable[[], Any]:
    """A patch of ``owner.attribute``; ``build`` gets the original and returns the mutant."""

    @contextlib.contextmanager
    def apply() -> Iterator[None]:
        original = owner.__dict__[attribute]
        setattr(owner, attribute, build(original))
        try:
            yield
        finally:
            setattr(owner, attribute, original)

    return apply


def _property(getter: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    return lambda original: property(lambda self: getter(self, original.fget(self)))


def _caller_is(function: Any) -> bool:
    """Whether ``current`` was called from ``function`` (the check the mutant drops)."""
    import sys

    frame = sys._getframe(2)
    return frame.f_code is getattr(function, "__code__", None)


def _shifted_cause(original: Any) -> Any:
    def cause(self: Any, row: str, state: Any) -> str:
        real: str = original(self, row, state)
        texts: list[str] = list(dict.fromkeys(self.module.ROW_CAUSE.values()))
        if real in texts and len(texts) > 1:
            return texts[(texts.index(real) + 1) % len(texts)]
        return real

    return cause


def _eager_facts(original: Any) -> Any:
    def facts(self: Any, event: str, **values: Any) -> Any:
        made = original(self, event, **values)
        for name in ("enabled", "queued", "automatic_reset_enabled", "hard_reserve_due"):
            getattr(made, name)
        return made

    return facts


def _announce_early(original: Any) -> Any:
    async def perform(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        if result.window_id is not None:
            from pi_context.bindings.runtime.protocol import cleared_notice

            self._notices.notify("info", cleared_notice(result.window_id))
        return result

    return perform


def _swapped_boundary(original: Any) -> Any:
    def reset_drafts(self: Any) -> Any:
        drafts = original(self)
        drafts[1], drafts[2] = drafts[2], drafts[1]  # boot before marker
        return drafts

    return reset_drafts


def _mutants() -> tuple[Mutant, ...]:
    from pi_context.bindings.runtime import (
        budget,
        builder,
        control,
        effects,
        lifecycle,
        runtime,
        window,
    )
    from pi_context.bindings.session import windows

    lc, cf, st_ = lifecycle.Lifecycle, control.Facts, control.Step
    return (
        Mutant(
            "abort-check-dropped",
            "a boundary build ignores an abort that happened meanwhile",
            _patch(
                lc,
                "token",
                lambda orig: lambda self: lifecycle.Token(**{**orig(self).__dict__, "aborts": 0}),
            ),
        ),
        Mutant(
            "stale-check-dropped",
            "a boundary build is never checked for staleness",
            _patch(lc, "current", lambda orig: lambda self, token: True),
        ),
        Mutant(
            "append-check-dropped",
            "a boundary returned before a lifecycle change is written after it",
            _patch(
                lc,
                "current",
                lambda orig: (
                    lambda self, token: orig(self, token) or _caller_is(effects.Effects.append)
                ),
            ),
        ),
        Mutant(
            "cause-table-shifted",
            "each row's cause is the next row's",
            _patch(control.SpecBinding, "cause", _shifted_cause),
        ),
        Mutant(
            "enabled-gate-removed",
            "the enabled precondition always passes",
            _patch(lc, "refuse_while_off", lambda orig: lambda self, what: None),
        ),
        Mutant(
            "enabled-fact-inverted",
            "the reducer reads enabled inverted",
            _patch(cf, "enabled", _property(lambda self, value: not value)),
        ),
        Mutant(
            "queued-fact-inverted",
            "the reducer reads queued inverted",
            _patch(cf, "queued", _property(lambda self, value: not value)),
        ),
        Mutant(
            "aborted-fact-dropped",
            "the reducer never hears that a turn or run was aborted",
            _patch(cf, "aborted", _property(lambda self, value: False)),
        ),
        Mutant(
            "hard-reserve-fold-dropped",
            "hardReserveDue ignores the automatic-reset setting",
            _patch(
                budget.Budget,
                "hard_reserve_due",
                lambda orig: (
                    lambda self, remaining: (
                        remaining is not None and remaining <= self.thresholds.hard_reserve
                    )
                ),
            ),
        ),
        Mutant(
            "lazy-facts-eager",
            "every lazy fact is read before the reducer asks",
            _patch(control.Control, "facts", _eager_facts),
        ),
        Mutant(
            "duplicate-flag-dropped",
            "no step is ever reported as a duplicate",
            _patch(control.SpecBinding, "duplicate", lambda orig: lambda self, effect: False),
        ),
        Mutant(
            "continue-inverted",
            "commit-and-continue and commit-and-stop swap what they do after the boundary",
            _patch(st_, "continues", _property(lambda self, value: not value)),
        ),
        Mutant(
            "retry-dropped",
            "an overflow recovery never retries",
            _patch(st_, "retries", _property(lambda self, value: False)),
        ),
        Mutant(
            "run-outcome-forgotten",
            "before_settle always hears that the run completed",
            _patch(runtime.Runtime, "run_outcome", lambda orig: lambda self: "completed"),
            equivalent={
                "reset-control@0.25": (
                    "0.25 reads the run's outcome only as aborted, and only behind a pending "
                    "overflow chain; every way an abort reaches the runtime (an abort, an "
                    "aborted turn) clears that chain first, so no settle that reads it follows"
                )
            },
        ),
        Mutant(
            "announced-before-durable",
            "memory cleared is announced as soon as a boundary is built",
            _patch(effects.Effects, "perform", _announce_early),
        ),
        Mutant(
            "boundary-order-swapped",
            "the boot is built before the marker",
            _patch(builder.Boundaries, "reset_drafts", _swapped_boundary),
        ),
        Mutant(
            "root-boot-repeated",
            "every session start and tree navigation appends another root boot",
            _patch(builder, "needs_root_boot", lambda orig: lambda *args: True),
        ),
        Mutant(
            "window-of-root",
            "every request is tagged with the root window",
            _patch(
                window,
                "current_window_id",
                lambda orig: lambda branch, session_id: windows.root_window_id(session_id),
            ),
            equivalent={
                "reset-control@0.25": (
                    "0.25's events and state carry no window ids: its reducer cannot tell one "
                    "window from another, so a wrong id changes none of its decisions"
                )
            },
        ),
    )


MUTANTS: tuple[Mutant, ...] = ()
"""Filled on first use (building them imports the runtime)."""


def mutants() -> tuple[Mutant, ...]:
    global MUTANTS
    if not MUTANTS:
        MUTANTS = _mutants()
    return MUTANTS


@dataclass
class MutantResult:
    mutant: Mutant
    killed: bool
    finding: str = ""
    """The first mismatch the conformance run reported (what killed it)."""


@dataclass
class MutationResult:
    spec_id: str
    results: list[MutantResult]
    seconds: float = 0.0

    @property
    def killed(self) -> int:
        return sum(r.killed for r in self.results)

    @property
    def equivalent(self) -> list[MutantResult]:
        """Surviving mutants known to be equivalent for this spec (each says why)."""
        return [r for r in self.results if not r.killed and self.spec_id in r.mutant.equivalent]

    @property
    def survived(self) -> list[MutantResult]:
        """Surviving mutants that are not known to be equivalent: each is a gap."""
        return [r for r in self.results if not r.killed and self.spec_id not in r.mutant.equivalent]

    @property
    def wrongly_equivalent(self) -> list[MutantResult]:
        """Mutants listed as equivalent for this spec that were killed all the same."""
        return [r for r in self.results if r.killed and self.spec_id in r.mutant.equivalent]

    @property
    def rate(self) -> float:
        counted = len(self.results) - len(self.equivalent)
        return self.killed / counted if counted else 1.0


def kill_mutants(
    spec: Spec,
    *,
    examples: int = 30,
    steps: int = 25,
    only: tuple[str, ...] = (),
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationResult:
    """Run the conformance machine of ``spec`` against each runtime mutant (no shrinking:
    the first mismatch kills it)."""
    started = time.perf_counter()
    results: list[MutantResult] = []
    for mutant in mutants():
        if only and mutant.name not in only:
            continue
        with mutant.apply():
            found = run_conformance(spec, examples=examples, steps=steps, shrink=False)
        result = MutantResult(mutant, not found.ok, (found.failure or "").split("\n", 1)[0][:200])
        results.append(result)
        if on_result is not None:
            on_result(result)
    return MutationResult(spec.id, results, time.perf_counter() - started)


RUNTIME_EXAMPLES = 25
"""Random runs per spec in ``pi-context verify`` (after the named scenarios)."""
MUTANT_EXAMPLES = 10
"""Random runs a mutant gets after the scenarios (most die in a scenario)."""


def runtime_checks(
    spec: Spec,
    failures: list[str],
    *,
    show: bool = True,
    err: Any = None,
    examples: int = RUNTIME_EXAMPLES,
) -> tuple[ConformanceResult | None, MutationResult | None]:
    """``pi-context verify``'s runtime step for one spec: the conformance run, then the
    mutants; problems are appended to ``failures``. Specs the runtime does not run (another
    family, or one without generated code to run) are skipped: (None, None)."""
    import sys

    from pi_context.bindings.runtime.control import bindings

    if spec.id not in bindings():
        return None, None
    out = err or sys.stderr
    if show:
        print(f"  {spec.id} runtime: conformance ...", end="", file=out, flush=True)
    result = run_conformance(spec, examples=examples)
    if show:
        state = "ok" if result.ok else "FAILED"
        print(f" {state} ({result.examples} runs, {result.seconds:.1f}s); mutants ...",
              end="", file=out, flush=True)  # fmt: skip
    if not result.ok:
        failures.append(f"runtime conformance: {result.failure}")
        if show:
            print(file=out)
        return result, None
    mutation = kill_mutants(spec, examples=MUTANT_EXAMPLES)
    if show:
        print(f" {mutation.killed}/{len(mutation.results)} killed ({mutation.seconds:.1f}s)",
              file=out)  # fmt: skip
    for survivor in mutation.survived:
        failures.append(
            f"runtime mutant {survivor.mutant.name} ({survivor.mutant.what}) survived the "
            "runtime conformance"
        )
    for listed in mutation.wrongly_equivalent:
        failures.append(
            f"runtime mutant {listed.mutant.name} is listed as equivalent in {spec.id} but "
            f"was killed ({listed.finding}); remove it from the list"
        )
    return result, mutation
