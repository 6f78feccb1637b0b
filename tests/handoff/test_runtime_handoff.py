"""``/handoff`` in the runtime: the full lifecycle, and failure or cancellation at every stage
(and at every cancellation poll) leaving the source byte-identical but for a verified offer and
never a destination that claims to be complete."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.handoff.controller import (
    CONTINUATION,
    STAGES,
    HandoffOptions,
    HandoffResult,
    NotesRequest,
    git_status,
    touched_files,
)
from pi_context.bindings.handoff.durability import verify_persisted_memory
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.relay import HANDOFF_OUT, inherited_records, receipt
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.session import Session


def scripted_generator(request: NotesRequest) -> list[dict[str, Any]]:
    """A deterministic 'model': a goal and a constraint citing the first user message."""
    first_user = next(r.id for r in request.records if r.role == "user")
    return [
        {
            "key": "goal",
            "kind": "goal",
            "text": "Port the parser to Rust",
            "sourceIds": [first_user],
            "inference": False,
            "status": "active",
        },
        {
            "key": "public-api",
            "kind": "constraint",
            "text": "Never touch the public API",
            "sourceIds": [first_user],
            "inference": False,
            "status": "active",
        },
    ]


@dataclass
class World:
    root: Path
    cwd: Path
    sessions: Path
    dest_dir: Path
    runtime: Runtime
    source: Session
    polls: int = 0
    cancel_at_poll: int | None = None
    cancel_stage: str | None = None
    cancelling: bool = False
    hooks: dict[str, Callable[[World], None]] = field(default_factory=dict)
    baseline: bytes = b""

    @property
    def source_path(self) -> Path:
        assert self.source.path is not None
        return self.source.path

    def cancelled(self) -> bool:
        self.polls += 1
        if self.cancel_at_poll is not None and self.polls > self.cancel_at_poll:
            self.cancelling = True
        return self.cancelling

    def on_stage(self, stage: str) -> None:
        if stage == self.cancel_stage:
            self.cancelling = True
        hook = self.hooks.get(stage)
        if hook is not None:
            hook(self)

    def options(self, **over: Any) -> HandoffOptions:
        base: dict[str, Any] = {
            "generator": scripted_generator,
            "session_dir": self.dest_dir,
            "cancelled": self.cancelled,
            "on_stage": self.on_stage,
        }
        base.update(over)
        return HandoffOptions(**base)

    def run(self, **over: Any) -> HandoffResult:
        self.baseline = self.source_path.read_bytes()
        return asyncio.run(self.runtime.handoff_command(self.options(**over)))


def make_world(root: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    agent, cwd = root / "agent", root / "project"
    agent.mkdir(parents=True)
    cwd.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    subprocess.run(["git", "init", "-q", "-b", "main", str(cwd)], check=True)
    (cwd / "parser.py").write_text("def parse(): ...\n")
    sessions = root / "sessions"
    source = Session.create(cwd, sessions)
    runtime = Runtime(
        source,
        RuntimeConfig(
            notes_home=root / "notes",
            cwd=cwd,
            agent_dir=agent,
            model=ModelInfo("scripted-1", "scripted", 200_000),
        ),
    )
    runtime.session_start("startup")
    source.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Port the parser to Rust. Never touch the public API."}
            ],
            "timestamp": 1,
        }
    )
    source.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading it."},
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": {"path": "parser.py"},
                },
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}},
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
        }
    )
    source.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "def parse(): ..."}],
            "isError": False,
            "timestamp": 3,
        }
    )
    return World(root, cwd, sessions, root / "dest", runtime, source)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return make_world(tmp_path, monkeypatch)


def test_handoff_completes(world: World) -> None:
    result = world.run()
    assert result.ok and result.code is None, result.message
    assert result.stages == list(STAGES)
    dest = world.runtime.session
    assert dest is not world.source and dest.path == result.destination
    assert dest.header["parentSession"] == str(world.source_path)
    # the source gained exactly the offer, verified, and it is the source's latest entry
    after = world.source_path.read_bytes()
    assert after.startswith(world.baseline)
    [offer_line] = after[len(world.baseline) :].splitlines()
    offer = json.loads(offer_line)
    assert offer["customType"] == HANDOFF_OUT and offer["data"] == result.packet
    verify_persisted_memory(world.source.branch(), world.source_path)
    # the destination: relay message, receipt, imported notes, continuation; all on disk
    reopened = Session.open(dest.path)
    types = [e.get("customType") or e["message"]["role"] for e in reopened.branch()]
    assert types[:3] == [
        "context-memory-relay",
        "context-memory-handoff-in",
        "context-memory-state-v2",
    ]
    assert types[-1] == "user"
    assert reopened.branch()[-1]["message"]["content"][0]["text"] == CONTINUATION
    records = inherited_records(reopened, require_latest_offer=True)
    assert {"user", "assistant", "toolResult"} <= {r.role for r in records}
    assert receipt(reopened)["offerId"] == offer["id"]
    assert result.packet is not None
    assert result.packet["workspace"]["files"] == ["parser.py"]
    assert result.packet["workspace"]["git"].startswith("## ")
    assert result.quality is not None and result.quality.constraints == 1
    state = next(e for e in reopened.branch() if e.get("customType") == "context-memory-state-v2")
    relay_id = reopened.branch()[0]["id"]
    assert all(n["sourceIds"] == [relay_id] and n["inference"] for n in state["data"]["notes"])


def test_second_handoff_from_the_destination(world: World) -> None:
    assert world.run().ok
    world.source = world.runtime.session
    second = world.run()
    assert second.ok, second.message
    assert world.runtime.session.header["parentSession"] == str(world.source_path)


def test_unavailable_without_model_or_saved_session(tmp_path: Path) -> None:
    unsaved = Session.create(tmp_path, tmp_path / "s")
    runtime = Runtime(
        unsaved,
        RuntimeConfig(notes_home=tmp_path / "n", cwd=tmp_path, agent_dir=tmp_path, enabled=False),
    )
    result = asyncio.run(runtime.handoff_command(HandoffOptions(generator=scripted_generator)))
    assert result.outcome == "failed" and result.code == "handoff_unavailable"
    assert not (tmp_path / "s").exists()


# ------------------------------------------------------------------- failure injection


def _tamper_source(w: World) -> None:
    w.source_path.write_bytes(w.source_path.read_bytes().replace(b"Reading it.", b"Reading IT."))
    w.baseline = w.source_path.read_bytes()


def _move_leaf(w: World) -> None:
    w.source.append_message({"role": "user", "content": "one more thing", "timestamp": 9})
    w.baseline = w.source_path.read_bytes()


def _block_dest_dir(w: World) -> None:
    w.dest_dir.write_text("not a directory")


def _tamper_destination(w: World) -> None:
    [path] = w.dest_dir.glob("*.jsonl")
    lines = path.read_text().splitlines()
    receipt_line = next(json.loads(x) for x in lines if "context-memory-handoff-in" in x)
    receipt_line["data"]["destinationId"] = "forged"
    path.write_text("\n".join([*lines, json.dumps(receipt_line)]) + "\n")


def _many_untracked(w: World) -> None:
    for i in range(400):
        (w.cwd / f"untracked-file-with-a-long-name-{i:04d}.txt").write_text("x")


def _failing_send(dest: Session, text: str) -> None:
    raise RuntimeError("provider unavailable")


FAILURES: dict[str, tuple[dict[str, Any], str]] = {
    "preparing": ({"preparing": _tamper_source}, "handoff_source_changed"),
    "generating": ({}, "empty_checkpoint"),
    "quality": ({"quality": _many_untracked}, "handoff_budget"),
    "saving": ({"saving": _move_leaf}, "stale_scope"),
    "switching": ({"switching": _block_dest_dir}, "handoff_setup_failed"),
    "validating": ({"validating": _tamper_destination}, "handoff_setup_failed"),
    "continuing": ({}, "continuation_failed"),
}
CANCEL_CODES = {
    "preparing": "aborted",
    "generating": "aborted",
    "quality": "aborted",
    "saving": "aborted",
    "switching": "switch_cancelled",
    "validating": "aborted",
    "continuing": "aborted",
}


def check_invariants(w: World, result: HandoffResult) -> None:
    """The property: source = baseline (+ one verified offer); no half-done destination."""
    after = w.source_path.read_bytes()
    assert after.startswith(w.baseline), "the source was rewritten"
    extra = after[len(w.baseline) :].splitlines()
    assert len(extra) <= 1, "the source gained more than the offer"
    if extra:
        offer = json.loads(extra[0])
        assert offer["customType"] == HANDOFF_OUT and offer["data"] == result.packet
        verify_persisted_memory(Session.open(w.source_path, readonly=True).branch(), w.source_path)
    reached_destination = "continuing" in result.stages
    files = sorted(w.dest_dir.glob("*.jsonl")) if w.dest_dir.is_dir() else []
    if reached_destination:
        [dest] = files
        inherited_records(Session.open(dest, readonly=True))  # complete and bound
        assert w.runtime.session.path == dest
    else:
        assert files == [], "a destination was left behind"
        assert w.runtime.session is w.source
    if result.outcome != "done":
        assert result.code is not None


@pytest.mark.parametrize("stage", STAGES)
def test_failure_at_each_stage(world: World, stage: str) -> None:
    hooks, code = FAILURES[stage]
    world.hooks = dict(hooks)
    over: dict[str, Any] = {}
    if stage == "generating":
        over["generator"] = lambda request: []
    if stage == "continuing":
        over["send"] = _failing_send
    result = world.run(**over)
    assert result.outcome == "failed" and result.code == code, result.message
    assert result.stages[-1] == stage
    check_invariants(world, result)


@pytest.mark.parametrize("stage", STAGES)
def test_cancel_at_each_stage(world: World, stage: str) -> None:
    world.cancel_stage = stage
    result = world.run()
    assert result.outcome == "cancelled" and result.code == CANCEL_CODES[stage], result.message
    assert result.stages[-1] == stage
    check_invariants(world, result)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.integers(0, 40))
def test_cancel_at_any_poll(tmp_path_factory: pytest.TempPathFactory, poll: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        w = make_world(tmp_path_factory.mktemp("poll"), mp)
        w.cancel_at_poll = poll
        result = w.run()
        assert result.outcome in {"cancelled", "done"}
        check_invariants(w, result)


def test_generator_errors_are_named(world: World) -> None:
    def bad(request: NotesRequest) -> list[dict[str, Any]]:
        return [
            {
                "key": "x",
                "kind": "goal",
                "text": "t",
                "sourceIds": ["nope"],
                "inference": False,
                "status": "active",
            }
        ]

    result = world.run(generator=bad)
    assert result.code == "invalid_source"
    check_invariants(world, result)

    def raising(request: NotesRequest) -> list[dict[str, Any]]:
        raise HandoffError("checkpoint_timeout", "the model took too long")

    result = world.run(generator=raising)
    assert result.code == "checkpoint_timeout"


def test_async_generator(world: World) -> None:
    async def generator(request: NotesRequest) -> list[dict[str, Any]]:
        await asyncio.sleep(0)
        return scripted_generator(request)

    assert world.run(generator=generator).ok


def test_git_status_and_touched_files(tmp_path: Path) -> None:
    assert git_status(tmp_path).startswith("Git status unavailable")
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    assert git_status(tmp_path).startswith("## No commits yet on trunk")
    entries = [
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "name": "write", "arguments": {"path": "b"}},
                    {"type": "toolCall", "name": "edit", "arguments": {"path": "a"}},
                    {"type": "toolCall", "name": "read", "arguments": {"path": "b"}},
                    {"type": "toolCall", "name": "grep", "arguments": {"path": "c"}},
                    {"type": "toolCall", "name": "read", "arguments": {"file": "d"}},
                ],
            },
        },
        {
            "type": "message",
            "message": {
                "role": "user",
                "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "e"}}],
            },
        },
    ]
    assert touched_files(entries) == ["b", "a"]


def test_a_second_handoff_while_one_runs_is_refused(world: World) -> None:
    inner: list[HandoffResult] = []

    async def generator(request: NotesRequest) -> list[dict[str, Any]]:
        inner.append(await world.runtime.handoff_command(world.options()))
        return scripted_generator(request)

    result = world.run(generator=generator)
    assert result.ok
    [busy] = inner
    assert busy.outcome == "failed" and busy.code == "handoff_unavailable"
    assert busy.rows == ["start.busy"] and busy.stages == []


def test_a_crashing_generator_is_operation_failed(world: World) -> None:
    def crash(request: NotesRequest) -> list[dict[str, Any]]:
        raise KeyError("boom")

    result = world.run(generator=crash)
    assert result.outcome == "failed" and result.code == "operation_failed"
    assert "KeyError" in result.message
    check_invariants(world, result)


def test_a_torn_destination_write_is_removed(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: the disk fails half-way through writing the destination."""
    import os

    from pi_context.support import writes

    def torn(fd: int, data: memoryview) -> int:
        if b"context-memory-handoff-in" in bytes(data):
            os.write(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")
        return os.write(fd, data)

    monkeypatch.setattr(writes, "WRITE", torn)  # the session write layer's fault seam
    result = world.run()
    assert result.outcome == "failed" and result.code == "handoff_setup_failed"
    assert "No space left" in result.message
    assert result.stages[-1] == "switching"
    check_invariants(world, result)
