"""Properties of the runtime over random host behaviour, against real session files.

Whatever order the host calls the entry points in (turns that complete, fail or abort, settles,
tool requests, /wipe-memory, toggling, tree navigation), the durable session stays well formed:
every boundary is complete and in the closed order, each window holds at most one reminder and
one warning, the active window always has its boot, and no aborted turn continues.

One exception to "has its boot", as in the published extension: tree navigation can put the
leaf on (or past) a reset's checkpoint compaction, which hides everything before it, the
window's boot included. The published repair refuses a tail holding a compaction, so the
request is refused (never sent without its boot) and the user is told to /wipe-memory.
That refusal is for reset windows only: the published context hook never refuses the root
window, which goes out as Pi projects it. A root window can lack its boot only while
pi-context is off (a tree move then adds no boot), as the published extension behaves.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.runtime.control import specs
from pi_context.bindings.runtime.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    WARNING_TYPE,
)
from pi_context.bindings.session import Durability, Session, seeded_uuids
from pi_context.bindings.session.windows import (
    current_reset,
    current_window_id,
    is_reset_marker,
    is_window_boot,
    is_window_boot_entry,
    window_spans,
)

OPS = st.one_of(
    st.tuples(st.just("user")),
    st.tuples(st.just("assistant"), st.integers(0, 200_000)),
    st.tuples(st.just("context")),
    st.tuples(st.just("wipe")),
    st.tuples(
        st.just("turn_end"),
        st.sampled_from(["completed", "aborted", "error", "overflow"]),
        st.booleans(),
    ),
    st.tuples(st.just("before_settle"), st.booleans()),
    st.tuples(st.just("settled")),
    st.tuples(st.just("abort")),
    st.tuples(st.just("command")),
    st.tuples(st.just("toggle")),
    st.tuples(st.just("tree"), st.integers(0, 10_000)),
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_767_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


def check_session(rt: Runtime) -> None:
    branch = rt.branch()
    for index, entry in enumerate(branch):
        if is_reset_marker(entry):
            window = entry["data"]["windowId"]
            before = branch[index - 1]
            assert before["type"] == "compaction" and before["firstKeptEntryId"] == before["id"]
            after = branch[index + 1 : index + 3]
            assert [e.get("customType") for e in after] == [BOOT_TYPE, CONTINUATION_TYPE]
            assert after[0]["details"] == {"windowId": window}
    for span in window_spans(branch, rt.session_id):
        entries = branch[span.start : span.end]
        for kind in (GUIDANCE_TYPE, WARNING_TYPE):
            budget = [e for e in entries if e.get("customType") == kind and "details" not in e]
            assert len(budget) <= 1, (span.window_id, kind)


def boot_hidden(rt: Runtime) -> bool:
    """Whether a compaction after the active reset window's last boot hides it from the context.

    Never for the root window: the published hook sends it as Pi projects it.
    """
    branch = rt.branch()
    if current_reset(branch) is None:
        return False
    window = current_window_id(branch, rt.session_id)
    boots = [i for i, entry in enumerate(branch) if is_window_boot_entry(entry, window)]
    return bool(boots) and any(e.get("type") == "compaction" for e in branch[boots[-1] + 1 :])


def apply(rt: Runtime, clock: Clock, op: tuple[Any, ...]) -> None:
    session = rt.session
    name = op[0]
    if name == "user":
        session.append_message({"role": "user", "content": "next", "timestamp": clock()})
    elif name == "assistant":
        tokens = op[1]
        usage = {
            "input": tokens,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens,
        }
        message = {"role": "assistant", "content": [], "usage": usage, "stopReason": "stop"}
        session.append_message({**message, "timestamp": clock()})
    elif name == "context":
        result = rt.context()
        if boot_hidden(rt):
            notices = [notice.text for notice in rt.drain_notices()]
            assert result.abort and any("no boot message" in text for text in notices)
        else:
            assert not result.abort, "the active window always has its boot"
            if rt.enabled and current_reset(rt.branch()) is None:
                root = current_window_id(rt.branch(), rt.session_id)
                boots = [m for m in result.messages if is_window_boot(m, root)]
                assert boots, "an enabled root window always sends its boot"
    elif name == "wipe":
        rt.call_tool("wipe_memory")
    elif name == "turn_end":
        outcome, queued = op[1], op[2]
        message = None
        if outcome == "overflow":
            outcome = "error"
            message = {
                "role": "assistant",
                "stopReason": "error",
                "errorMessage": "prompt is too long",
            }
        result = asyncio.run(rt.turn_end(outcome, message, queued=queued))
        if outcome == "aborted":
            assert not result.continue_, "an aborted turn never continues"
        if result.continue_:
            assert result.drafts[-1]["customType"] == CONTINUATION_TYPE
        rt.append(result.drafts)
    elif name == "before_settle":
        result = asyncio.run(rt.before_settle(queued=op[1]))
        # a boundary is written exactly when drafts come back; only commit-stop ends the run
        assert result.continue_ == (bool(result.drafts) and result.step.host != "commit-stop")
        rt.append(result.drafts)
    elif name == "settled":
        rt.settled()
    elif name == "abort":
        rt.abort()
    elif name == "command":
        asyncio.run(rt.wipe_memory_command())
    elif name == "toggle":
        rt.pi_context_command("off" if rt.enabled else "on")
    elif name == "tree":
        entries = session.entries
        rt.tree(entries[op[1] % len(entries)]["id"])


@settings(max_examples=150, deadline=None)
@example([("command",), ("command",), ("tree", 9226), ("context",)], "reset-control@0.25")
@example(
    [("command",), ("before_settle", False), ("toggle",), ("tree", 829), ("context",)],
    "reset-control@0.26",
)
@given(st.lists(OPS, max_size=40), st.sampled_from(specs()))
def test_random_host_behaviour_keeps_the_session_well_formed(
    ops: list[tuple[Any, ...]], spec: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        clock = Clock()
        session = Session.create(
            root / "project",
            root / "sessions",
            now=clock,
            uuids=seeded_uuids(1),
            durability=Durability.NONE,
        )
        rt = Runtime(
            session,
            RuntimeConfig(
                notes_home=root / "notes",
                cwd=root / "project",
                agent_dir=root / "agent",
                model=ModelInfo("m", "p", 200_000),
                rng=random.Random(5),
                spec=spec,
            ),
        )
        rt.session_start("startup")
        session.append_message({"role": "user", "content": "start", "timestamp": clock()})
        for op in ops:
            apply(rt, clock, op)
            check_session(rt)
        reopened = Session.open(session.path)
        on_disk = reopened.branch(rt.session.leaf_id)
        assert [e["id"] for e in on_disk] == [e["id"] for e in rt.branch()], "all durable"
