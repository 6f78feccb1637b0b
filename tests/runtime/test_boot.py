"""The boot message: created once, idempotent across reloads, branch-local, repaired narrowly,
and rendered purely (and within its byte bound) from an explicit notes snapshot."""

from __future__ import annotations

import asyncio
import re
import shutil
from typing import Any

from pi_context.bindings.notes.frontmatter import local_iso
from pi_context.bindings.notes.note_address import parse_address
from pi_context.bindings.runtime import ModelInfo, Runtime
from pi_context.bindings.runtime.boot import (
    BOOT_MAX_BYTES,
    BootInput,
    relative_time,
)
from pi_context.bindings.runtime.boot_shelves import render_boot
from pi_context.bindings.runtime.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    PROTOCOL_OPEN_TAG,
    RESET_LINE,
    RESET_MARKER_TYPE,
)
from pi_context.bindings.session import Session
from pi_context.bindings.session.boundary import checkpoint_draft
from pi_context.bindings.session.windows import provider_projection


def boots(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("customType") == BOOT_TYPE]


def write(rt: Runtime, path: str, content: str, **extra: Any) -> dict[str, Any]:
    result = rt.call_tool("notes_write", {"path": path, "content": content, **extra})
    assert not result.is_error, result.text
    return dict(result.details)


def test_root_boot_is_created_once_without_a_reset_line(env, kit):
    rt = env.runtime(boot_layout="pocket")
    kit.user(rt.session, "task before the boot")
    write(rt, "decisions.md", "use terra")
    assert rt.session_start("startup").action == "root-boot"
    (boot,) = boots(rt.branch())
    root = f"pcw:{rt.session_id[:8]}:root"
    text = boot["content"]
    assert boot["display"] is False and boot["details"] == {"windowId": root}
    assert text.startswith("<context_window>\n"), "no reset line in the root window"
    assert f"First context window id: {root}\nCurrent context window id: {root}\n" in text
    assert "Previous context window id:" not in text
    assert "Agent name: pi (brain: default)\n" in text
    assert re.search(r"^- decisions\.md \(1 lines, 9 UTF-8 bytes, updated \d+s ago\)$", text, re.M)
    assert "use terra" not in text, "the pocket shows names, never contents"
    assert PROTOCOL_OPEN_TAG in text
    assert rt.session_start("startup").action == "present"
    assert len(boots(rt.branch())) == 1


def test_boot_is_idempotent_across_reload(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "hello")
    reloaded = env.runtime(Session.open(rt.session.path))
    assert reloaded.session_start("reload").action == "present"
    assert reloaded.session_start("resume").action == "present"
    assert len(boots(Session.open(rt.session.path).branch())) == 1


def test_boot_is_branch_local(env, kit):
    rt = env.runtime()
    anchor = kit.user(rt.session, "branch anchor")
    rt.session_start("startup")
    kit.assistant(rt.session, "on the first branch")
    first_leaf = rt.session.leaf_id
    assert rt.tree(anchor).action == "root-boot", "the sibling branch never had a boot"
    kit.user(rt.session, "on the second branch")
    assert rt.tree(first_leaf).action == "present"
    assert len(boots(rt.session.entries)) == 2
    assert len(boots(rt.branch())) == 1


def test_fork_gets_its_own_root_boot_in_place_of_the_copied_one(env, kit):
    rt = env.runtime(fork_safe_window_ids=True)
    kit.user(rt.session, "copied question")
    rt.session_start("startup")
    kit.assistant(rt.session, "copied answer")
    # Made within the same minute, the fork shares its source's 8-character id prefix; with
    # fork-safe window ids (whole session ids) its root window is still its own. (Under the
    # extension's naming it is not: tests/runtime/test_window_ids.py.)
    forked = rt.session.fork(env.sessions)
    assert rt.session_start("fork", session=forked).action == "root-boot"
    root = f"pcw:{forked.session_id}:root"
    provider = rt.context().messages
    kinds = [m.get("customType") or m["role"] for m in provider]
    assert kinds == ["user", BOOT_TYPE, "assistant"], "the new boot takes the first boot's place"
    assert provider[1]["details"] == {"windowId": root}
    assert rt.session_start("reload").action == "present"


def test_stale_notes_leave_the_index_but_stay_listed(env, kit):
    rt = env.runtime()
    write(rt, "old.md", "superseded plan", stale=True)
    write(rt, "new.md", "current plan")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "new.md" in text and "old.md" not in text
    listed = rt.call_tool("notes_list").text
    assert "old.md" in listed


def test_index_is_omitted_when_every_note_is_stale(env, kit):
    rt = env.runtime()
    write(rt, "old.md", "superseded", stale=True)
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "In your pocket" not in text and "old.md" not in text
    assert PROTOCOL_OPEN_TAG in text


def test_reset_boot_names_the_previous_window(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "work")
    rt.call_tool("wipe_memory")
    result = asyncio.run(rt.turn_end())
    rt.append(result.drafts)
    boot = boots(rt.branch())[-1]
    text = boot["content"]
    assert text.startswith("<context_window>\n") and RESET_LINE not in text
    (continuation,) = [e for e in rt.branch() if e.get("customType") == CONTINUATION_TYPE]
    assert continuation["content"].startswith(RESET_LINE + "\n\n"), "the reset prose is here"
    root = f"pcw:{rt.session_id[:8]}:root"
    assert f"Current context window id: {result.window_id}\n" in text
    assert f"Previous context window id: {root}\n" in text
    assert f"First context window id: {root}\n" in text


def test_boot_is_byte_bounded_maps_give_way_first(env, kit):
    rt = env.runtime(boot_layout="pocket")
    write(rt, "MAP.md", "# project map\n" + "p" * 60_000, scope="project")
    write(rt, "MAP.md", "# human map\n" + "h" * 30_000, scope="human")
    for index in range(7):
        write(rt, f"big/{index:02d}.md", f"note {index}\n" + "x" * 5_000)
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert len(text.encode()) <= BOOT_MAX_BYTES
    assert len(re.findall(r"^- big/", text, flags=re.M)) == 5, "the pocket is kept whole"
    assert "# human map" in text, "the broadest map comes first"
    assert "notes_read @human/MAP.md for the rest" in text
    assert "notes_read @project/MAP.md" in text, "a map that no longer fits is still pointed at"
    data = BootInput("pi", "pcw:a:root", "pcw:a:root", notes=rt.notes_snapshot(), layout="pocket")
    small = render_boot(data, max_bytes=4_000)
    assert len(small.encode()) <= 4_000
    assert PROTOCOL_OPEN_TAG in small and "\n- big/" in small


def test_rendering_is_a_pure_function_of_the_snapshot(env, kit):
    rt = env.runtime()
    write(rt, "plan.md", "step one\nstep two")
    data = BootInput("pi", "pcw:a:root", "pcw:a:1234abcd", "pcw:a:root", rt.notes_snapshot())
    before = render_boot(data)
    shutil.rmtree(env.notes)
    assert render_boot(data) == before, "no filesystem read and no clock while rendering"
    assert "plan.md" in before


def test_startup_repairs_an_interrupted_reset_tail(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "work")
    window = f"pcw:{rt.session_id[:8]}:0badf00d"
    rt.session.append_draft(checkpoint_draft())
    rt.session.append_custom(RESET_MARKER_TYPE, {"windowId": window})  # the process died here
    restarted = env.runtime(Session.open(rt.session.path))
    repaired = restarted.session_start("startup")
    assert (repaired.action, repaired.reason) == ("repaired", "boot, continuation")
    tail = restarted.branch()[-2:]
    assert kit.custom_types(tail) == [BOOT_TYPE, CONTINUATION_TYPE]
    assert tail[0]["details"] == {"windowId": window}
    assert f"Previous context window id: pcw:{rt.session_id[:8]}:root" in tail[0]["content"]
    assert restarted.session_start("reload").action == "present"


def test_startup_refuses_repair_when_work_follows_the_marker(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "work")
    rt.session.append_custom(RESET_MARKER_TYPE, {"windowId": f"pcw:{rt.session_id[:8]}:0badf00d"})
    kit.user(rt.session, "later work")
    refused = rt.session_start("startup")
    assert (refused.action, refused.reason) == ("refused", "real conversation follows the marker")
    assert "/wipe-memory" in rt.notices[-1].text
    assert rt.context().abort


def test_an_unreadable_home_is_left_out_with_notices_once_per_window(env, kit):
    rt = env.runtime()
    write(rt, "kept.md", "still indexed")
    env.notes.mkdir(exist_ok=True)
    (env.notes / "human").write_text("a file where the human home should be")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "kept.md" in text
    assert "the human home could not be read" in text and "notes_list" in text
    rt.boot_text(rt.window_id, None)
    human = [n for n in rt.notices if "notes index incomplete" in n.text]
    assert len(human) == 1, "the human hears about it once per window"


def test_malformed_note_timestamps_do_not_poison_the_boot(env, kit):
    rt = env.runtime(boot_layout="pocket")
    write(rt, "good.md", "keep me")
    (path,) = list(env.notes.rglob("good.md"))
    raw = path.read_text()
    path.write_text(
        re.sub(r"^(createdAt|updatedAt|lastAccessed): .*$", r"\1: not-a-time", raw, flags=re.M)
    )
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    stamp = re.search(r"good.md \(1 lines, 7 UTF-8 bytes, updated (\d+s ago)\)", text)
    assert stamp is not None, "a finite fallback time is shown"
    mtime = path.stat().st_mtime_ns // 1_000_000
    snapshot = rt.notes_snapshot()
    data = BootInput("pi", "pcw:a:root", "pcw:a:root", notes=snapshot, layout="pocket")
    assert f"updated {local_iso(mtime)})" in render_boot(data), "the file's mtime"


def test_provider_projection_selects_the_boot_by_window_id(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "first window question")
    rt.call_tool("wipe_memory")
    rt.append(asyncio.run(rt.turn_end()).drafts)
    kit.user(rt.session, "second window question")
    provider = rt.context().messages
    # As the extension sends it: Pi's empty checkpoint summary, then the window's own boot.
    assert [m.get("customType") or m["role"] for m in provider] == [
        "compactionSummary",
        BOOT_TYPE,
        CONTINUATION_TYPE,
        "user",
    ]
    assert provider == provider_projection(rt.branch(), rt.messages(), rt.session_id)
    cut = provider_projection(rt.branch(), rt.messages(), rt.session_id, cut_at_boot=True)
    assert cut == provider[1:], "the named option starts at the boot"


def test_maps_of_several_homes_are_resident_broadest_first(env, kit):
    rt = env.runtime(model=ModelInfo("claude-test", "anthropic", 200_000), boot_layout="pocket")
    write(rt, "MAP.md", "MODEL MAP: tool quirks", scope="model")
    write(rt, "MAP.md", "AGENT MAP: my lessons", scope="agent")
    write(rt, "MAP.md", "PROJECT MAP: src/ holds the core\ndocs/ the pages", scope="project")
    write(rt, "MAP.md", "HUMAN MAP: prefers short answers", scope="human")
    write(rt, "MAP.md", "SESSION MAP: an ordinary note")
    write(rt, "other.md", "STALE MAP BODY", scope="project")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "Agent name: pi (brain: claude-test)\n" in text
    order = [text.index(m) for m in ("HUMAN MAP", "PROJECT MAP", "AGENT MAP", "MODEL MAP")]
    assert order == sorted(order), "human, project, agent, model"
    heading = "Map of the project home (@project/MAP.md):"
    assert f"{heading}\nPROJECT MAP: src/ holds the core\ndocs/" in text
    assert "SESSION MAP" not in text, "a session MAP.md is not resident"
    assert not re.search(r"^- \S*MAP\.md", text, re.M), "maps take no pocket seat"
    assert "- @project/other.md" in text and "STALE MAP BODY" not in text
    # A stale map leaves the boot.
    write(rt, "MAP.md", "PROJECT MAP v2", scope="project", stale=True)
    rt.tree(rt.branch()[0]["id"])  # a sibling branch boots again from a new snapshot
    kit.user(rt.session, "sibling")
    again = rt.boot_text(rt.window_id, None)
    assert "PROJECT MAP" not in again and "HUMAN MAP" in again


def test_pocket_quotas_per_home_newest_first(env, kit):
    rt = env.runtime(model=ModelInfo("m1"), boot_layout="pocket")
    counts = {"session": 7, "project": 3, "human": 3, "agent": 2, "model": 2}
    for scope, count in counts.items():
        for index in range(count):
            write(rt, f"{scope}-{index}.md", f"BODY {scope} {index}", scope=scope)
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    listed = [
        (address.scope, address.path)
        for address in map(parse_address, re.findall(r"^- (\S+) \(", text, re.M))
    ]
    snapshot = rt.notes_snapshot()
    quotas = (("session", 5), ("project", 2), ("human", 2), ("agent", 1), ("model", 1))
    expected = [
        (scope, note.path)
        for scope, seats in quotas
        for note in [n for n in snapshot.notes if n.scope == scope][:seats]
    ]
    assert listed == expected
    for scope, seats in quotas:
        stamps = [n.meta.updated_at for n in snapshot.notes if n.scope == scope]
        assert stamps == sorted(stamps, reverse=True), "newest first within each home"
        assert len([x for x in listed if x[0] == scope]) == seats
    assert "In your pocket: 11 recently updated notes" in text
    assert "BODY" not in text


def test_pocket_times_are_relative_to_the_snapshot(env, kit):
    rt = env.runtime(boot_layout="pocket")
    write(rt, "plan.md", "x")
    snapshot = rt.notes_snapshot()
    updated = snapshot.notes[0].meta.updated_at
    for offset, shown in (
        (0, "0s ago"),
        (59_999, "59s ago"),
        (90_000, "1m ago"),
        (7_200_000, "2h ago"),
        (3 * 86_400_000, "3d ago"),
        (-5_000, "in 5s"),
    ):
        data = BootInput(
            "pi", "w", "w", notes=snapshot, opened_ms=updated + offset, layout="pocket"
        )
        assert f"updated {shown})" in render_boot(data)
        assert relative_time(updated, updated + offset) == shown


def test_a_failing_home_keeps_the_other_maps_and_adds_one_retry_notice(env, kit):
    rt = env.runtime(boot_layout="pocket")
    write(rt, "MAP.md", "PROJECT MAP survives", scope="project")
    env.notes.mkdir(exist_ok=True)
    human = rt.notes_snapshot()  # find where the human home lives, then break it
    assert human.complete
    (path,) = [p for p in env.notes.rglob("*") if p.is_dir() and p.name == "human"] or [
        env.notes / "human"
    ]
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a file where the human home should be")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "PROJECT MAP survives" in text
    assert text.count("notes_list") >= 1 and "could not be read" in text
    notice_at, map_at = text.index("could not be read"), text.index("PROJECT MAP")
    assert notice_at < map_at, "the retry notice comes before the index"
