"""The boot message: created once, idempotent across reloads, branch-local, repaired narrowly,
and rendered purely (and within its byte bound) from an explicit notes snapshot."""

from __future__ import annotations

import asyncio
import re
import shutil
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.frontmatter import local_iso
from pi_context.bindings.runtime import Runtime
from pi_context.bindings.runtime.boot import (
    BOOT_MAX_BYTES,
    BootInput,
    preview,
    render_boot,
)
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
    rt = env.runtime()
    kit.user(rt.session, "task before the boot")
    written = write(rt, "decisions.md", "use terra")
    assert rt.session_start("startup").action == "root-boot"
    (boot,) = boots(rt.branch())
    root = f"pcw:{rt.session_id}:root"
    text = boot["content"]
    assert boot["display"] is False and boot["details"] == {"windowId": root}
    assert text.startswith("<context_window>\n"), "no reset line in the root window"
    assert f"First context window id: {root}\nCurrent context window id: {root}\n" in text
    assert "Previous context window id:" not in text
    assert "- session:decisions.md (1 lines, 9 UTF-8 bytes, updated " in text
    assert written["meta"]["updated_at"] in text, "the note's local update time is shown"
    assert "\n  use terra\n" in text
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
    rt = env.runtime()
    kit.user(rt.session, "copied question")
    rt.session_start("startup")
    kit.assistant(rt.session, "copied answer")
    # Made within the same minute, the fork shares its source's 8-character id prefix; window
    # ids name the whole session id, so its root window is still its own.
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
    assert "Recent notes" not in text and "old.md" not in text
    assert PROTOCOL_OPEN_TAG in text


def test_preview_keeps_short_notes_whole_and_long_notes_head_to_tail(env, kit):
    rt = env.runtime()
    long_text = "".join(chr(0x4E00 + i) for i in range(400))  # unique code points
    write(rt, "long.md", long_text)
    write(rt, "short.md", "short-first\nshort-second")
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "  short-first\n  short-second" in text
    (line,) = [ln for ln in text.split("\n") if ln.startswith("  ") and "…" in ln]
    shown = line[2:]
    assert len(shown) == 321, "80 + the ellipsis + 240, nothing shown twice"
    assert shown == long_text[:80] + "…" + long_text[-240:]


@given(st.text(max_size=700))
def test_preview_never_overlaps(body: str) -> None:
    shown = preview(body)
    if len(body) <= 320:
        assert shown == body
    else:
        assert shown == body[:80] + "…" + body[-240:]
        assert len(shown) == 321


def test_reset_boot_names_the_previous_window(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "work")
    rt.call_tool("wipe_memory")
    result = asyncio.run(rt.turn_end())
    rt.append(result.drafts)
    boot = boots(rt.branch())[-1]
    text = boot["content"]
    assert text.startswith(RESET_LINE + "\n\n<context_window>\n")
    root = f"pcw:{rt.session_id}:root"
    assert f"Current context window id: {result.window_id}\n" in text
    assert f"Previous context window id: {root}\n" in text
    assert f"First context window id: {root}\n" in text


def test_boot_is_byte_bounded(env, kit):
    rt = env.runtime()
    for index in range(30):
        write(rt, f"big/{index:02d}.md", f"note {index}\n" + "x" * 5_000)
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert len(text.encode()) <= BOOT_MAX_BYTES
    assert len(re.findall(r"^- session:big/", text, flags=re.M)) == 10
    assert "(20 more not shown here; call notes_list to see every note.)" in text
    data = BootInput("pi", "pcw:a:root", "pcw:a:root", notes=rt.notes_snapshot())
    small = render_boot(data, max_bytes=4_000)
    assert len(small.encode()) <= 4_000
    assert "more not shown here" in small and PROTOCOL_OPEN_TAG in small


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
    rt = env.runtime()
    write(rt, "good.md", "keep me")
    (path,) = list(env.notes.rglob("good.md"))
    raw = path.read_text()
    path.write_text(
        re.sub(r"^(createdAt|updatedAt|lastAccessed): .*$", r"\1: not-a-time", raw, flags=re.M)
    )
    rt.session_start("startup")
    text = boots(rt.branch())[0]["content"]
    assert "keep me" in text
    stamp = re.search(r"good.md \(1 lines, 7 UTF-8 bytes, updated (\S+)\)", text)
    assert stamp is not None, "a finite fallback time is shown"
    assert stamp.group(1) == local_iso(path.stat().st_mtime_ns // 1_000_000), "the file's mtime"


def test_provider_projection_selects_the_boot_by_window_id(env, kit):
    rt = env.runtime()
    rt.session_start("startup")
    kit.user(rt.session, "first window question")
    rt.call_tool("wipe_memory")
    rt.append(asyncio.run(rt.turn_end()).drafts)
    kit.user(rt.session, "second window question")
    provider = rt.context().messages
    assert [m.get("customType") or m["role"] for m in provider] == [
        BOOT_TYPE,
        CONTINUATION_TYPE,
        "user",
    ]
    assert provider == provider_projection(rt.branch(), rt.messages(), rt.session_id)
