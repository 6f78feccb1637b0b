"""The seed's smaller handoff items, each as a named test: the generation timeout ending in
``checkpoint_timeout``, the approval-hint pattern (its Chinese forms too), the previous native
compaction summary archived for the notes, ``maxRequests: 4`` for an automatic handoff, and
``assertReady`` / ``onSwitch`` guarding its switch."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.automatic import AutoHandoffPolicy
from pi_context.bindings.handoff.controller import NotesRequest, archived_records
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import extract_records
from pi_context.bindings.handoff.notes import Note, NoteState
from pi_context.bindings.handoff.quality import check_quality
from pi_context.bindings.handoff.relay import HANDOFF_OUT

from .test_runtime_handoff import World, make_world, scripted_generator


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, monkeypatch)
    w.runtime.handoffs.logs.directory = tmp_path / "logs"
    return w


def _log_events(world: World) -> list[dict[str, Any]]:
    logs = world.runtime.handoffs.logs.directory
    assert logs is not None
    return [json.loads(line) for p in logs.glob("*.jsonl") for line in p.read_text().splitlines()]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_generation_timeout_ends_in_checkpoint_timeout(world: World, kind: str) -> None:
    world.runtime.handoffs.configure(policy=AutoHandoffPolicy(generation_timeout_ms=200))

    def slow(request: NotesRequest) -> list[dict[str, Any]]:
        time.sleep(1.0)
        return scripted_generator(request)

    async def slow_async(request: NotesRequest) -> list[dict[str, Any]]:
        await asyncio.sleep(30)
        return scripted_generator(request)

    started = time.monotonic()
    result = world.run(generator=slow if kind == "sync" else slow_async)
    assert time.monotonic() - started < 5
    assert (result.outcome, result.code) == ("failed", "checkpoint_timeout"), result.message
    assert "within 0.2s" in result.message
    assert world.source_path.read_bytes() == world.baseline  # nothing offered
    ends = [e for e in _log_events(world) if e["event"] == "call_end"]
    assert [(e["outcome"], e.get("code")) for e in ends] == [("failed", "checkpoint_timeout")]
    starts = [e for e in _log_events(world) if e["event"] == "call_start"]
    assert starts[0]["generationTimeoutMs"] == 200


def _note(key: str, text: str, status: str = "active") -> Note:
    return Note(key, "open_item", text, ("r1",), False, status)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("等待用户批准迁移方案", True),  # waiting … approval
        ("迁移需要审批", True),  # approval
        ("待产品经理确认接口", True),  # awaiting … confirmation
        ("待用户决定是否删除", True),  # awaiting … decision
        ("Ask for approval before the deploy", True),
        ("Needs PERMISSION to push", True),
        ("用户已确认接口", False),  # confirmed: nothing awaits
        ("The deploy was approved", False),  # \bapproval\b, not "approved"
        ("permissions.py was refactored", False),
    ],
)
def test_approval_hints_follow_the_seed_pattern(text: str, hint: bool) -> None:
    after = NoteState(2, (_note("k", text), _note("done", text, status="resolved")))
    quality = check_quality(NoteState(), after, [])
    assert quality.pending_approval_hints == int(hint)  # resolved notes never count


def test_the_previous_native_compaction_summary_is_archived(world: World) -> None:
    """A native compaction (no task notes in its details) replaced history the notes never
    saw: its summary goes to the notes generator with the records after the coverage."""
    source = world.source
    first_kept = source.leaf_id
    compaction = source.append_compaction("Earlier: the user wants a Rust port.", first_kept, 9_000)
    source.append_message({"role": "user", "content": "go on", "timestamp": 5})
    branch = source.branch()
    records = extract_records(branch)
    after_user = next(r for r in records if r.text == "go on")
    covered = NoteState(2, (), None, after_user.id)  # the notes cover everything...
    archived = archived_records(branch, records, covered)
    assert [r.id for r in archived] == [compaction]  # ...but the summary still goes
    assert archived[0].text.startswith("[Historical compaction summary;")
    # what the runtime hands the generator contains it
    seen: list[list[str]] = []

    def generator(request: NotesRequest) -> list[dict[str, Any]]:
        seen.append([r.id for r in request.archived])
        return scripted_generator(request)

    result = world.run(generator=generator)
    assert result.ok, result.message
    assert compaction in seen[0]
    # once the latest compaction carries its own notes, the older summary is not archived
    notes = {"piContextMemory": {"version": 2, "notes": []}}
    source.append_compaction("x", first_kept, 9_000, details=notes)
    branch = source.branch()
    records = extract_records(branch)
    assert compaction not in [r.id for r in archived_records(branch, records, covered)]


def _requesting(n: int) -> Any:
    def generator(request: NotesRequest) -> list[dict[str, Any]]:
        for _ in range(n):
            request.start_request().end("ok")
        return scripted_generator(request)

    return generator


def test_an_automatic_handoff_makes_at_most_four_note_requests(world: World) -> None:
    policy = AutoHandoffPolicy(pressure_percent=0.001)
    world.runtime.handoffs.configure(world.options(generator=_requesting(4)), policy)
    assert asyncio.run(world.runtime.auto_handoff()).ok  # type: ignore[union-attr]
    world.runtime.session_start("resume", world.source)
    asyncio.run(world.runtime.auto_handoff_command("resume"))
    world.runtime.handoffs.configure(world.options(generator=_requesting(5)), policy)
    result = asyncio.run(world.runtime.auto_handoff())
    assert result is not None and result.code == "notes_request_limit", result
    manual = world.run(generator=_requesting(5))  # a manual handoff has no such limit
    assert manual.ok, manual.message


def test_assert_ready_then_on_switch_guard_the_automatic_switch(world: World) -> None:
    calls: list[str] = []

    def assert_ready() -> None:
        calls.append("ready")

    def on_switch() -> None:
        calls.append("switch")
        raise HandoffError("handoff_not_ready", "the host is switching models")

    world.baseline = world.source_path.read_bytes()
    options = world.options(assert_ready=assert_ready, on_switch=on_switch)
    world.runtime.handoffs.configure(options, AutoHandoffPolicy(pressure_percent=0.001))
    result = asyncio.run(world.runtime.auto_handoff())
    assert result is not None and result.code == "handoff_not_ready", result
    assert calls == ["ready", "switch"] and result.destination is None
    assert result.stages == ["preparing", "generating", "quality", "saving"]
    assert world.runtime.session is world.source and not list(world.dest_dir.glob("*"))
    # the verified offer stays; the failed attempt is recorded after it
    extra = [
        json.loads(line)
        for line in world.source_path.read_bytes()[len(world.baseline) :].splitlines()
    ]
    assert [e["customType"] for e in extra] == [HANDOFF_OUT, "context-memory-auto-handoff"]
    assert extra[-1]["data"]["failure"] == "handoff_not_ready"
    calls.clear()
    assert world.run(assert_ready=assert_ready, on_switch=on_switch).ok  # manual: not asked
    assert calls == []
