"""Stale boundaries are impossible: a boundary build that an abort, tree navigation,
``/pi-context off``, a session switch or shutdown interrupts, at any of its await points,
commits nothing, continues nothing and announces nothing. One that is returned first but
appended by the host only after such a change is not written either; a ``/wipe-memory`` that
wrote its boundary before the change stands.

The builder is the public ``RuntimeConfig(build_reset=...)``; the interruption runs as a
concurrent task, as a host's would.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import ModelInfo, Runtime, RuntimeConfig, Session, Usage, spec_ids
from pi_context.bindings.runtime.control import bindings
from pi_context.bindings.session import Durability, seeded_uuids
from pi_context.bindings.session.boundary import artifact_kind
from pi_context.bindings.session.windows import is_reset_marker

AWAITS = 3
INTERRUPTIONS = ("abort", "tree", "off", "switch", "shutdown")
ENTRIES = ("wipe_memory", "hard reserve", "close-out", "overflow recovery", "/wipe-memory")


def _interrupt(rt: Runtime, what: str, other: Session) -> None:
    if what == "abort":
        rt.abort()
    elif what == "tree":
        rt.tree(rt.session.entries[0]["id"])
    elif what == "off":
        rt.pi_context_command("off")
    elif what == "switch":
        rt.session_start("new", other)
    else:
        rt.shutdown()


def _assistant(rt: Runtime, tokens: int, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {"input": tokens, "output": 0, "totalTokens": tokens},
        "stopReason": "stop",
        "timestamp": 1_767_000_000_000 + len(rt.session.entries),
        **extra,
    }
    rt.session.append_message(message)
    return message


@settings(max_examples=120, deadline=None)
@given(
    spec=st.sampled_from(spec_ids()),
    entry=st.sampled_from(ENTRIES),
    what=st.sampled_from(INTERRUPTIONS),
    point=st.integers(0, AWAITS),
)
def test_an_interrupted_boundary_build_commits_continues_and_announces_nothing(
    spec: str, entry: str, what: str, point: int
) -> None:
    has_close_out = bindings()[spec].accepts("close_out")
    if entry == "close-out" and not has_close_out:
        entry = "wipe_memory"
    if entry == "/wipe-memory" and has_close_out:
        entry = "overflow recovery"  # only 0.25 commits /wipe-memory at once
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sessions = [
            Session.create(
                root / "project", root / "s", uuids=seeded_uuids(n), durability=Durability.NONE
            )
            for n in (1, 2)
        ]
        used = {"tokens": 10_000}

        async def build(runtime: Runtime) -> list[dict[str, Any]]:
            drafts = runtime.reset_drafts()
            for _ in range(AWAITS):
                await asyncio.sleep(0)
            return drafts

        rt = Runtime(
            sessions[0],
            RuntimeConfig(
                notes_home=root / "notes",
                cwd=root / "project",
                agent_dir=root / "agent",
                model=ModelInfo("m", "p", 200_000),
                spec=spec,
                rng=random.Random(1),
                build_reset=build,
                usage=lambda: Usage(used["tokens"], 200_000),
            ),
        )
        rt.session_start("startup")
        rt.session.append_message({"role": "user", "content": "go", "timestamp": 1})
        _assistant(rt, 10_000)  # the session is saved from its first reply on

        async def host() -> tuple[Any, bool]:
            state = {"during": False}

            async def boundary() -> Any:
                if entry == "wipe_memory":
                    rt.call_tool("wipe_memory")
                    return await rt.turn_end("completed", _assistant(rt, 10_000))
                if entry == "hard reserve":
                    used["tokens"] = 195_000
                    return await rt.turn_end("completed", _assistant(rt, 195_000))
                if entry == "close-out":
                    assert (await rt.wipe_memory_command()).start_turn
                    return await rt.before_settle()
                if entry == "overflow recovery":
                    error = _assistant(rt, 0, stopReason="error", errorMessage="prompt is too long")
                    assert (await rt.turn_end("error", error)).drafts == []
                    return await rt.before_settle()
                return await rt.wipe_memory_command()

            task = asyncio.ensure_future(boundary())

            async def interrupter() -> None:
                for _ in range(point + 1):
                    await asyncio.sleep(0)
                state["during"] = not task.done()
                _interrupt(rt, what, sessions[1])

            await interrupter()
            return await task, state["during"]

        markers_before = sum(is_reset_marker(e) for e in sessions[0].entries)
        result, during = asyncio.run(host())
        command = entry == "/wipe-memory"
        drafts = [] if command else result.drafts
        has_boundary = any(artifact_kind(d) for d in drafts)
        if not command:
            rt.append(drafts)
        rt.turn_start()
        rt.settled()
        on_disk = [Session.open(s.path, readonly=True) for s in sessions if s.path.exists()]
        markers_after = sum(is_reset_marker(e) for s in on_disk for e in s.entries)
        cleared = [n.text for n in rt.notices if "memory cleared" in n.text]
        if during or not command:
            # Interrupted, or returned and appended only after the change: never written.
            assert markers_after == markers_before, "nothing committed"
            assert cleared == [] and rt.resets == [], "nothing announced or recorded"
        if during:
            assert not has_boundary
            if command:
                assert not result.ok and not result.start_turn
            else:
                assert result.stale and not result.continue_ and not result.retry
                assert result.window_id is None and not result.stop
        elif command:
            # /wipe-memory wrote its boundary before the change: it stands.
            assert markers_after == markers_before + 1 and len(rt.resets) == 1
        else:
            assert has_boundary and not result.stale, "returned before the change"


def test_an_abort_during_an_async_build_returns_a_stale_result(env: Any, kit: Any) -> None:
    """The issue's case: abort while the boundary is built, through the public config."""
    gate: dict[str, asyncio.Future[list[dict[str, Any]]]] = {}

    async def build(runtime: Runtime) -> list[dict[str, Any]]:
        gate["built"] = asyncio.get_running_loop().create_future()
        return await gate["built"]

    rt = env.runtime(build_reset=build, model=ModelInfo("m", "p", 200_000))
    rt.session_start("startup")
    kit.user(rt.session, "a long task")
    kit.assistant(rt.session)
    rt.call_tool("wipe_memory")

    async def scenario() -> Any:
        pending = asyncio.ensure_future(rt.turn_end("completed"))
        await asyncio.sleep(0)
        drafts = rt.reset_drafts()
        rt.abort()  # the user pressed Esc while the boundary was being built
        gate["built"].set_result(drafts)
        return await pending

    result = asyncio.run(scenario())
    assert result.stale and result.drafts == [] and not result.continue_
    rt.append(result.drafts)
    rt.turn_start()
    rt.settled()
    assert not any(is_reset_marker(e) for e in rt.branch()), "no marker appended"
    assert not any("memory cleared" in n.text for n in rt.notices), "no notice"
    assert rt.resets == []
