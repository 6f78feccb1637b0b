"""0.34's follow-up cancellation, end to end through the reference host loop: the hard reserve
commits the user's /wipe-memory and stops; the tool batch's follow-up request that Pi would
still send in the fresh window is cancelled by the spec's provider_context step (the run is
aborted, the model is not called again); real queued input goes through; under 0.33 the same
run commits and continues instead."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_context import HostLoop, ModelInfo, Runtime, RuntimeConfig, Session
from pi_context.bindings.runtime.budget import Policy, thresholds_for
from pi_context.bindings.session import Durability, seeded_uuids
from pi_context.bindings.session.windows import is_reset_marker
from pi_context.checks.runtime.host import BANDS, CONTEXT_WINDOW, RESERVE, Clock

Message = dict[str, Any]


def _runtime(tmp_path: Path, spec: str, clock: Clock) -> Runtime:
    session = Session.create(
        tmp_path / "project",
        tmp_path / "sessions",
        now=clock,
        uuids=seeded_uuids(1),
        durability=Durability.NONE,
    )
    rt = Runtime(
        session,
        RuntimeConfig(
            notes_home=tmp_path / "notes",
            cwd=tmp_path / "project",
            agent_dir=tmp_path / "agent",
            model=ModelInfo("m", "p", CONTEXT_WINDOW),
            spec=spec,
            policy=lambda: Policy(thresholds_for(RESERVE, 24_576), True),
        ),
    )
    rt.session_start("startup")
    return rt


def _reply(clock: Clock, band: str, tool: bool) -> Message:
    tokens = BANDS[band]
    calls = [{"type": "toolCall", "id": f"c{clock.now}", "name": "get_context_remaining"}]
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "working"}, *(calls if tool else [])],
        "api": "test",
        "provider": "p",
        "model": "m",
        "usage": {
            "input": tokens,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens,
        },
        "stopReason": "toolUse" if tool else "stop",
        "timestamp": clock(),
    }


def _model(clock: Clock, replies: list[tuple[str, bool]], seen: list[int]) -> Callable[..., Any]:
    def model(messages: list[Message], tools: list[dict[str, Any]]) -> Message:
        seen.append(len(messages))
        band, tool = replies.pop(0) if replies else ("low", False)
        return _reply(clock, band, tool)

    return model


def _wiped_under_the_hard_reserve(
    tmp_path: Path, spec: str, queue: list[str]
) -> tuple[Runtime, HostLoop, int, list[int]]:
    """A saved session, the user's /wipe-memory, then a run whose first reply (a tool call)
    reaches the hard reserve; the loop's result and how often the model was called."""
    clock = Clock()
    rt = _runtime(tmp_path, spec, clock)
    loop = HostLoop(rt, clock=clock)
    loop.user("start")
    seen: list[int] = []
    asyncio.run(loop.run(_model(clock, [("low", False)], seen)))
    command = asyncio.run(rt.wipe_memory_command())
    assert command.ok and command.start_turn
    loop.queue.extend(queue)
    seen.clear()
    turns = asyncio.run(loop.run(_model(clock, [("hard", True)], seen)))
    return rt, loop, turns, seen


def test_the_empty_follow_up_after_a_committed_stop_is_cancelled(tmp_path: Path) -> None:
    rt, loop, turns, seen = _wiped_under_the_hard_reserve(tmp_path, "reset-control@0.34", [])
    assert turns == 1 and len(seen) == 1, "the model was called for the cancelled follow-up"
    steps = [(s.event, s.row, s.host) for s in rt.control.history]
    at = steps.index(("turn_end", "turn_end.hard-reserve-manual-stop", "commit-stop"))
    assert steps[at + 1 :][:2] == [
        ("provider_context", "provider_context.cancel-follow-up", "cancel"),
        ("abort", "abort.clear", "none"),
    ], steps[at:]
    assert [cause for _window, cause in loop.resets] == ["hard reserve"]
    branch = rt.branch()
    assert sum(is_reset_marker(e) for e in branch) == 1
    last = [e for e in branch if e.get("type") == "message"][-1]["message"]
    assert last["role"] == "toolResult", "nothing was said in the fresh window"
    assert rt.control.state_wire() == {"request": {"phase": "none"}, "overflow": "idle"}


def test_queued_input_after_the_stop_reaches_the_model(tmp_path: Path) -> None:
    rt, _loop, turns, seen = _wiped_under_the_hard_reserve(
        tmp_path, "reset-control@0.34", ["and one more thing"]
    )
    # the follow-up (tool results, the queue waiting) and then the queued message itself
    assert turns == 3 and len(seen) == 3, "the queued message was not answered"
    rows = [s.row for s in rt.control.history]
    assert "provider_context.cancel-follow-up" not in rows
    assert rows[-3:] == [
        "turn_end.stop-pending",
        "before_settle.stop-after-safety",
        "settled.clear",
    ]


def test_under_033_the_safety_reset_continues(tmp_path: Path) -> None:
    rt, loop, turns, seen = _wiped_under_the_hard_reserve(tmp_path, "reset-control@0.33", [])
    assert not rt.control.accepts("provider_context")
    assert [cause for _window, cause in loop.resets] == ["hard reserve"]
    assert turns == len(seen) == 2, "0.33 continues into the fresh window"
