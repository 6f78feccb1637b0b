"""Window ids as the TypeScript extension names them, the fork-safe option, and older sessions.

The extension names a session's root window ``pcw:<first 8 characters of the session id>:root``
and mints ``pcw:<8 characters>:<8 lowercase hex>`` at each reset; that is the default. Pi's
session ids are UUIDv7, whose first 8 characters are a timestamp prefix, so a fork made within
a minute names its root as its source did: ``RuntimeConfig.fork_safe_window_ids`` names windows
after the whole session id instead. Sessions keep the naming they were written with: files in
the extension's form and files written by this project before the change (whole-id windows,
``fixtures/whole-id-windows.jsonl``) open with their windows intact.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
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
    naming_on_branch,
    root_window_id,
    session_created_ms,
    window_spans,
)

FIXED_MS = 1_796_000_000_000
FIXTURE = Path(__file__).with_name("fixtures") / "whole-id-windows.jsonl"
"""A session written by pi-context at 60caee0 (before this change): its root boot and its one
reset name their windows after the whole session id. Its second window holds more work."""
FIXTURE_ID = "01a0d1f0-5a5e-7c0d-8e11-000000000022"
MINTED = re.compile(r"pcw:[0-9a-f]{8}:[0-9a-f]{8}")


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


def test_a_new_session_names_its_windows_as_the_extension_does(env, kit, run_pi):
    rt = env.runtime()
    sid = rt.session_id
    kit.user(rt.session, "the task")
    assert rt.session_start("startup").action == "root-boot"
    assert rt.window_id == f"pcw:{sid[:8]}:root"
    assert _boots(rt.branch()) == [f"pcw:{sid[:8]}:root"]
    first = _wipe(rt, kit)
    second = _wipe(rt, kit)
    for minted in (first, second):
        assert MINTED.fullmatch(minted) and minted.startswith(f"pcw:{sid[:8]}:")
    assert first != second
    assert [s.window_id for s in window_spans(rt.branch(), sid)] == [
        f"pcw:{sid[:8]}:root",
        first,
        second,
    ]
    # The real Pi reads the file back byte for byte (it is a plain Pi session).
    (answer,) = run_pi([{"kind": "inspect", "path": str(rt.session.path), "leaves": [None]}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == Path(str(rt.session.path)).read_text(encoding="utf-8")


def _fork_within_a_minute(env: Any, kit: Any, **options: Any) -> tuple[Runtime, Session]:
    """A source session with a root boot listing a session note, then a fork in the same ms."""
    clock = lambda: FIXED_MS  # noqa: E731 - source and fork share one millisecond
    source = Session.create(env.cwd, env.sessions, now=clock)
    rt = env.runtime(source, **options)
    rt.call_tool("notes_write", {"path": "source-plan.md", "content": "the source's plan"})
    kit.user(source, "the task")
    rt.session_start("startup")
    kit.assistant(source, "working")
    forked = source.fork(env.sessions)
    assert forked.session_id != source.session_id
    assert forked.session_id[:8] == source.session_id[:8], "the collision: one 8-char prefix"
    assert session_created_ms(forked.session_id) == session_created_ms(source.session_id)
    return rt, forked


def test_the_collision_the_fork_safe_option_avoids(env, kit):
    # The extension's naming: the fork's root id is its source's, so the copied root boot
    # passes for the fork's own. Its notes index lists the source session's notes, which the
    # fork's bare addresses cannot reach (the fork's session home is its own).
    rt, forked = _fork_within_a_minute(env, kit)
    fork_rt = env.runtime(forked)
    assert fork_rt.session_start("fork").action == "present", "no boot of its own"
    assert fork_rt.window_id == rt.window_id == f"pcw:{forked.session_id[:8]}:root"
    (boot,) = [m for m in fork_rt.context().messages if m.get("customType") == BOOT_TYPE]
    assert "source-plan.md · updated" in boot["content"], "the source session's index"
    missing = fork_rt.call_tool("notes_read", {"path": "source-plan.md"})
    assert missing.is_error and "not found" in missing.text


def test_the_fork_safe_option_gives_a_quick_fork_its_own_windows(env, kit, run_pi):
    rt, forked = _fork_within_a_minute(env, kit, fork_safe_window_ids=True)
    source = rt.session
    assert rt.window_id == f"pcw:{source.session_id}:root"
    fork_rt = env.runtime(forked, fork_safe_window_ids=True)
    assert fork_rt.session_start("fork").action == "root-boot", "the copied boot is not its own"
    assert _boots(forked.branch()) == [
        f"pcw:{source.session_id}:root",
        f"pcw:{forked.session_id}:root",
    ]
    (boot,) = [m for m in fork_rt.context().messages if m.get("customType") == BOOT_TYPE]
    assert boot["details"] == {"windowId": f"pcw:{forked.session_id}:root"}
    assert "source-plan.md" not in boot["content"], "its own (empty) session home"
    fork_reset, source_reset = _wipe(fork_rt, kit), _wipe(rt, kit)
    assert fork_reset.startswith(f"pcw:{forked.session_id}:")
    assert source_reset.startswith(f"pcw:{source.session_id}:")
    source_ids = {s.window_id for s in window_spans(source.branch(), source.session_id)}
    fork_ids = {s.window_id for s in window_spans(forked.branch(), forked.session_id)}
    assert not source_ids & fork_ids
    # The naming is the session's: a runtime without the option keeps reading it that way.
    plain = env.runtime(Session.open(forked.path))
    assert plain.session_start("resume").action == "present"
    assert plain.window_id == fork_reset
    answers = run_pi(
        [{"kind": "inspect", "path": str(s.path), "leaves": [None]} for s in (source, forked)]
    )
    for answer, session in zip(answers, (source, forked), strict=True):
        assert "error" not in answer, answer
        assert answer["sessionId"] == session.session_id


def test_a_session_written_before_this_change_keeps_its_whole_id_windows(env, kit, tmp_path):
    path = env.sessions / FIXTURE.name
    env.sessions.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURE, path)
    before = path.read_bytes()
    session = Session.open(path)
    assert session.session_id == FIXTURE_ID
    assert naming_on_branch(session.branch(), FIXTURE_ID) is True, "named after the whole id"
    root, reset = f"pcw:{FIXTURE_ID}:root", f"pcw:{FIXTURE_ID}:9f767c45"
    rt = env.runtime(session)
    assert rt.session_start("resume").action == "present", "its boot is still found"
    assert path.read_bytes() == before, "opening it writes nothing"
    assert [s.window_id for s in window_spans(rt.branch(), rt.session_id)] == [root, reset]
    assert rt.window_id == reset
    provider = rt.context().messages
    # The fixture was written in the earlier dialect: its boots are still the ones served.
    assert [m.get("customType") for m in provider if m["role"] == "custom"] == [
        "pi-context/boot",
        "pi-context/continuation",
    ]
    listed = json.loads(rt.call_tool("history_windows").text)
    assert {w["window_id"] for w in listed["windows"]} == {root, reset}
    # Back on the root window (a sibling of the reset), the old root boot still serves.
    root_leaf = next(e["id"] for e in rt.branch() if e.get("customType") == "pi-context/boot")
    assert rt.tree(root_leaf).action == "present"
    assert rt.window_id == root
    # Its new windows keep its naming.
    rt.tree(session.entries[-1]["id"])
    new = _wipe(rt, kit)
    assert re.fullmatch(rf"pcw:{FIXTURE_ID}:[0-9a-f]{{8}}", new)
    assert current_window_id(rt.branch(), rt.session_id) == new


def _extension_session(run_pi: Any, cwd: Path, directory: Path) -> tuple[Path, str, str]:
    """A session the real Pi wrote in the extension's naming: root boot, a reset, more work."""
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


def test_a_session_the_extension_wrote_keeps_its_windows_even_with_the_option(env, kit, run_pi):
    path, root, minted = _extension_session(run_pi, env.cwd, env.sessions)
    before = path.read_bytes()
    session = Session.open(path)
    assert naming_on_branch(session.branch(), session.session_id) is False
    rt = env.runtime(session, fork_safe_window_ids=True)
    assert rt.session_start("resume").action == "present", "its boot is still found"
    assert path.read_bytes() == before, "opening it writes nothing"
    assert [s.window_id for s in window_spans(rt.branch(), rt.session_id)] == [root, minted]
    assert rt.window_id == minted
    root_leaf = next(e["id"] for e in rt.branch() if e.get("customType") == BOOT_TYPE)
    assert rt.tree(root_leaf).action == "present"
    assert rt.window_id == root
    rt.tree(session.entries[-1]["id"])
    new = _wipe(rt, kit)
    assert MINTED.fullmatch(new) and new.startswith(f"pcw:{rt.session_id[:8]}:")


def test_a_session_mixing_both_namings_keeps_every_window(env, kit):
    # Written by the extension (root in its form) and then by this project before the change
    # (a reset named after the whole id): the extension's own root still decides the root.
    session = Session.create(env.cwd, env.sessions)
    sid = session.session_id
    kit.user(session, "task")
    session.append_custom_message(
        BOOT_TYPE, "root boot", False, {"windowId": f"pcw:{sid[:8]}:root"}
    )
    whole = f"pcw:{sid}:0badcafe"
    session.append_compaction("", None, 0)
    session.append_custom(RESET_MARKER_TYPE, {"windowId": whole})
    session.append_custom_message(BOOT_TYPE, "reset boot", False, {"windowId": whole})
    session.append_custom_message(CONTINUATION_TYPE, "go on", False)
    for fork_safe in (False, True):
        spans = window_spans(session.branch(), sid, fork_safe=fork_safe)
        assert [s.window_id for s in spans] == [f"pcw:{sid[:8]}:root", whole]
    rt = env.runtime(Session.open(session.path))
    assert rt.session_start("resume").action == "present"


def test_copied_ids_never_decide_a_forks_naming(env, kit):
    now = [FIXED_MS]
    source = Session.create(env.cwd, env.sessions, now=lambda: now[0])
    sid = source.session_id
    root, minted = f"pcw:{sid[:8]}:root", f"pcw:{sid[:8]}:0badcafe"
    kit.user(source, "old task")
    source.append_custom_message(BOOT_TYPE, "old root boot", False, {"windowId": root})
    source.append_compaction("", None, 0)
    source.append_custom(RESET_MARKER_TYPE, {"windowId": minted})
    source.append_custom_message(BOOT_TYPE, "old reset boot", False, {"windowId": minted})
    assert naming_on_branch(source.branch(), sid) is False, "the source wrote these itself"
    now[0] += 1000  # a second later: still one 8-character prefix
    forked = source.fork(env.sessions)
    fork_id = forked.session_id
    assert fork_id[:8] == sid[:8]
    assert naming_on_branch(forked.branch(), fork_id) is None, "copied, not written by the fork"
    assert root_window_id(fork_id, forked.branch()) == root, "the extension's naming collides"
    assert root_window_id(fork_id, forked.branch(), fork_safe=True) == f"pcw:{fork_id}:root"
    assert current_window_id(forked.branch(), fork_id) == minted, "the copied window stays"
    fresh = mint_window_id(forked.branch(), fork_id, fork_safe=True)
    assert fresh.startswith(f"pcw:{fork_id}:") and fresh != minted
    again = mint_window_id(forked.branch(), fork_id, random.Random(1))
    assert again.startswith(f"pcw:{sid[:8]}:") and again != minted, "never a taken id"


_SESSION_IDS = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,40}[A-Za-z0-9])?", fullmatch=True)


@given(_SESSION_IDS, _SESSION_IDS, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_fork_safe_ids_of_distinct_sessions_never_meet(first, second, seed_a, seed_b):
    assume(first != second)
    safe_a = {
        root_window_id(first, fork_safe=True),
        mint_window_id([], first, random.Random(seed_a), fork_safe=True),
    }
    safe_b = {
        root_window_id(second, fork_safe=True),
        mint_window_id([], second, random.Random(seed_b), fork_safe=True),
    }
    assert not safe_a & safe_b
    # The extension's naming keeps sessions apart only as far as their first 8 characters.
    plain_a = {root_window_id(first), mint_window_id([], first, random.Random(seed_a))}
    plain_b = {root_window_id(second), mint_window_id([], second, random.Random(seed_b))}
    assert bool(plain_a & plain_b) <= (first[:8] == second[:8])
    assert root_window_id(first) == f"pcw:{first[:8]}:root"
