"""The handoff runtime-conformance state machine: host operations on the real runtime (manual
handoffs, context pressure, commands, time, restarts, torn records), each checked against the
mirror as it happens."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff.controller import STAGES
from pi_context.bindings.session import Session
from pi_context.checks.runtime.harness import ConformanceMachine
from pi_context.spec import interpret
from pi_context.statemachine.typed import handoff_0_6_auto as ht
from pi_context.statemachine.typed import typed

from .host import (
    PLANS,
    POLICY,
    RESTORE_FACTS,
    STAGE_MS,
    WINDOW,
    Mirror,
    Plan,
    effective,
    expected_events,
    handoff_spec,
    reported_code,
)
from .world import World, last_record


class HandoffConformance(ConformanceMachine):
    """Operations on the real runtime, each checked against the mirror."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="pi-context-handoff-conf-"))
        self.world = World(self.tmp / "w")
        self.mirror = Mirror(handoff_spec(), {})
        self.mirror.state = interpret.initial_state(self.mirror.spec)
        self.known: set[Path] = set()
        self._restore()

    def teardown(self) -> None:
        self.world.runtime.shutdown()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- mirror bookkeeping -------------------------------------------------------------------

    def _restore(self) -> None:
        """The host (re)opened the current session: replay, on both sides."""
        path = self.world.runtime.session.path
        assert path is not None
        record = self.mirror.records.get(str(path))
        now = self.world.now
        if record is None:
            facts = {
                "enabled": POLICY.enabled,
                "paused": False,
                "cooling": False,
                "attemptsLeft": True,
            }
            self.mirror.attempts, self.mirror.failure = [], None
        else:
            attempts = list(record["attempts"])
            facts = {
                "enabled": record["enabled"],
                "paused": record["paused"],
                "cooling": "failure" not in record
                and bool(attempts)
                and now - attempts[-1] < POLICY.cooldown_ms,
                "attemptsLeft": sum(1 for a in attempts if now - a < POLICY.attempt_window_ms)
                < POLICY.max_attempts,
            }
            self.mirror.attempts, self.mirror.failure = attempts, record.get("failure")
        _effect, row = self.mirror.step({"type": "restore", "facts": facts})
        handoffs = self.world.runtime.handoffs
        handoffs.row = None
        handoffs.sync()
        assert handoffs.row == row, f"the replay fired {handoffs.row}, the spec {row}"
        type(self).rows.add(row)

    def _write(self, path: Path | None) -> None:
        if path is not None:
            self.mirror.records[str(path)] = self.mirror.record()

    def _mirror_run(self, first: dict[str, Any], plan: Plan, automatic: bool) -> list[str]:
        """Feed the mirror a whole handoff; the rows it fires. The records its effects write
        are noted in ``records`` (the source's) and ``dest_record`` (the destination's)."""
        m = self.mirror
        source = self.world.runtime.session.path
        start = self.world.now - STAGE_MS * len(self.stages)  # the clock when it began
        effect, row = m.step(first)
        rows = [row]
        self.dest_record = None
        if effect == "begin-automatic":
            m.attempts.append(start + STAGE_MS)  # taken once preparing has begun
        elif effect != "read-source":
            return rows
        reported = reported_code(plan)
        for event in expected_events(plan, automatic):
            kind, stage = plan
            if kind == "busy" and stage is not None and m.state["handoff"]["stage"] == stage:
                self._mirror_busy(stage)
            verified = event["type"] == "destination_verified" and event["facts"]["ok"]
            if verified and m.state["trigger"] == "automatic":
                stamp = start + STAGE_MS * (STAGES.index("validating") + 1)
                m.attempts[-1], m.failure = stamp, None
            effect, row = m.step(event)
            rows.append(row)
            end = m.state["handoff"]
            code = end.get("code")
            if code == "reported":
                code = reported
            if (
                effect == "create-destination"
                or effect == "send-continuation"
                and m.state["trigger"] == "automatic"
            ):
                self.dest_record = m.record()
            elif effect in ("fail-attempt", "abandon-attempt", "return-from-attempt"):
                m.failure = code
                self._write(source)
            elif effect == "pause-destination":
                m.failure = code
                self.dest_record = m.record()
        return rows

    def _mirror_busy(self, stage: str) -> None:
        """What the runtime heard while ``stage`` ran: a replay once the host is on the
        destination, then a start, pressure and every command — each changes nothing."""
        m = self.mirror
        want: list[str] = []
        if stage in ("validating", "continuing"):
            want.append(m.step({"type": "restore", "facts": dict.fromkeys(RESTORE_FACTS, True)})[1])
        want.append(m.step({"type": "start", "facts": {"available": self.world.model}})[1])
        facts = {"due": True, "available": True, "cooled": True, "attemptsLeft": True}
        want.append(m.step({"type": "pressure", "facts": facts})[1])
        want += [m.step({"type": word})[1] for word in ("enable", "disable", "pause", "resume")]
        got = self.world.nested
        assert got == want, f"while {stage} ran the runtime fired {got}, the spec {want}"
        type(self).rows.update(want)

    # --- operations ---------------------------------------------------------------------------

    plans = st.sampled_from(PLANS)

    @rule(plan=plans)
    def manual_handoff(self, plan: Plan) -> None:
        self._handoff(plan, automatic=False)

    @rule(plan=plans, high=st.sampled_from([True, True, True, False]))
    def pressure(self, plan: Plan, high: bool) -> None:
        self.world.tokens = WINDOW if high else 1_000
        self._handoff(plan, automatic=True)

    def _handoff(self, plan: Plan, automatic: bool) -> None:
        world = self.world
        runtime = world.runtime
        source = runtime.session
        assert source.path is not None
        baseline = source.path.read_bytes()
        cancel = [False]
        options = world.options(plan, cancel)
        if automatic:
            runtime.handoffs.configure(options)
            attempts = self.mirror.attempts
            facts = {
                "due": world.tokens * 100 / WINDOW >= POLICY.pressure_percent,
                "available": world.model,
                "cooled": not attempts or world.now - attempts[-1] >= POLICY.cooldown_ms,
                "attemptsLeft": sum(1 for a in attempts if world.now - a < POLICY.attempt_window_ms)
                < POLICY.max_attempts,
            }
            first: dict[str, Any] = {"type": "pressure", "facts": facts}
            result = asyncio.run(runtime.auto_handoff())
        else:
            first = {"type": "start", "facts": {"available": world.model}}
            result = asyncio.run(runtime.handoff_command(options))
        world.undo_injection(source)
        self.stages = result.stages if result is not None else []
        plan = effective(plan, source.path in world.torn)
        rows = self._mirror_run(first, plan, automatic)
        if result is None:
            assert len(rows) == 1, f"the spec started a handoff the runtime did not: {rows}"
            type(self).rows.update(rows)
            self._check_state()
            self._check_records()
            return
        assert result.rows == rows, f"rows {result.rows}, the spec fires {rows}"
        type(self).rows.update(rows)
        end = self.mirror.state["handoff"]
        assert result.outcome == end["stage"], (result.outcome, end, result.message)
        want = end.get("code")
        if want == "reported":  # without a model nothing ran: the start's own code
            want = reported_code(plan) if world.model else "handoff_unavailable"
        assert result.code == want, (result.code, want, result.message)
        self._check_files(source, baseline, result)

    @rule(word=st.sampled_from(["on", "off", "pause", "pause", "resume", "status"]))
    def command(self, word: str) -> None:
        text = asyncio.run(self.world.runtime.auto_handoff_command(word))
        assert text
        if word == "status":
            return
        event = {"on": "enable", "off": "disable"}.get(word, word)
        effect, row = self.mirror.step({"type": event})
        type(self).rows.add(row)
        if effect == "record-resume":
            self.mirror.attempts, self.mirror.failure = [], None
        if effect in ("record-automatic", "record-resume"):
            self._write(self.world.runtime.session.path)
        self._check_state()
        self._check_records()

    @rule(present=st.booleans())
    def model(self, present: bool) -> None:
        """The host's model is selected, or none is (a handoff is then unavailable)."""
        self.world.select_model(present)

    @rule(ms=st.sampled_from([1_000, 30_000, 61_000, 200_000, 400_000]))
    def time_passes(self, ms: int) -> None:
        self.world.now += ms

    @rule()
    def torn_record(self) -> None:
        """A host died while appending an automatic-handoff record: the open session ends
        in half a record line. The host restarts on it; the torn line is not a record."""
        path = self.world.runtime.session.path
        assert path is not None
        line = json.dumps(
            {"type": "custom", "customType": auto.AUTO_HANDOFF_EVENT, "id": "torn0001",
             "parentId": self.world.runtime.session.leaf_id,
             "data": {"enabled": False, "paused": True, "attempts": [1]}},
        ).encode()  # fmt: skip
        with path.open("ab") as handle:
            handle.write(line[: len(line) // 2])
        self.world.torn.add(path)
        self.restart()

    @rule()
    def restart(self) -> None:
        """The host restarts on the open session: a new runtime, from rest, replays it."""
        self.world.reopen()
        self.mirror.state = interpret.initial_state(self.mirror.spec)
        self._restore()
        self._check_state()

    # --- checks -------------------------------------------------------------------------------

    def _check_state(self) -> None:
        handoffs = self.world.runtime.handoffs
        got = typed(ht.SPEC_ID).state_to_wire(handoffs.state)
        assert got == self.mirror.state, f"runtime state {got}, the spec's {self.mirror.state}"
        assert handoffs.attempts == self.mirror.attempts, (handoffs.attempts, self.mirror.attempts)
        assert handoffs.failure == self.mirror.failure, (handoffs.failure, self.mirror.failure)

    def _check_records(self) -> None:
        for path, want in self.mirror.records.items():
            if Path(path).is_file():
                got = last_record(Path(path))
                assert got == want, f"{path}: record {got}, the spec's effects wrote {want}"

    def _check_files(self, source: Session, baseline: bytes, result: Any) -> None:
        self._check_state()
        assert source.path is not None
        after = source.path.read_bytes()
        moved = after.count(b"one more thing") > baseline.count(b"one more thing")
        assert after.startswith(baseline), "the source was rewritten"
        extra = after[len(baseline) :]
        if baseline and not baseline.endswith(b"\n") and extra.startswith(b"\n"):
            extra = extra[1:]  # the torn line ended, as Pi ends it, before the next append
        for line in extra.splitlines(keepends=True):
            assert line.endswith(b"\n"), "a torn line on the source"
            entry = json.loads(line)
            kinds = ("context-memory-handoff-out", auto.AUTO_HANDOFF_EVENT)
            assert entry.get("customType") in kinds or (moved and entry["type"] == "message"), (
                f"the source gained {entry.get('type')} {entry.get('customType')}"
            )
        handoff = self.mirror.state["handoff"]
        on_destination = handoff["stage"] in ("continuing", "done") or (
            handoff["stage"] in ("failed", "cancelled") and handoff.get("active") == "destination"
        )
        dest_dir = self.world.root / "dest"
        files = set(dest_dir.glob("*.jsonl")) if dest_dir.is_dir() else set()
        new = files - self.known
        if on_destination:
            assert new == {result.destination}, (result.destination, new)
            assert self.world.runtime.session.path == result.destination
            assert self.dest_record is not None
            self.mirror.records[str(result.destination)] = self.dest_record
            self.known.add(result.destination)
        else:
            assert result.destination is None and not new, f"a destination was left: {new}"
            assert self.world.runtime.session is source, "the runtime left the source"
        self._check_records()
