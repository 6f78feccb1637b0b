"""A session id too long (or too odd) to name windows is refused where windows are minted.

The attack: a hand-made session header carries a 10 KB id. Every window id embeds the whole
session id, so such a session would mint ids no tool can deliver whole. The runtime refuses it
at session start with ``WindowIdError`` (nothing is written), the binding never creates such a
session, and an id at the limit works end to end with every window id shown whole.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.addresses import ADDRESS_MAX_CHARS, SESSION_ID_MAX_CHARS
from pi_context.bindings.history.tools import TOOLS as HISTORY_TOOLS
from pi_context.bindings.runtime.boot import BootInput
from pi_context.bindings.runtime.boot_shelves import render_boot
from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.windows import (
    WindowIdError,
    check_session_id,
    mint_window_id,
)
from pi_context.bindings.tools import ToolContext

HISTORY = {tool.name: tool for tool in HISTORY_TOOLS}


def _hostile_copy(session: Session, directory: Path, session_id: str) -> Path:
    """The session's file with its header id replaced, as a hand edit would."""
    assert session.path is not None
    lines = session.path.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["id"] = session_id
    lines[0] = json.dumps(header, ensure_ascii=False)
    target = directory / "hostile.jsonl"
    target.write_text("\n".join(lines), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    "session_id",
    ["s" * (SESSION_ID_MAX_CHARS + 1), "s" * 10_000, "two\nlines"],
    ids=["one-over", "10kb", "newline"],
)
def test_a_hostile_session_id_is_refused_at_session_start_and_nothing_is_written(
    env: Any, kit: Any, session_id: str
) -> None:
    source = Session.create(env.cwd, env.sessions)
    kit.user(source, "the task")
    path = _hostile_copy(source, env.sessions, session_id)
    before = path.read_bytes()
    hostile = Session.open(path)
    assert hostile.session_id == session_id, "opening and reading the file still work"
    rt = env.runtime(hostile)
    with pytest.raises(WindowIdError, match="session id"):
        rt.session_start("startup")
    assert path.read_bytes() == before, "no boot was appended under an unusable id"
    with pytest.raises(WindowIdError):
        mint_window_id(hostile.branch(), session_id)


def test_a_refused_session_switch_keeps_the_current_session(env: Any, kit: Any) -> None:
    good = Session.create(env.cwd, env.sessions)
    kit.user(good, "the task")
    rt = env.runtime(good)
    rt.session_start("startup")
    hostile = Session.open(_hostile_copy(good, env.sessions, "h" * 10_000))
    with pytest.raises(WindowIdError):
        rt.session_start("resume", hostile)
    assert rt.session is good


@pytest.mark.parametrize("how", ["create", "fork", "clone_branch"])
def test_the_binding_never_creates_a_session_id_over_the_limit(tmp_path: Path, how: str) -> None:
    too_long = "s" * (SESSION_ID_MAX_CHARS + 1)
    source = Session.create(tmp_path, tmp_path)
    source.append_message({"role": "user", "content": "x", "timestamp": 1})
    with pytest.raises(SessionError, match=f"the limit is {SESSION_ID_MAX_CHARS}"):
        if how == "create":
            Session.create(tmp_path, tmp_path, session_id=too_long)
        elif how == "fork":
            source.fork(tmp_path, session_id=too_long)
        else:
            source.clone_branch(session_id=too_long)


def test_a_session_id_at_the_limit_mints_whole_window_ids_the_tools_round_trip(
    env: Any, kit: Any
) -> None:
    session_id = "s" * SESSION_ID_MAX_CHARS
    check_session_id(session_id)
    session = Session.create(env.cwd, env.sessions, session_id=session_id)
    rt = env.runtime(session, fork_safe_window_ids=True)  # window ids embed the whole id
    kit.user(session, "please close out")
    rt.session_start("startup")
    assert json.loads(rt.call_tool("wipe_memory").text)["status"] == "rollover_requested"
    result = asyncio.run(rt.turn_end("completed", kit.assistant(session, "closing out")))
    rt.append(result.drafts)
    minted = result.window_id
    assert minted is not None and minted.startswith(f"pcw:{session_id}:")
    assert len(minted) <= ADDRESS_MAX_CHARS
    ctx = ToolContext(session_path=session.path)
    windows = json.loads(HISTORY["history_windows"].run(ctx, {}).text)["windows"]
    assert [row["window_id"] for row in windows] == [minted, f"pcw:{session_id}:root"]
    for row in windows:
        listed = json.loads(HISTORY["history_list"].run(ctx, {"window_id": row["window_id"]}).text)
        assert len(listed["items"]) == row["item_count"] > 0


def test_every_minted_id_is_an_address_for_any_accepted_session_id() -> None:
    rng = random.Random(5)
    for length in (1, 36, SESSION_ID_MAX_CHARS):
        session_id = "".join(rng.choice("abc.-_019") for _ in range(length))
        check_session_id(session_id)
        for fork_safe in (False, True):
            minted = mint_window_id([], session_id, rng, fork_safe=fork_safe)
            assert len(minted) <= ADDRESS_MAX_CHARS


def test_a_boot_shows_a_hostile_window_id_as_unaddressable_instead_of_failing() -> None:
    huge = "pcw:" + "w" * 40_000
    text = render_boot(
        BootInput(
            agent_name="pi",
            first_window_id="pcw:abc:root",
            current_window_id=huge,
            previous_window_id="pcw:abc:root",
        )
    )
    assert "Current context window id: (unaddressable: the window id is 40004 characters" in text
    assert "First context window id: pcw:abc:root" in text
    assert "w" * 600 not in text
