"""Files the TypeScript extension wrote, opened by this project: read, list, edit and report.

Every file comes from ``extension_layout.lay_out`` (notes written in the extension's format at
the paths its address rule resolves; sessions written through the real Pi SessionManager with
the extension's entries). See ``docs/interop.md`` for each rule and where it comes from.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.runtime.protocol import BOOT_TYPE
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import window_spans
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext, ToolResult

from .extension_layout import (
    BOOT_ADDRESSES,
    NOTES,
    Layout,
    boot_addresses,
    ext_address,
    ext_minted,
    ext_parse,
    ext_resolve,
    ext_window_problems,
)

TOOLS = all_tools()


def context(layout: Layout, session_id: str | None = None) -> ToolContext:
    """Our tools as the extension's identity: same root, project, agent, model, session."""
    return ToolContext(
        notes_home=layout.identity.home,
        cwd=layout.cwd,
        session_id=session_id or layout.identity.session_id,
        agent_name="anonymous",  # what the extension names an agent without PI_NOTES_AGENT
        model_id=layout.model_id,
    )


def call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return TOOLS[name].run(ctx, args)


def refused(ctx: ToolContext, name: str, **args: Any) -> str:
    result = call(ctx, name, **args)  # the dispatcher turns every named failure into a result
    assert result.is_error, result.text
    return str(json.loads(result.text)["error"])


def listed_address(layout: Layout, address: str) -> str:
    """How the extension's own listing names the note written at ``address``."""
    scope, vpath, who = ext_parse(address)
    return ext_address(layout.identity, scope, vpath, who)


def test_every_note_of_the_extension_lists_under_the_address_it_lists_it_by(layout: Layout):
    ctx = context(layout)
    rows = json.loads(call(ctx, "notes_list").text)["files"]
    running = [n for n in NOTES if not n.address.startswith("@agents/")]
    assert sorted(r["address"] for r in rows) == sorted(
        listed_address(layout, n.address) for n in running
    ), "the five running homes, nothing else (no temp file, no other agent's home)"
    stale = {r["address"]: r["stale"] for r in rows}
    assert stale["@human/old-prefs.md"] is True and stale["checkpoint.md"] is False
    for row in rows:
        read = call(ctx, "notes_read", path=row["address"])
        assert not read.is_error, read.text
        header, _, content = read.text.partition("\n")
        assert header.startswith(f"[{row['address']} · ")
        assert content == ext_resolve(layout.identity, row["address"]).read_text("utf-8")
    # Another agent's home is listed when a pattern names it, as the extension does.
    named = json.loads(call(ctx, "notes_list", pattern="@agents/*/**").text)["files"]
    assert sorted(r["address"] for r in named) == [
        "@agents/reviewer/checklist.md",
        "@self/habits.md",
    ], "the running agent's notes as @self/, another agent's by its name"
    only_project = json.loads(call(ctx, "notes_list", pattern="@project/**").text)["files"]
    assert sorted(r["address"] for r in only_project) == [
        "@project/MAP.md",
        "@project/decisions.md",
    ]


def test_the_extensions_input_forms_read_the_same_files(layout: Layout):
    ctx = context(layout)
    for address in ("@self/habits.md", "@model/quirks", "@agents/reviewer/checklist.md"):
        read = call(ctx, "notes_read", path=address)
        assert not read.is_error, read.text
        expected = ext_resolve(layout.identity, address).read_text("utf-8")
        assert read.text.partition("\n")[2] == expected
    assert call(ctx, "notes_read", path="plan/today").details["address"] == "plan/today.md"


def test_edits_land_in_the_extensions_files_in_its_format(layout: Layout):
    ctx = context(layout)
    path = ext_resolve(layout.identity, "@project/decisions.md")
    before = path.read_text("utf-8")
    edited = call(
        ctx,
        "notes_edit",
        path="@project/decisions.md",
        edits=[{"oldText": "streaming", "newText": "incremental"}],
    )
    assert not edited.is_error, edited.text
    assert edited.details["address"] == "@project/decisions.md"
    after = path.read_text("utf-8")
    assert after.endswith("\n---\n\nuse the incremental parser")
    keys = lambda text: re.findall(r"^(\w+):", text.split("\n---\n")[0], re.M)  # noqa: E731
    assert keys(after) == keys(before), "the extension's keys, in its order"
    written = call(ctx, "notes_write", path="@self/lessons.md", content="check twice")
    assert not written.is_error, written.text
    assert written.details["address"] == "@self/lessons.md", "the running agent's home"
    assert (
        ext_resolve(layout.identity, "@self/lessons.md")
        .read_text("utf-8")
        .endswith("\n\ncheck twice")
    )


def test_the_extensions_refusals_are_ours(layout: Layout):
    ctx = context(layout)
    theirs = refused(ctx, "notes_write", path="@agents/reviewer/x.md", content="mine now")
    assert "@agents/reviewer/ is not your home" in theirs
    assert not ext_resolve(layout.identity, "@agents/reviewer/x.md").exists()
    for address in ("@bogus/x.md", "@project", "@/x.md", "a@b.md", "@agents/Not A Slug/x.md"):
        assert "invalid note address" in refused(ctx, "notes_read", path=address), address


def _runtime(layout: Layout, session: Session, **options: Any) -> Runtime:
    config = RuntimeConfig(
        notes_home=layout.identity.home,
        cwd=layout.cwd,
        agent_name="anonymous",
        model=ModelInfo(layout.model_id, "anthropic", 200_000),
        **options,
    )
    return Runtime(session, config)


@pytest.mark.parametrize("boot_layout", ["shelves", "pocket"])
@pytest.mark.parametrize("cut", [False, True], ids=["whole maps", "cut maps"])
def test_every_address_the_boot_prints_reads_back_verbatim(
    layout: Layout, cut: bool, boot_layout: str
):
    if cut:  # maps too big for the boot: cut with a pointer, or replaced by a stub
        for address in ("@project/MAP.md", "@human/MAP.md"):
            path = ext_resolve(layout.identity, address)
            path.write_text(path.read_text("utf-8") + "\n" + "m" * 30_000, "utf-8")
    session = Session.create(layout.cwd, layout.identity.home.parent / "ours")
    rt = _runtime(layout, session, boot_layout=boot_layout)
    assert not rt.call_tool("notes_write", {"path": "plan/mine.md", "content": "x"}).is_error
    rt.session_start("startup")
    (boot,) = [e for e in rt.branch() if e.get("customType") == BOOT_TYPE]
    text = boot["content"]
    printed = boot_addresses(text)
    assert "Agent name: anonymous (brain: claude-sonnet-4-5)" in text
    assert (
        "@self/ is @agents/anonymous/" in text and "@model/ is @models/claude-sonnet-4-5/" in text
    )
    expected_maps = {"@human/MAP.md", "@project/MAP.md"}
    assert expected_maps <= set(printed)
    if boot_layout == "pocket":
        assert ("notes_read @human/MAP.md" in text) is cut
        listed = BOOT_ADDRESSES[0].findall(text)
    else:
        assert ("the whole map: @human/MAP.md)" in text) is cut
        listed = BOOT_ADDRESSES[3].findall(text)
    assert listed[0] == "plan/mine.md", "a bare address: this session's note"
    assert {"@self/habits.md", "@model/quirks.md"} <= set(listed)
    # A new session's home is its own: the layout's session notes are not in its index.
    assert "checkpoint.md" not in listed
    for address in printed:
        read = rt.call_tool("notes_read", {"path": address})
        assert not read.is_error, (address, read.text)
        assert read.details["address"] == address


@pytest.mark.parametrize("written", ["notesoup", "pi-context", "mixed"])
def test_the_extensions_windows_open_intact_and_grow_by_its_rule(
    layout: Layout, run_pi: Any, written: str
):
    # Each generation's sessions, and one the extension upgraded mid-way; we continue each
    # in the dialect of its latest window (the host's choice), which that generation reads.
    path = layout.windows_sessions[written]
    windows = layout.windows_of[written]
    dialect = "pi-context" if written == "pi-context" else "notesoup"
    before = path.read_bytes()
    session = Session.open(path)
    rt = _runtime(layout, session, dialect=dialect)
    assert rt.session_start("resume").action == "present", "no second root boot"
    assert path.read_bytes() == before, "opening it writes nothing"
    assert [s.window_id for s in window_spans(rt.branch(), rt.session_id)] == windows
    assert rt.window_id == windows[1]
    provider = [m.get("customType") for m in rt.context().messages if m["role"] == "custom"]
    assert provider == [f"{dialect}/boot", f"{dialect}/continuation"]
    listed = json.loads(rt.call_tool("history_windows", {}).text)["windows"]
    assert {w["window_id"] for w in listed} == set(windows)
    # One more reset, by us: minted by the extension's rule, one boot per window.
    session.append_message({"role": "user", "content": "wipe again", "timestamp": 7_000})
    assert json.loads(rt.call_tool("wipe_memory", {}).text)["status"] == "rollover_requested"
    result = asyncio.run(rt.turn_end())
    rt.append(result.drafts)
    assert result.window_id is not None
    assert ext_minted(rt.session_id).fullmatch(result.window_id)
    if written != "mixed":  # a mixed session's root window is in a dialect the newest ignores
        assert ext_window_problems(path, dialect=dialect) == []
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": [None]}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == path.read_text("utf-8")


def _items(path: Path) -> list[tuple[str, str]]:
    """Every item of a session as the history tools list it: role and text, oldest first."""
    ctx = ToolContext(session_path=path)
    listed = call(ctx, "history_list", recent_first=False, limit=100)
    assert not listed.is_error, listed.text
    return [(r["role"], r["truncated_content"]) for r in json.loads(listed.text)["items"]]


def test_the_real_pis_sessions_of_each_dialect_read_as_the_same_history(layout: Layout):
    # The three sessions hold the same conversation; only the dialect of their entries differs.
    seen = {name: _items(path) for name, path in layout.windows_sessions.items()}
    assert seen["notesoup"] == seen["pi-context"] == seen["mixed"]
    roles = [role for role, _ in seen["notesoup"]]
    assert roles.count("developer") == 4, "root boot, checkpoint, reset boot, continuation"
    for name, path in layout.windows_sessions.items():
        windows = json.loads(call(ToolContext(session_path=path), "history_windows").text)
        assert [w["window_id"] for w in windows["windows"]][::-1] == layout.windows_of[name]


def _report(path: Path) -> tuple[int, dict[str, Any]]:
    run = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "report", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run.returncode, json.loads(run.stdout)


def test_a_destination_the_typescript_handoff_wrote_verifies(layout: Layout):
    destination = layout.destination
    assert destination is not None and layout.source is not None
    header_line, receipt_line = (
        json.loads(line)
        for line in destination.read_text("utf-8").split("\n")
        if '"type":"session"' in line or "context-memory-handoff-in" in line
    )
    assert header_line["parentSession"] == str(layout.source)
    assert set(receipt_line["data"]) == {"packet", "offerId", "destinationId"}, "no offerDigest"
    code, report = _report(destination)
    assert code == 0, report
    handoff = report["handoff"]
    assert handoff["verdict"] == "verified"
    assert handoff["offerId"] == layout.handoff["offerId"]
    assert handoff["inheritedRecords"] == 2
    ctx = ToolContext(session_path=destination)
    found = call(ctx, "context_history_search", query="API stable", scope="handoff")
    assert not found.is_error, found.text
    cited = layout.handoff["packet"]["state"]["notes"][0]["sourceIds"][0]
    assert cited in found.text
    read = call(ctx, "context_history_read", id=cited, scope="handoff")
    assert not read.is_error and "Keep the API stable." in read.text


def test_a_tampered_typescript_destination_is_still_refused(layout: Layout):
    destination, source = layout.destination, layout.source
    assert destination is not None and source is not None
    original = source.read_text("utf-8")
    source.write_text(original.replace("Keep the API stable.", "Break the API freely."), "utf-8")
    code, report = _report(destination)
    assert code == 1 and report["handoff"]["verdict"] == "handoff_source_changed"
    source.write_text(original, "utf-8")
    text = destination.read_text("utf-8")
    forged = re.sub(r'"destinationId":"[^"]+"', '"destinationId":"someone-else"', text)
    destination.write_text(forged, "utf-8")
    code, report = _report(destination)
    assert code == 1 and report["handoff"]["verdict"] == "handoff_binding"
    ctx = ToolContext(session_path=destination)
    refusal = call(ctx, "context_history_search", query="API", scope="handoff")
    assert refusal.is_error and "handoff_binding" in refusal.text
