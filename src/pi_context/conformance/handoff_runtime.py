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
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.runtime.budget import Usage
from pi_context.bindings.runtime.handoff import STAGES, HandoffOptions, NotesRequest
from pi_context.bindings.session import Session, writes
from pi_context.spec import interpret, load, spec_path
from pi_context.statemachine.generated.handoff_0_6_auto import wire as hw

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
NOT_READY = {"type": "offer_saved", "facts": {"written": True, "verified": True, "ready": False}}
Plan = tuple[
    str, str | None
]  # ("ok", None) | ("fail", stage) | ("cancel", stage) | ("not-ready", None)


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
                model=ModelInfo("scripted-1", "scripted", WINDOW),
                usage=lambda: Usage(self.tokens, WINDOW),
                enabled=False,
            ),
        )
        runtime.handoffs.clock = lambda: self.now
        runtime.handoffs.configure(None, POLICY, self.root / "logs")
        return runtime

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
                writes.arm(writes.FaultPlan(fail_at=1, sticky=False))

        def generator(request: NotesRequest) -> list[dict[str, Any]]:
            if kind == "fail" and stage == "generating":
                raise HandoffError("checkpoint_timeout", "the model did not answer in time")
            return _generator(request)

        def switch(session: Session, reason: str) -> bool:
            runtime.session_start(reason, session)
            if kind == "fail" and stage == "validating" and reason == "new":
                raise HandoffError("storage_failed", "the destination cannot be opened")
            return True

        def send(dest: Session, text: str) -> None:
            if kind == "fail" and stage == "continuing":
                raise RuntimeError("provider unavailable")
            dest.append_message({"role": "user", "content": text, "timestamp": 4})

        def assert_ready() -> None:
            if kind == "not-ready":
                raise HandoffError("handoff_not_ready", "a user message is waiting")

        self.restore = saved
        return HandoffOptions(
            generator=generator,
            session_dir=self.root / "dest",
            cancelled=lambda: cancel[0],
            on_stage=on_stage,
            switch=switch,
            send=send,
            assert_ready=assert_ready,
        )

    def undo_injection(self, source: Session) -> None:
        """Undo what ``options`` injected (what the runtime appended since stays)."""
        saved = self.restore
        if "tamper" in saved:
            path, at, byte = saved["tamper"]
            with path.open("r+b") as handle:
                handle.seek(at)
                handle.write(byte)
        if saved.get("armed"):
            writes.arm(None)
        self.exclude.write_text("*.txt\n")
        self.restore = {}


def expected_events(plan: Plan, automatic: bool) -> list[dict[str, Any]]:
    """The reports a host makes for ``plan`` after the start (success until the planned end)."""
    kind, stage = plan
    events: list[dict[str, Any]] = []
    for name in STAGES:
        if kind == "cancel" and name == stage:
            return [*events, {"type": "cancel"}]
        if kind == "fail" and name == stage:
            return [*events, FAILURE[name]]
        if kind == "not-ready" and automatic and name == "saving":
            return [*events, NOT_READY]
        events.append(SUCCESS[name])
    return events


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

    def __init__(self) -> None:
        super().__init__()
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
        self.mirror.step({"type": "restore", "facts": facts})
        self.world.runtime.handoffs.sync()

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
        reported = REPORTED["not-ready"] if plan[0] == "not-ready" else REPORTED.get(plan[1] or "")
        for event in expected_events(plan, automatic):
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

    # --- operations ---------------------------------------------------------------------------

    plans = st.one_of(
        st.sampled_from([("ok", None), ("ok", None), ("not-ready", None)]),
        st.tuples(st.sampled_from(["fail", "cancel"]), st.sampled_from(STAGES)),
    )

    @initialize()
    def start(self) -> None:
        pass

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
                "available": True,
                "cooled": not attempts or world.now - attempts[-1] >= POLICY.cooldown_ms,
                "attemptsLeft": sum(1 for a in attempts if world.now - a < POLICY.attempt_window_ms)
                < POLICY.max_attempts,
            }
            first: dict[str, Any] = {"type": "pressure", "facts": facts}
            result = asyncio.run(runtime.auto_handoff())
        else:
            first = {"type": "start", "facts": {"available": True}}
            result = asyncio.run(runtime.handoff_command(options))
        world.undo_injection(source)
        self.stages = result.stages if result is not None else []
        rows = self._mirror_run(first, plan, automatic)
        if result is None:
            assert len(rows) == 1, f"the spec started a handoff the runtime did not: {rows}"
            self._check_state()
            self._check_records()
            return
        assert result.rows == rows, f"rows {result.rows}, the spec fires {rows}"
        end = self.mirror.state["handoff"]
        assert result.outcome == end["stage"], (result.outcome, end, result.message)
        want = end.get("code")
        if want == "reported":
            want = REPORTED["not-ready"] if plan[0] == "not-ready" else REPORTED[plan[1] or ""]
        assert result.code == want, (result.code, want, result.message)
        self._check_files(source, baseline, result)

    @rule(word=st.sampled_from(["on", "off", "pause", "pause", "resume", "status"]))
    def command(self, word: str) -> None:
        text = asyncio.run(self.world.runtime.auto_handoff_command(word))
        assert text
        if word == "status":
            return
        event = {"on": "enable", "off": "disable"}.get(word, word)
        effect, _row = self.mirror.step({"type": event})
        if effect == "record-resume":
            self.mirror.attempts, self.mirror.failure = [], None
        if effect in ("record-automatic", "record-resume"):
            self._write(self.world.runtime.session.path)
        self._check_state()
        self._check_records()

    @rule(ms=st.sampled_from([1_000, 30_000, 61_000, 200_000, 400_000]))
    def time_passes(self, ms: int) -> None:
        self.world.now += ms

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
        moved = b"one more thing" in after and b"one more thing" not in baseline
        assert after.startswith(baseline), "the source was rewritten"
        for line in after[len(baseline) :].splitlines(keepends=True):
            assert line.endswith(b"\n"), "a torn line on the source"
            entry = json.loads(line)
            kinds = ("context-memory-handoff-out", auto.AUTO_HANDOFF_EVENT)
            assert entry.get("customType") in kinds or (moved and entry["type"] == "message")
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


@dataclass(frozen=True)
class Mutant:
    name: str
    why: str
    apply: Callable[[], AbstractContextManager[None]]


def _patch(target: Any, name: str, value: Any) -> Callable[[], AbstractContextManager[None]]:
    @contextmanager
    def patched() -> Iterator[None]:
        old = getattr(target, name)
        setattr(target, name, value)
        try:
            yield
        finally:
            setattr(target, name, old)

    return patched


def _mutants() -> list[Mutant]:
    from pi_context.bindings.handoff import outcomes
    from pi_context.bindings.runtime import handoff as controller
    from pi_context.bindings.runtime import handoff_run as run

    async def unguarded_switch(self: Any) -> Any:
        dest = self.destination
        await self._switch(dest, "new")  # the validation's switch outside the guard
        return await original_verify(self)

    original_verify = run.HandoffRun.verify_destination

    def no_record(self: Any, session: Any, failure: Any) -> None:
        self.owner.failure = failure

    def no_stamp(self: Any, now: int) -> None:
        self.failure = None

    return [
        Mutant(
            "validation-unguarded",
            "the destination's switch runs outside the stage's guard",
            _patch(run.HandoffRun, "verify_destination", unguarded_switch),
        ),
        Mutant(
            "cooldown-ignored",
            "pressure reads the cooldown as always over",
            _patch(controller._Pressure, "cooled", property(lambda self: True)),
        ),
        Mutant(
            "attempts-unlimited",
            "pressure reads attempts as always left",
            _patch(controller._Pressure, "attempts_left", property(lambda self: True)),
        ),
        Mutant(
            "attempt-not-taken",
            "an automatic handoff takes no attempt",
            _patch(controller.Handoffs, "take_attempt", lambda self: None),
        ),
        Mutant(
            "stamp-dropped",
            "the verified destination's stamp is not kept in memory",
            _patch(controller.Handoffs, "stamp", no_stamp),
        ),
        Mutant(
            "records-unwritten",
            "attempt, pause and command records are not written",
            _patch(run.HandoffRun, "_record_on", no_record),
        ),
        Mutant(
            "code-from-stage",
            "the result code is the end stage's name",
            _patch(
                outcomes,
                "result_code",
                lambda stage, code, error: None if stage == "done" else stage,
            ),
        ),
        Mutant(
            "cancel-ignored",
            "the host's cancel is never polled",
            _patch(run.HandoffRun, "check_cancel", lambda self: None),
        ),
        Mutant(
            "ready-ignored",
            "assertReady is never asked",
            _patch(run._Ready, "ready", property(lambda self: True)),
        ),
        Mutant(
            "replay-unpaused",
            "a replay ignores the record's pause",
            _patch(
                auto,
                "restore_facts",
                (
                    lambda real: (
                        lambda record, policy, now: auto.RestoreFacts(
                            real(record, policy, now).enabled,
                            False,
                            real(record, policy, now).cooling,
                            real(record, policy, now).attempts_left,
                        )
                    )
                )(auto.restore_facts),
            ),
        ),
    ]


MUTANTS = _mutants


def run_conformance(examples: int = 25, steps: int = 12, seed: int | None = 0) -> None:
    """Run the stateful check (raises on the first disagreement)."""
    config = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=seed is not None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate] if seed is not None else list(Phase),
    )
    run_state_machine_as_test(HandoffConformance, settings=config)


@dataclass
class MutantReport:
    killed: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        total = len(self.killed) + len(self.survived)
        return len(self.killed) / total if total else 1.0


def mutation_run(examples: int = 25, steps: int = 12) -> MutantReport:
    report = MutantReport()
    for mutant in MUTANTS():
        with mutant.apply():
            try:
                run_conformance(examples, steps)
            except Exception:  # noqa: BLE001 - any disagreement kills the mutant
                report.killed.append(mutant.name)
                continue
        report.survived.append(mutant.name)
    return report
