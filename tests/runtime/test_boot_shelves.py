"""The default boot layout, the newest extension's: identity, protocol, then the notes index with
one shelf per home (this session, project, agent, model, human), each holding its map cut at
4,096 characters and its three freshest other notes; crumpled notes are left out; the reset
prose is the continuation's, never the boot's."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Callable

from pi_context.bindings.runtime import ModelInfo
from pi_context.bindings.runtime.boot import BootInput
from pi_context.bindings.runtime.boot_shelves import (
    FRESH_PER_HOME,
    MAP_MAX_CHARS,
    render_boot,
    title,
)
from pi_context.bindings.runtime.protocol import CONTINUATION_TYPE, PROTOCOL_OPEN_TAG
from pi_context.bindings.session import Session

from .test_boot import boots, write

SHELVES = (
    "This session (bare paths)",
    "This project (@project/)",
    "You (@self/ = pi)",
    "Your model (@model/ = m1)",
    "Your human (@human/)",
)


def test_identity_then_protocol_then_five_shelves_in_the_extension_s_order(env, kit):
    rt = env.runtime(model=ModelInfo("m1"))
    for scope in ("human", "model", "agent", "project", "session"):
        write(rt, f"{scope}-note.md", f"# {scope} heading\nbody", scope=scope)
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert text.startswith("<context_window>\nAgent name: pi (brain: m1)\n")
    places = [text.index(PROTOCOL_OPEN_TAG), text.index("Notes index\n===========")]
    places += [text.index(f"{label}\n{'-' * len(label)}\n") for label in SHELVES]
    assert places == sorted(places), "identity, protocol, then the shelves in order"
    assert "  session heading\n  session-note.md · updated 0s ago" in text
    assert "  project heading\n  @project/project-note.md" in text
    assert "body" not in text.split("Notes index")[1], "a note is announced, not shown"


def ticking() -> Callable[[], int]:
    """The wall clock moved on by a millisecond per reading: notes written one after another
    never share an update time (which would order them by path instead)."""
    readings = itertools.count()
    return lambda: time.time_ns() // 1_000_000 + next(readings)


def test_three_fresh_notes_per_home_newest_first_and_the_map_takes_no_seat(env, kit):
    rt = env.runtime(Session.create(env.cwd, env.sessions, now=ticking()))
    for index in range(5):
        write(rt, f"n{index}.md", f"note {index}", scope="project")
    write(rt, "MAP.md", "# Project map\nsrc/ is the core", scope="project")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    shown = re.findall(r"^  (@project/\S+) ·", text, re.M)
    assert shown == ["@project/n4.md", "@project/n3.md", "@project/n2.md"][:FRESH_PER_HOME]
    assert "Map, @project/MAP.md:\n\n  # Project map\n  src/ is the core" in text


def test_a_long_map_is_cut_at_4096_characters_naming_the_rest(env, kit):
    rt = env.runtime()
    body = "é" * (MAP_MAX_CHARS + 10)
    write(rt, "MAP.md", body, scope="human")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "é" * MAP_MAX_CHARS + "\n" in text and "é" * (MAP_MAX_CHARS + 1) not in text
    assert f"(map cut after {MAP_MAX_CHARS} characters; the whole map: @human/MAP.md)" in text


def test_crumpled_and_stale_notes_and_maps_are_left_out(env, kit):
    rt = env.runtime()
    write(rt, "MAP.md", "CRUMPLED MAP", scope="project")
    write(rt, "gone.md", "x", scope="project")
    write(rt, "closed.md", "x", scope="project", stale=True)
    write(rt, "kept.md", "x", scope="project")
    for address in ("@project/MAP.md", "@project/gone.md"):
        assert not rt.call_tool("notes_update", {"address": address, "crumpled": True}).is_error
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "@project/kept.md" in text
    assert "CRUMPLED MAP" not in text and "gone.md" not in text and "closed.md" not in text


def test_no_notes_at_all_says_so_and_a_home_without_notes_has_no_shelf(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "No notes yet" in text and not any(label in text for label in SHELVES)


def test_the_reset_prose_is_the_continuation_s_not_the_boot_s(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "first window question")
    rt.call_tool("clear_memory")
    rt.append(asyncio.run(rt.turn_end()).drafts)
    boot = boots(rt.branch())[-1]["content"]
    [continuation] = [e["content"] for e in rt.branch() if e.get("customType") == CONTINUATION_TYPE]
    assert boot.startswith("<context_window>\n") and "Previous context window id:" in boot
    first_line = continuation.splitlines()[0]
    assert first_line and first_line not in boot


def test_titles_are_the_first_heading_else_the_first_line_shortened() -> None:
    assert title("intro\n## Plan for the week\nmore") == "Plan for the week"
    assert title("\n\n  first words  \nsecond") == "first words"
    assert title("#hashtag is not a heading") == "#hashtag is not a heading"
    assert title("x" * 50) == "x" * 40 + "…"
    assert title("   \n\n") is None


def test_the_seeds_layout_stays_one_option_away(env, kit):
    rt = env.runtime(boot_layout="pocket")
    write(rt, "plan.md", "x")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "In your pocket: 1 recently updated note" in text and "Notes index" not in text
    data = BootInput("pi", "w", "w", notes=rt.notes_snapshot())
    assert "Notes index" in render_boot(data), "the default layout is the shelves"
