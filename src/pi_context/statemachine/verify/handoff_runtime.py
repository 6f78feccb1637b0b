"""Runtime conformance of the handoff: the real runtime driven against a mirror of the spec.

A hypothesis stateful test drives a real ``Runtime`` (real session files, a real Git work
tree, real destination files) through host-level operations — a manual handoff that succeeds,
fails at any stage or is cancelled at any stage; context pressure with the automatic policy
(an automatic handoff that succeeds, fails, is cancelled or finds its host not ready); the
user's ``/handoff auto on|off|pause|resume``; time passing; the host restarting on the open
session (a replay of its record) — while a mirror, the spec interpreter over
``handoff@0.6-auto``, is fed the facts a host would report. After every operation:

- the rows the runtime fired are the rows the mirror fires, and its state is the mirror's;
- the result's outcome and code are the mirror's end stage and code (a reported code is the
  one the injected failure names);
- every session file holds, as its last automatic-handoff record, exactly the record the
  mirror's effects wrote there (the attempts, the stamp, the failure, paused and enabled);
- the source never gains anything but whole offers and records; a destination file exists
  only for a handoff that reached its continuation, and the runtime is on it exactly then.

The same shape as the reset-control runtime conformance (operations, mirror, per-step checks,
mutants): ``MUTANTS`` are small breaks of the runtime, each of which this check must catch.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from pi_context import faults
from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff import outcomes
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.runtime.budget import Usage
from pi_context.bindings.runtime.handoff import STAGES, HandoffOptions, NotesRequest
from pi_context.bindings.session import Session
from pi_context.spec import interpret, load, spec_path
from pi_context.statemachine.generated.handoff_0_6_auto import wire as hw
from pi_context.statemachine.verify.runtime.mutants import (
    Mutant,
    MutationResult,
    kill,
    patch,
)
from pi_context.statemachine.verify.runtime.run import ConformanceResult

SPEC_ID = "handoff@0.6-auto"
WINDOW = 20_000  # a 5,000-byte relay budget: 30 long untracked names exceed it
POLICY = auto.AutoHandoffPolicy(
    pressure_percent=50.0, cooldown_ms=60_000, max_attempts=2, attempt_window_ms=300_000
)
STAGE_MS = 1_000
# What a failure injected at each stage reports (the stage's own code).
REPORTED = {
    "preparing": "handoff_source_changed",
    "generating": "checkpoint_timeout",
    "quality": "handoff_budget",
    "saving": "stale_scope",
    "not-ready": "handoff_not_ready",
    "unverified": "storage_failed",
}
SUCCESS: dict[str, dict[str, Any]] = {
    "preparing": {"type": "source_read", "facts": {"ok": True}},
    "generating": {"type": "notes_generated", "facts": {"ok": True}},
    "quality": {"type": "quality_checked", "facts": {"ok": True}},
    "saving": {"type": "offer_saved", "facts": {"written": True, "verified": True, "ready": True}},
    "switching": {"type": "destination_created", "facts": {"created": True}},
    "validating": {"type": "destination_verified", "facts": {"ok": True}},
    "continuing": {"type": "continued", "facts": {"ok": True}},
}
FAILURE: dict[str, dict[str, Any]] = {
    "preparing": {"type": "source_read", "facts": {"ok": False}},
    "generating": {"type": "notes_generated", "facts": {"ok": False}},
    "quality": {"type": "quality_checked", "facts": {"ok": False}},
    # the source moves on before the offer is appended: nothing is written
    "saving": {
        "type": "offer_saved",
        "facts": {"written": False, "verified": False, "ready": True},
    },
    "switching": {"type": "destination_created", "facts": {"created": False}},
    "validating": {"type": "destination_verified", "facts": {"ok": False}},
    "continuing": {"type": "continued", "facts": {"ok": False}},
}
UNVERIFIED = {"type": "offer_saved", "facts": {"written": True, "verified": False, "ready": True}}
NOT_READY = {"type": "offer_saved", "facts": {"written": True, "verified": True, "ready": False}}
Plan = tuple[str, str | None]
"""("ok", None) | ("not-ready", None) | ("fail", stage) | ("cancel", stage)."""
PLANS: tuple[Plan, ...] = (
    ("ok", None),
    ("not-ready", None),
    ("unverified", "saving"),
    ("busy", "generating"),
    ("busy", "continuing"),
    *((kind, stage) for kind in ("fail", "cancel") for stage in STAGES),
)
"""Every way a handoff can go: success; not ready (automatic); an offer the disk garbled;
requests made while it runs; a failure at each stage; a cancel at each stage."""
MODEL = ModelInfo("scripted-1", "scripted", WINDOW)
RESTORE_FACTS = ("enabled", "paused", "cooling", "attemptsLeft")
UNREACHABLE = {
    "cancel.idle": "a host polls its cancel only while a handoff runs",
}
"""Rows no runtime run can fire, and why (the strays, reports for another stage, too)."""


@cache
def _spec() -> Any:
    return load(spec_path(SPEC_ID))


def _generator(request: NotesRequest) -> list[dict[str, Any]]:
    first = next(r for r in request.records if r.role != "summary")
    return [
        {
            "key": "goal",
            "kind": "goal",
            "text": "Port the parser to Rust",
            "sourceIds": [first.id],
            "inference": False,
            "status": "active",
        }
    ]


@dataclass
class Mirror:
    """The spec, stepped by the interpreter, plus the records its effects wrote."""

    spec: Any
    state: dict[str, Any]
    attempts: list[int] = field(default_factory=list)
    failure: str | None = None
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        status = self.state["automatic"]
        out: dict[str, Any] = {
            "enabled": status != "off",
            "paused": status == "paused",
            "attempts": self.attempts[-auto.MAX_KEPT_ATTEMPTS :],
        }
        if self.failure is not None:
            out["failure"] = self.failure
        return out

    def step(self, event: dict[str, Any]) -> tuple[str, str]:
        done = interpret.step(self.spec, self.state, event)
        self.state = done.state
        return done.effect, done.row


class World:
    """Real files for one run: a Git work tree, a sessions directory and the runtime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "project"
        self.cwd.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.cwd)], check=True)
        for i in range(30):  # untracked files that only the quality failure shows to git
            (self.cwd / f"{i:02d}-{'untracked-file-with-a-long-name-' * 6}.txt").write_text("x")
        self.exclude = self.cwd / ".git" / "info" / "exclude"
        self.exclude.parent.mkdir(parents=True, exist_ok=True)
        self.exclude.write_text("*.txt\n")
        self.sessions = root / "sessions"
        self.restore: dict[str, Any] = {}
        self.model = True
        """Whether the host has a model selected (without one a handoff is unavailable)."""
        self.nested: list[str] = []
        """Rows the runtime fired for requests made while a handoff ran."""
        self.torn: set[Path] = set()
        """Session files holding a torn line (a host died mid-append)."""
        self.now = 1_800_000_000_000
        self.tokens = 1_000
        source = Session.create(self.cwd, self.sessions)
        source.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": "Port the parser."}],
                "timestamp": 1,
            }
        )
        source.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "On it."}],
                "stopReason": "stop",
                "timestamp": 2,
            }
        )
        self.runtime = self._runtime(source)

    def _runtime(self, session: Session) -> Runtime:
        runtime = Runtime(
            session,
            RuntimeConfig(
                notes_home=self.root / "notes",
                cwd=self.cwd,
                agent_dir=self.root / "agent",
                model=MODEL if self.model else None,
                usage=lambda: Usage(self.tokens, WINDOW),
                enabled=False,
            ),
        )
        runtime.handoffs.clock = lambda: self.now
        runtime.handoffs.configure(None, POLICY, self.root / "logs")
        return runtime

    def select_model(self, present: bool) -> None:
        self.model = present
        self.runtime.model_select(MODEL if present else None)

    async def interject(self, options: HandoffOptions) -> None:
        """While a stage runs: the host replays, asks for a handoff, feels pressure and sends
        every automatic-handoff command (each must be refused or change nothing)."""
        handoffs = self.runtime.handoffs
        handoffs.configure(options)
        rows = self.nested = []
        handoffs.row = None
        handoffs.sync()
        if handoffs.row is not None:
            rows.append(handoffs.row)
        refused = await self.runtime.handoff_command(options)
        assert refused.refused and refused.code == outcomes.BUSY_CODE, refused
        rows += refused.rows
        assert await self.runtime.auto_handoff() is None
        rows.append(str(handoffs.row))
        for word in ("on", "off", "pause", "resume"):
            await self.runtime.auto_handoff_command(word)
            rows.append(str(handoffs.row))

    def reopen(self) -> None:
        path = self.runtime.session.path
        assert path is not None
        self.runtime.shutdown()
        self.runtime = self._runtime(Session.open(path))

    def options(self, plan: Plan, cancel: list[bool]) -> HandoffOptions:
        kind, stage = plan
        runtime = self.runtime
        source = runtime.session
        saved: dict[str, Any] = {}

        def on_stage(name: str) -> None:
            self.now += STAGE_MS  # time passes in every stage (the stamp is not the start)
            if kind == "cancel" and name == stage:
                cancel[0] = True
            if kind == "unverified" and name == stage:  # the disk garbles the offer's write
                saved["armed"] = True
                saved["corrupt"] = faults.FaultPlan(corrupt_at=1)
                faults.arm(saved["corrupt"])
            if kind != "fail" or name != stage:
                return
            if name == "preparing":  # one byte of the branch changes on disk, in place
                assert source.path is not None
                data = source.path.read_bytes()
                at = data.rindex(b'"timestamp":"') + len(b'"timestamp":"') + 3
                saved["tamper"] = (source.path, at, data[at : at + 1])
                with source.path.open("r+b") as handle:
                    handle.seek(at)
                    handle.write(b"x")  # the leaf's timestamp: the branch digest changes
            elif name == "quality":
                self.exclude.write_text("")
            elif name == "saving":  # the source moves on: stale_scope before the append
                source.append_message({"role": "user", "content": "one more thing", "timestamp": 3})
            elif name == "switching":  # the disk fails the destination's one write
                saved["armed"] = True
                faults.arm(faults.FaultPlan(fail_at=1, sticky=False))

        async def generator(request: NotesRequest) -> list[dict[str, Any]]:
            if kind == "fail" and stage == "generating":
                raise HandoffError("checkpoint_timeout", "the model did not answer in time")
            if kind == "busy" and stage == "generating":
                await self.interject(options)
            return _generator(request)

        def switch(session: Session, reason: str) -> bool:
            runtime.session_start(reason, session)
            if kind == "fail" and stage == "validating" and reason == "new":
                raise HandoffError("storage_failed", "the destination cannot be opened")
            return True

        async def send(dest: Session, text: str) -> None:
            if kind == "fail" and stage == "continuing":
                raise RuntimeError("provider unavailable")
            if kind == "busy" and stage == "continuing":
                await self.interject(options)
            dest.append_message({"role": "user", "content": text, "timestamp": 4})

        def assert_ready() -> None:
            if kind == "not-ready":
                raise HandoffError("handoff_not_ready", "a user message is waiting")

        self.restore = saved
        options = HandoffOptions(
            generator=generator,
            session_dir=self.root / "dest",
            cancelled=lambda: cancel[0],
            on_stage=on_stage,
            switch=switch,
            send=send,
            assert_ready=assert_ready,
        )
        return options

    def undo_injection(self, source: Session) -> None:
        """Undo what ``options`` injected (what the runtime appended since stays)."""
        saved = self.restore
        if "tamper" in saved:
            path, at, byte = saved["tamper"]
            with path.open("r+b") as handle:
                handle.seek(at)
                handle.write(byte)
        if saved.get("armed"):
            faults.arm(None)
        if "corrupt" in saved:
            assert source.path is not None
            faults.repair(saved["corrupt"], source.path)
        self.exclude.write_text("*.txt\n")
        self.restore = {}


def expected_events(plan: Plan, automatic: bool) -> list[dict[str, Any]]:
    """The reports a host makes for ``plan`` after the start (success until the planned end)."""
    kind, stage = plan
    events: list[dict[str, Any]] = []
    for name in STAGES:
        if kind == "cancel" and name == stage:
            return [*events, {"type": "cancel"}]
        if kind in ("fail", "torn") and name == stage:
            return [*events, FAILURE[name]]
        if kind == "unverified" and name == stage:
            return [*events, UNVERIFIED]
        if kind == "not-ready" and automatic and name == "saving":
            return [*events, NOT_READY]
        events.append(SUCCESS[name])
    return events


def reported_code(plan: Plan) -> str | None:
    """The code a ``reported`` ending of ``plan`` carries (the failure's own)."""
    kind, stage = plan
    if kind == "torn":  # the seed reads the source strictly: an invalid line fails the read
        return "handoff_source_unavailable"
    if kind in ("not-ready", "unverified"):
        return REPORTED[kind]
    return REPORTED.get(stage or "")


def effective(plan: Plan, torn: bool) -> Plan:
    """What ``plan`` comes to on a source that holds a torn line: the source read fails
    (only a cancel polled before it comes first)."""
    if not torn or plan == ("cancel", STAGES[0]):
        return plan
    return ("torn", STAGES[0])


def _last_record(path: Path) -> dict[str, Any] | None:
    found = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("customType") == auto.AUTO_HANDOFF_EVENT and auto.parse_record(
            entry.get("data")
        ):
            found = entry["data"]
    return found


class HandoffConformance(RuleBasedStateMachine):
    """Operations on the real runtime, each checked against the mirror."""

    rows: set[str] = set()
    """Rows of the spec the runtime fired (over every run of this class)."""
    runs = 0

    def __init__(self) -> None:
        super().__init__()
        type(self).runs += 1
        self.tmp = Path(tempfile.mkdtemp(prefix="pi-context-handoff-conf-"))
        self.world = World(self.tmp / "w")
        self.mirror = Mirror(_spec(), {})
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
        got = hw.state_to_wire(handoffs.state)
        assert got == self.mirror.state, f"runtime state {got}, the spec's {self.mirror.state}"
        assert handoffs.attempts == self.mirror.attempts, (handoffs.attempts, self.mirror.attempts)
        assert handoffs.failure == self.mirror.failure, (handoffs.failure, self.mirror.failure)

    def _check_records(self) -> None:
        for path, want in self.mirror.records.items():
            if Path(path).is_file():
                got = _last_record(Path(path))
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


# --- named scenarios: every failure and cancel point, and the automatic rules ------------------

Op = tuple[str, dict[str, Any]]


def _manual(kind: str, stage: str | None = None) -> Op:
    return "manual_handoff", {"plan": (kind, stage)}


def _pressure(kind: str = "ok", stage: str | None = None, high: bool = True) -> Op:
    return "pressure", {"plan": (kind, stage), "high": high}


def _command(word: str) -> Op:
    return "command", {"word": word}


def _wait(ms: int) -> Op:
    return "time_passes", {"ms": ms}


_RESTART: Op = ("restart", {})
_TORN: Op = ("torn_record", {})


def _points() -> tuple[tuple[str, tuple[Op, ...]], ...]:
    """Every plan (each failure point, each cancel point, not ready, success) as a manual and
    as an automatic handoff, each followed by a handoff that must work again."""
    out: list[tuple[str, tuple[Op, ...]]] = []
    for kind, stage in PLANS:
        label = kind if stage is None else f"{kind} at {stage}"
        out.append((f"manual, {label}", (_manual(kind, stage), _manual("ok"))))
        after: tuple[Op, ...] = (_command("resume"), _wait(400_000), _pressure())
        out.append((f"automatic, {label}", (_pressure(kind, stage), *after)))
    return tuple(out)


SCENARIOS: tuple[tuple[str, tuple[Op, ...]], ...] = (
    *_points(),
    ("calm pressure starts nothing", (_pressure(high=False), _pressure())),
    ("without a model a handoff is unavailable",
     (("model", {"present": False}), _manual("ok"), _pressure(), _pressure(high=False),
      ("model", {"present": True}), _manual("ok"))),
    ("the attempt limit, then resume",
     (_pressure("fail", "generating"), _pressure("fail", "quality"), _pressure(), _pressure(),
      _command("resume"), _pressure())),
    ("attempts age out of the window",
     (_pressure("fail", "generating"), _pressure("fail", "quality"), _pressure(),
      _wait(400_000), _pressure())),
    ("the cooldown starts only after a verified destination",
     (_pressure("fail", "validating"), _pressure(), _pressure(), _wait(30_000), _pressure(),
      _wait(61_000), _pressure())),
    ("a pause holds pressure; resume lifts it",
     (_command("pause"), _pressure(), _command("pause"), _command("resume"), _pressure())),
    ("off, replayed; on again",
     (_command("off"), _pressure(), _RESTART, _pressure(), _command("on"), _pressure())),
    ("a failed continuation pauses the destination, replayed",
     (_pressure("fail", "continuing"), _RESTART, _pressure(), _command("resume"), _pressure())),
    ("a cancelled automatic handoff pauses, replayed",
     (_pressure("cancel", "generating"), _RESTART, _pressure(), _command("resume"),
      _pressure())),
    ("cooling, replayed, then cooled",
     (_pressure(), _RESTART, _pressure(), _wait(61_000), _RESTART, _pressure())),
    ("exhausted, replayed, then aged out",
     (_pressure("fail", "saving"), _pressure("fail", "preparing"), _RESTART, _pressure(),
      _wait(400_000), _RESTART, _pressure())),
    ("a torn record is not a record",
     (_command("pause"), _TORN, _pressure(), _command("resume"), _TORN, _pressure())),
    ("commands while nothing runs, and status",
     (_command("status"), _command("on"), _command("off"), _command("off"), _command("pause"),
      _command("on"), _command("resume"), _command("pause"), _command("status"))),
    ("a manual handoff never touches the automatic state",
     (_command("pause"), _manual("ok"), _pressure(), _command("resume"),
      _manual("fail", "continuing"), _pressure())),
)  # fmt: skip
"""Runs every conformance check starts with (named, so a failure says which), before the
randomly generated runs: between them every failure and cancel point of both triggers."""


def run_scenarios(machine: type[HandoffConformance] = HandoffConformance) -> str | None:
    """Run every scenario on a fresh machine; the first failure, named, or None."""
    for name, ops in SCENARIOS:
        state = machine()
        try:
            for rule_name, arguments in ops:
                getattr(state, rule_name)(**arguments)
        except Exception as exc:  # noqa: BLE001 - a mismatch, or the runtime itself failing
            return f"scenario {name!r}: {type(exc).__name__}: {exc}"
        finally:
            state.teardown()
    return None


# --- running it ----------------------------------------------------------------------------------


def run_conformance(
    *, examples: int = 25, steps: int = 14, shrink: bool = True, scenarios: bool = True
) -> ConformanceResult:
    """The named scenarios, then ``examples`` generated runs of up to ``steps`` host
    operations each (derandomized: the same runs every time)."""
    machine: type[HandoffConformance] = type(
        "HandoffConformanceRun", (HandoffConformance,), {"rows": set(), "runs": 0}
    )
    config = settings(
        max_examples=max(1, examples),
        stateful_step_count=steps,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ())),
        print_blob=False,
    )
    started = time.perf_counter()
    failure = run_scenarios(machine) if scenarios else None
    if failure is None and examples > 0:
        try:
            run_state_machine_as_test(machine, settings=config)
        except Exception as exc:  # noqa: BLE001 - a mismatch, or the runtime failing: findings
            failure = f"{type(exc).__name__}: {exc}"
    return ConformanceResult(
        SPEC_ID, machine.runs, failure, time.perf_counter() - started, frozenset(machine.rows)
    )


def unfired_rows(rows: frozenset[str]) -> list[str]:
    """Rows of the spec no run fired, but the strays (reports for another stage, which a
    runtime that steps through the spec never makes)."""
    return [
        r.id
        for r in _spec().rows
        if r.id not in rows and not r.id.endswith(".stray") and r.id not in UNREACHABLE
    ]


# --- runtime mutants -----------------------------------------------------------------------------


def _mutants() -> tuple[Mutant, ...]:
    from pi_context.bindings.runtime import handoff as controller
    from pi_context.bindings.runtime import handoff_run as run

    original_verify = run.HandoffRun.verify_destination
    real_restore = auto.restore_facts

    async def unguarded_switch(self: Any) -> Any:
        await self._switch(self.destination, "new")  # the validation's switch, unguarded
        return await original_verify(self)

    def no_record(self: Any, session: Any, failure: Any) -> None:
        self.owner.failure = failure

    def no_stamp(self: Any, now: int) -> None:
        self.failure = None

    def unpaused(record: Any, policy: Any, now: int) -> auto.RestoreFacts:
        facts = real_restore(record, policy, now)
        return auto.RestoreFacts(facts.enabled, False, facts.cooling, facts.attempts_left)

    async def no_return(self: Any) -> None:
        self.result.returned = None

    def stage_code(stage: str, code: str | None, error: BaseException | None) -> str | None:
        return None if stage == outcomes.DONE else stage

    return (
        Mutant(
            "validation-unguarded",
            "the destination's switch runs outside the stage's guard",
            patch(run.HandoffRun, "verify_destination", lambda _original: unguarded_switch),
        ),
        Mutant(
            "cooldown-ignored",
            "pressure reads the cooldown as always over",
            patch(controller._Pressure, "cooled", lambda _original: property(lambda self: True)),
        ),
        Mutant(
            "attempts-unlimited",
            "pressure reads attempts as always left",
            patch(
                controller._Pressure, "attempts_left", lambda _original: property(lambda self: True)
            ),
        ),
        Mutant(
            "attempt-not-taken",
            "an automatic handoff takes no attempt",
            patch(controller.Handoffs, "take_attempt", lambda _original: lambda self: None),
        ),
        Mutant(
            "stamp-dropped",
            "the verified destination's stamp is not kept in memory",
            patch(controller.Handoffs, "stamp", lambda _original: no_stamp),
        ),
        Mutant(
            "records-unwritten",
            "attempt, pause and command records are not written",
            patch(run.HandoffRun, "_record_on", lambda _original: no_record),
        ),
        Mutant(
            "code-from-stage",
            "the result code is the end stage's name",
            patch(outcomes, "result_code", lambda _original: stage_code),
        ),
        Mutant(
            "cancel-ignored",
            "the host's cancel is never polled",
            patch(run.HandoffRun, "check_cancel", lambda _original: lambda self: None),
        ),
        Mutant(
            "ready-ignored",
            "assertReady is never asked",
            patch(run._Ready, "ready", lambda _original: property(lambda self: True)),
        ),
        Mutant(
            "replay-unpaused",
            "a replay ignores the record's pause",
            patch(auto, "restore_facts", lambda _original: unpaused),
        ),
        Mutant(
            "destination-left",
            "an unfinished or unverified destination is not removed",
            patch(run.HandoffRun, "_remove_created", lambda _original: lambda self: None),
        ),
        Mutant(
            "no-return",
            "a failed or cancelled validation does not switch back to the source",
            patch(run.HandoffRun, "_return", lambda _original: no_return),
        ),
    )


@cache
def mutants() -> tuple[Mutant, ...]:
    """Every handoff runtime mutant (built on first use: building them imports the runtime)."""
    return _mutants()


def kill_mutants(
    *, examples: int = 10, steps: int = 14, only: tuple[str, ...] = ()
) -> MutationResult:
    """Run the conformance check against each handoff runtime mutant (no shrinking: the
    first mismatch kills it)."""
    return kill(
        SPEC_ID,
        mutants(),
        lambda: run_conformance(examples=examples, steps=steps, shrink=False),
        only=only,
    )


RUNTIME_EXAMPLES = 25
"""Random runs in ``pi-context verify`` (after the named scenarios)."""
MUTANT_EXAMPLES = 5
"""Random runs a mutant gets after the scenarios (most die in a scenario)."""


def unfired_failures(result: ConformanceResult) -> list[str]:
    """``pi-context verify``'s extra check: every row but the strays fired."""
    unfired = unfired_rows(result.rows)
    return [f"handoff runtime conformance never fired: {', '.join(unfired)}"] if unfired else []
