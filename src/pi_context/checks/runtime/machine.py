"""The runtime-conformance state machine: host-level operations on a real ``Runtime`` (a real
session file, a real notes home), each checked against the mirror as it happens."""

from __future__ import annotations

import asyncio
import random

from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from .host import (
    AWAIT_POINTS,
    BANDS,
    CONTEXT_WINDOW,
    INTERRUPTIONS,
    OUTCOME_DRAWS,
    RESERVE,
    check,
)
from .steps import HostSteps


class RuntimeConformance(HostSteps):
    """Host-level operations on a real Runtime, checked step by step against the mirror."""

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
                    "window_id": self._window(),
                    "queued": queued,
                    "committed": self._boundary_committed(),
                    "user_since_boundary": self._user_since_boundary(),
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
        facts = {  # by host fact name, as the runtime gathers them
            "window_id": window,
            "aborted": aborted,
            "overflow": overflow,
            "failed": outcome == "error" or overflow,
            "enabled": self.enabled,
            "queued": queued,
            "automatic_reset_enabled": self.automatic,
            "hard_reserve_due": self.automatic and band == "hard",
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
            "window_id": self._window(),
            "queued": queued,
            "enabled": self.enabled,
            "automatic_reset_enabled": self.automatic,
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

    @rule(prompt=st.sampled_from((None, None, "follow up", "  next task ", " ")))
    def wipe_command(self, prompt: str | None = None) -> None:
        """The user's /wipe-memory: its spec event, then the declared host action (with a
        follow-up prompt, trimmed or blank, where the spec's close-out takes one)."""
        from pi_context.bindings.session.dialect import MANUAL_WIPE, custom_type

        rt = self.rt
        if not rt.control.takes_prompt:
            prompt = None
        before = self._mark()
        entries = len(rt.session.entries)
        saved = rt.session.persisted
        command = asyncio.run(rt.wipe_memory_command(prompt=prompt))
        if not self.enabled or not saved:
            why = "while off" if not self.enabled else "in a session not saved yet"
            check(not command.ok and self._mark() == before, f"/wipe-memory ran {why}")
            return
        window = self._window() if not self.mirror.has("manual_reset") else None
        if self.mirror.has("close_out"):
            given = {} if prompt is None else {"prompt": prompt}
            expected = self._mirror("close_out", windowId=window, source="manual", **given)
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
            closing = custom_type(MANUAL_WIPE, rt.config.dialect)  # the extension's kind for it
            check(kinds == [closing] and command.start_turn, f"/wipe-memory wrote {kinds}")

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
        from pi_context.bindings.session.context import projection_entries
        from pi_context.bindings.session.dialect import BOOT, is_kind

        boots: dict[str, int] = {}
        for _, messages in projection_entries(self.rt.session.branch()):
            for message in messages:
                details = message.get("details")
                if is_kind(message.get("customType"), BOOT) and isinstance(details, dict):
                    window = str(details.get("windowId"))
                    boots[window] = boots.get(window, 0) + 1
        doubled = {window: n for window, n in boots.items() if n > 1}
        check(not doubled, f"windows with more than one boot in view: {doubled}")

    def begin(self) -> None:
        self.start()
        self.check_all()

    def after_operation(self) -> None:
        self.check_all()
