"""Window ids that a fork cannot share with its source, and older sessions that keep theirs.

Pi's session ids are UUIDv7: their first 8 characters are a timestamp prefix, so the seed format
(``pcw:<first 8 characters>:...``) gives a fork made within a minute its source's root window.
Windows are named after the whole session id now; files written in the seed format (by the
real Pi here) still open with the ids they were written with.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from pi_context.bindings.runtime import Runtime
from pi_context.bindings.runtime.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    RESET_MARKER_TYPE,
)
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import (
    current_window_id,
    mint_window_id,
    root_window_id,
    session_created_ms,
    uses_legacy_ids,
    window_spans,
)

FIXED_MS = 1_796_000_000_000


def _boots(entries: list[dict[str, Any]]) -> list[str]:
    return [e["details"]["windowId"] for e in entries if e.get("customType") == BOOT_TYPE]


def _wipe(rt: Runtime, kit: Any) -> str:
    """A wipe_memory turn: the reset is committed and appended; returns the new window id."""
    kit.user(rt.session, "please close out")
    assert json.loads(rt.call_tool("wipe_memory").text)["status"] == "rollover_requested"
    assistant = kit.assistant(rt.session, "closing out")
    result = asyncio.run(rt.turn_end("completed", assistant))
    rt.append(result.drafts)
    assert result.window_id is not None
    return result.window_id


def test_a_fork_in_the_same_millisecond_gets_distinct_windows(env, kit, run_pi):
    clock = lambda: FIXED_MS  # noqa: E731 - source and fork share one millisecond
    source = Session.create(env.cwd, env.sessions, now=clock)
    rt = env.runtime(source)
    kit.user(source, "the task")
    rt.session_start("startup")
    kit.assistant(source, "working")
    first_reset = _wipe(rt, kit)
    forked = source.fork(env.sessions)
    assert forked.session_id != source.session_id
    assert forked.session_id[:8] == source.session_id[:8], "the seed format would collide"
    assert session_created_ms(forked.session_id) == session_created_ms(source.session_id)

    fork_rt = env.runtime(forked)
    fork_rt.session_start("fork")
    # The fork inherits the reset window it was copied in, and mints its own ids from now on.
    assert fork_rt.window_id == first_reset
    fork_reset = _wipe(fork_rt, kit)
    source_reset = _wipe(rt, kit)
    assert fork_reset.startswith(f"pcw:{forked.session_id}:")
    assert source_reset.startswith(f"pcw:{source.session_id}:")

    source_root = root_window_id(source.session_id, source.branch())
    fork_root = root_window_id(forked.session_id, forked.branch())
    assert source_root == f"pcw:{source.session_id}:root"
    assert fork_root == f"pcw:{forked.session_id}:root"
    source_ids = {s.window_id for s in window_spans(source.branch(), source.session_id)}
    fork_ids = {s.window_id for s in window_spans(forked.branch(), forked.session_id)}
    assert source_ids & fork_ids == {first_reset}, "only the copied window is shared"
    # Both files are real Pi sessions that Pi reads back byte for byte.
    answers = run_pi(
        [
            {"kind": "inspect", "path": str(s.path), "leaves": [None]}
            for s in (Session.open(source.path), Session.open(forked.path))
        ]
    )
    for answer, session in zip(answers, (source, forked), strict=True):
        assert "error" not in answer, answer
        assert answer["sessionId"] == session.session_id
        assert answer["rewritten"] == Path(str(session.path)).read_text(encoding="utf-8")


def test_a_fork_of_a_root_window_boots_under_its_own_id(env, kit):
    clock = lambda: FIXED_MS  # noqa: E731
    source = Session.create(env.cwd, env.sessions, now=clock)
    rt = env.runtime(source)
    kit.user(source, "question")
    rt.session_start("startup")
    kit.assistant(source, "answer")
    forked = source.fork(env.sessions)
    fork_rt = env.runtime(forked)
    assert fork_rt.session_start("fork").action == "root-boot", "the copied boot is not its own"
    assert _boots(forked.branch()) == [
        f"pcw:{source.session_id}:root",
        f"pcw:{forked.session_id}:root",
    ]
    assert fork_rt.window_id != rt.window_id


def _legacy_session(run_pi: Any, cwd: Path, directory: Path) -> tuple[Path, str, str]:
    """A session the real Pi wrote in the seed format: root boot, one reset, more work."""
    (built,) = run_pi(
        [
            {
                "kind": "build",
                "cwd": str(cwd),
                "dir": str(directory),
                "ops": [
                    {
                        "op": "message",
                        "message": {"role": "user", "content": "old task", "timestamp": 1},
                    }
                ],
                "leafRefs": [],
            }
        ]
    )
    path, sid = built["path"], built["sessionId"]
    root, minted = f"pcw:{sid[:8]}:root", f"pcw:{sid[:8]}:0badcafe"
    (appended,) = run_pi(
        [
            {
                "kind": "append",
                "path": path,
                "ops": [
                    {
                        "op": "custom_message",
                        "customType": BOOT_TYPE,
                        "content": "old root boot",
                        "display": False,
                        "details": {"windowId": root},
                    },
                    {"op": "compaction", "summary": "", "firstKept": None, "tokensBefore": 0},
                    {"op": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": minted}},
                    {
                        "op": "custom_message",
                        "customType": BOOT_TYPE,
                        "content": "old reset boot",
                        "display": False,
                        "details": {"windowId": minted},
                    },
                    {
                        "op": "custom_message",
                        "customType": CONTINUATION_TYPE,
                        "content": "go on",
                        "display": False,
                    },
                    {
                        "op": "message",
                        "message": {"role": "user", "content": "after", "timestamp": 2},
                    },
                ],
            }
        ]
    )
    assert "error" not in appended, appended
    return Path(path), root, minted


def test_a_session_written_in_the_seed_format_keeps_its_windows(env, kit, run_pi):
    path, root, minted = _legacy_session(run_pi, env.cwd, env.sessions)
    before = path.read_bytes()
    session = Session.open(path)
    assert uses_legacy_ids(session.branch(), session.session_id)
    rt = env.runtime(session)
    assert rt.session_start("resume").action == "present", "its boot is still found"
    assert path.read_bytes() == before, "opening it writes nothing"
    assert [s.window_id for s in window_spans(rt.branch(), rt.session_id)] == [root, minted]
    assert rt.window_id == minted
    provider = rt.context().messages
    assert [m.get("customType") for m in provider if m["role"] == "custom"] == [
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    listed = json.loads(rt.call_tool("history_windows").text)
    assert {w["window_id"] for w in listed["windows"]} == {root, minted}
    # Back on the root window (a sibling of the reset), the old root boot still serves.
    root_leaf = next(e["id"] for e in rt.branch() if e.get("customType") == BOOT_TYPE)
    assert rt.tree(root_leaf).action == "present"
    assert rt.window_id == root
    # New windows of an older session are named after its whole id.
    rt.tree(session.entries[-1]["id"])
    new = _wipe(rt, kit)
    assert new.startswith(f"pcw:{rt.session_id}:")
    assert current_window_id(rt.branch(), rt.session_id) == new


def test_copied_seed_format_ids_do_not_make_a_fork_legacy(env, kit):
    now = [FIXED_MS]
    source = Session.create(env.cwd, env.sessions, now=lambda: now[0])
    sid = source.session_id
    root, minted = f"pcw:{sid[:8]}:root", f"pcw:{sid[:8]}:0badcafe"
    kit.user(source, "old task")
    source.append_custom_message(BOOT_TYPE, "old root boot", False, {"windowId": root})
    source.append_compaction("", None, 0)
    source.append_custom(RESET_MARKER_TYPE, {"windowId": minted})
    source.append_custom_message(BOOT_TYPE, "old reset boot", False, {"windowId": minted})
    assert uses_legacy_ids(source.branch(), sid), "the source wrote these ids itself"
    # Seed-format ids were written by the code before this change, so before any fork it makes:
    # a second later, still within the same 8-character prefix.
    now[0] += 1000
    forked = source.fork(env.sessions)
    fork_id = forked.session_id
    assert fork_id[:8] == sid[:8]
    assert not uses_legacy_ids(forked.branch(), fork_id), "copied, not written by the fork"
    assert root_window_id(fork_id, forked.branch()) == f"pcw:{fork_id}:root"
    assert root_window_id(sid, source.branch()) == root
    assert current_window_id(forked.branch(), fork_id) == minted, "the copied window stays"
    fresh = mint_window_id(forked.branch(), fork_id)
    assert fresh.startswith(f"pcw:{fork_id}:") and fresh != minted


_SESSION_IDS = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,40}[A-Za-z0-9])?", fullmatch=True)


@given(_SESSION_IDS, _SESSION_IDS, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_distinct_sessions_never_share_a_window_id(first, second, seed_a, seed_b):
    assume(first != second)
    ids_a = {root_window_id(first), mint_window_id([], first, random.Random(seed_a))}
    ids_b = {root_window_id(second), mint_window_id([], second, random.Random(seed_b))}
    assert not ids_a & ids_b
