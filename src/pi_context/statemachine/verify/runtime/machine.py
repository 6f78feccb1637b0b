"""The runtime-conformance state machine: host-level operations on a real ``Runtime`` (a real
session file, a real notes home), each checked against the mirror as it happens."""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pi_context.spec.model import Spec

from .host import (
    AWAIT_POINTS,
    BANDS,
    CONTEXT_WINDOW,
    INTERRUPTIONS,
    OUTCOME_DRAWS,
    RESERVE,
    Clock,
    Expected,
    Mirror,
    check,
    reply,
)


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
        self.clock = Clock()
        self.enabled = True
        self.automatic = True
        self.run_aborted = False
        self.interrupt: tuple[str, int] | None = None
        self.interrupted = False
        self.fail_next_build = False  # the next boundary build raises (a construction failure)
        self.build_failed = False
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
        if self.fail_next_build:
            self.fail_next_build, self.build_failed = False, True
            raise RuntimeError("the boundary builder failed")
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

    def _after_marker(self) -> list[dict[str, Any]] | None:
        """The entries after the newest reset marker on the active branch (None: no marker)."""
        from pi_context.bindings.session.windows import is_reset_marker

        branch = self.rt.session.branch()
        marks = [i for i, entry in enumerate(branch) if is_reset_marker(entry)]
        return branch[marks[-1] + 1 :] if marks else None

    def _boundary_committed(self) -> bool:
        """The newest marker is followed by its boot and then the continuation."""
        from pi_context.bindings.session.boundary import artifact_kind

        after = self._after_marker()
        return after is not None and [artifact_kind(e) for e in after[:2]] == [
            "boot",
            "continuation",
        ]

    def _user_since_boundary(self) -> bool:
        after = self._after_marker() or []
        return any(
            e.get("type") == "message" and e.get("message", {}).get("role") == "user" for e in after
        )

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
        check(index < len(history), f"{what}: the runtime took no {expected.event} step")
        step, done = history[index], expected.done
        check(
            (step.event, step.row, step.effect) == (expected.event, done.row, done.effect),
            f"{what}: the runtime fired {step.row} ({step.effect}); the spec fires {done.row} "
            f"({done.effect})",
        )
        check(
            step.cause == expected.cause,
            f"{what}: cause {step.cause!r}, the spec says {expected.cause!r}",
        )
        check(
            step.duplicate == expected.duplicate,
            f"{what}: duplicate is {step.duplicate}, the spec says {expected.duplicate}",
        )
        consulted = tuple(_snake(name) for name in done.consulted)
        check(
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
        failed, self.build_failed = self.build_failed, False
        commits = meaning.commits and not stale and not failed
        check(
            (result.failure is not None) == (failed and not stale),
            f"{what}: failure is {result.failure!r}, but the build "
            + ("failed" if failed else "did not fail"),
        )
        kinds = [artifact_kind(d) for d in result.drafts]
        has_boundary = "marker" in kinds
        check(
            has_boundary == commits,
            f"{what}: {expected.done.effect} {'commits' if commits else 'commits nothing'}"
            + (" (its build was interrupted)" if stale else "")
            + f", but the drafts {'lack' if commits else 'carry'} a boundary",
        )
        if has_boundary:
            check(
                [d.get("type") for d in result.drafts[-4:-3]] == ["compaction"]
                and kinds[-3:] == ["marker", "boot", "continuation"]
                and not any(kinds[:-3]),
                f"{what}: the boundary is not checkpoint -> marker -> boot -> continuation",
            )
        check(result.stale == stale, f"{what}: stale is {result.stale}, expected {stale}")
        type(self).stale += stale
        check(
            result.continue_ == (commits and meaning.continues),
            f"{what}: continue is {result.continue_} for {expected.done.effect}",
        )
        check(
            result.retry == (commits and meaning.retries),
            f"{what}: retry is {result.retry} for {expected.done.effect}",
        )
        check(
            result.stop == (meaning.stops and (commits or not meaning.commits)),
            f"{what}: stop is {result.stop} for {expected.done.effect}",
        )
        resets = len(self.rt.resets)
        if commits and interrupt is not None and interrupt[1] == AWAIT_POINTS:
            session = self.rt.session
            markers = sum(is_reset_marker(e) for e in session.entries)
            self._interrupt(interrupt[0])
            self.rt.append(result.drafts)
            check(
                sum(is_reset_marker(e) for e in session.entries) == markers
                and len(self.rt.resets) == resets,
                f"{what}: a boundary returned before a lifecycle change ({interrupt[0]}) was "
                "written after it",
            )
            return
        self.rt.append(result.drafts)
        if commits:
            check(len(self.rt.resets) == resets + 1, f"{what}: the written reset is not recorded")
            record = self.rt.resets[-1]
            check(
                record.window_id == result.window_id
                and record.cause == result.cause == expected.cause,
                f"{what}: the reset is recorded as {record}, cause {result.cause!r}; the spec's "
                f"cause is {expected.cause!r}",
            )

    def _append_reply(self, band: str, outcome: str, calls: int) -> dict[str, Any]:
        """Append the model's reply of one turn (usage in ``band``) and return it."""
        message = reply(self.clock, band, outcome, calls)
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
            check(result.is_error, "wipe_memory was served while pi-context is off")
            check(self._mark() == before, "wipe_memory reached the reducer while off")
            return
        event = "tool_request" if self.mirror.has("tool_request") else "request"
        expected = self._mirror(event, windowId=self._window())
        self._stepped(expected, "wipe_memory")
        status = json.loads(result.text).get("status")
        check(
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
        hook = None
        if self.mirror.has("provider_context"):
            # the spec decides at the provider-context hook first (0.34)
            hook = self._mirror(
                "provider_context",
                facts={
                    "windowId": self._window(),
                    "queued": queued,
                    "committed": self._boundary_committed(),
                    "userSinceBoundary": self._user_since_boundary(),
                },
            )
        request = rt.context(queued=queued)
        if hook is not None:
            self._compare(hook, before, "provider_context")
            before += 1
            cancels = self.mirror.meaning(hook.done.effect).cancels
            check(
                request.cancelled == cancels and (not cancels or request.abort),
                f"provider_context: cancelled is {request.cancelled} for {hook.done.effect}",
            )
            if cancels:
                roles = [m.get("role") for m in request.messages]
                check(
                    roles in ([], ["system"]),
                    f"provider_context: a cancelled request carries {roles}, not only the "
                    "system message",
                )
                # the runtime aborted the run itself, as the host action says
                self._stepped(self._mirror("abort"), "the cancelled follow-up's abort")
                self.run_aborted = True
                return
        if request.abort:
            return  # the host does not send a request the runtime refused
        durable = [m for _, ms in projection_entries(rt.session.branch()) for m in ms]
        injected = sum(m.get("customType") == WARNING_TYPE for m in request.messages) > sum(
            m.get("customType") == WARNING_TYPE for m in durable
        )
        window = self._window()
        if injected and self.mirror.has("close_out"):
            check(self.enabled, "the budget warned while pi-context is off")
            expected = self._mirror("close_out", windowId=window, source="automatic")
            self._stepped(expected, "the budget's close-out")
        else:
            check(self._mark() == before, "a request without a new warning stepped the reducer")
        reply = self._append_reply(band, outcome, wipes)
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
    def failing_builder(self) -> None:
        """The next boundary build fails (the host's builder raises): that step commits
        nothing, continues nothing, and the reducer's state stays where the spec put it."""
        self.fail_next_build = True

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
            check(not command.ok and self._mark() == before, f"/wipe-memory ran {why}")
            return
        window = self._window() if not self.mirror.has("manual_reset") else None
        if self.mirror.has("close_out"):
            expected = self._mirror("close_out", windowId=window, source="manual")
        else:
            expected = self._mirror("manual_reset")
        self._compare(expected, before, "/wipe-memory")
        meaning = self.mirror.meaning(expected.done.effect)
        written = rt.session.entries[entries:]
        failed, self.build_failed = self.build_failed, False
        if expected.duplicate:
            check(written == [] and not command.start_turn, "a duplicate /wipe-memory wrote")
        elif meaning.commits and failed:
            check(
                written == [] and not command.start_turn,
                "/wipe-memory wrote after its boundary build failed",
            )
        elif meaning.commits:
            kinds = [e.get("customType") or e.get("type") for e in written]
            check(len(kinds) == 4 and command.ok, f"/wipe-memory wrote {kinds}")
            check(command.start_turn == meaning.continues, "/wipe-memory's turn is undeclared")
            check(rt.resets[-1].cause == expected.cause, "/wipe-memory's cause is not the spec's")
        elif meaning.acknowledges:
            kinds = [e.get("customType") for e in written]
            check(kinds == [WARNING_TYPE] and command.start_turn, f"/wipe-memory wrote {kinds}")

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
                check(self._mark() == before, "/pi-context on stepped the reducer")
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
        check(ours == self.mirror.state, f"state {ours}; the spec's {self.mirror.state}")

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
        check(not doubled, f"windows with more than one boot in view: {doubled}")

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
        check(window not in self.announced, f"memory cleared twice for {window}")
        self.announced.add(window)
        durable = any(
            session.path is not None
            and session.path.exists()
            and any(is_window_boot_entry(e, window) for e in Session.open(session.path).entries)
            for session in self.sessions
        )
        check(durable, f"memory cleared announced for {window} before its boot is durable")

    # --- lifecycle helpers ---------------------------------------------------------------------

    def _transition(self) -> None:
        self.mirror_last_clear = self._mirror("clear")
        self.run_aborted = False

    def _cleared(self, what: str) -> None:
        assert self.mirror_last_clear is not None
        self._stepped(self.mirror_last_clear, what)
