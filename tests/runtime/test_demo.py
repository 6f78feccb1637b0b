"""``pi-context demo``: the scripted end-to-end run, its table, and its session file as the real
Pi ``SessionManager`` (@earendil-works/pi-coding-agent, pinned) reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context import spec_ids
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import BOOT_TYPE, CONTINUATION_TYPE, RESET_MARKER_TYPE
from pi_context.demo.scripted import (
    QUEUED_TEXT,
    TASK,
    DemoError,
    run_demo,
    schedule,
)

WINDOWS = 20
COLUMNS = (
    "window",
    "id",
    "behaviour",
    "turns",
    "peak",
    "reminders",
    "warnings",
    "notes",
    "history",
    "modules",
    "cause",
)


def deep_json(text: str) -> Any:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 50_000))
    try:
        return json.loads(text)
    finally:
        sys.setrecursionlimit(limit)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real CLI run over 20 windows, shared by this module's tests."""
    directory = tmp_path_factory.mktemp("demo") / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "demo",
            "--windows",
            str(WINDOWS),
            "--dir",
            str(directory),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = []
    for line in lines[2 : 2 + WINDOWS]:
        cells = line.split()
        rows.append(dict(zip(COLUMNS, [*cells[:10], " ".join(cells[10:])], strict=True)))
    (session_file,) = (directory / "sessions").glob("*.jsonl")
    return {
        "stdout": done.stdout,
        "stderr": done.stderr,
        "rows": rows,
        "dir": directory,
        "session": session_file,
    }


def test_table_has_one_row_per_window_with_the_scripted_behaviours(demo):
    rows = demo["rows"]
    assert [r["window"] for r in rows] == [str(i) for i in range(1, WINDOWS + 1)]
    assert [r["behaviour"] for r in rows] == schedule(WINDOWS)
    assert rows[0]["id"].endswith(":root")
    assert len({r["id"] for r in rows}) == WINDOWS, "every window has its own id"
    assert f"window {WINDOWS}/{WINDOWS}" in demo["stderr"], "progress is shown"


def test_every_window_but_the_last_ends_in_a_reset_with_its_cause(demo):
    causes = [r["cause"] for r in demo["rows"]]
    assert causes[-1] == "-"
    expected = {
        "wipe": "clear_memory",
        "queued": "clear_memory",
        "ride": "hard reserve",
        "overflow": "overflow recovery",
        # the default spec (6bcd8b5, as a508f68) drops the ignored budget close-out at the
        # settle: the window goes on until the hard reserve resets it
        "stop": "hard reserve",
        # the model's clear_memory during the user's close-out is only acknowledged; the
        # close-out commits at the settle and the run stops there
        "manual": "manual close-out (run stopped)",
    }
    for row in demo["rows"][:-1]:
        assert row["cause"] == expected[row["behaviour"]], row
    assert causes.count("overflow recovery") == 1, "one overflow and its single recovery"


def test_each_window_gets_one_reminder_and_one_warning_and_recovers_from_notes(demo):
    for row in demo["rows"][:-1]:
        assert (row["reminders"], row["warnings"]) == ("1", "1"), row
        assert int(row["notes"]) >= 1, row
    for row in demo["rows"][1:]:
        assert int(row["history"]) >= 2, "history tools are called after each reset"
    assert demo["rows"][0]["history"] == "0"
    # riding past the warning (or stopping there, which from a508f68 on only postpones the
    # reset to the hard reserve) fills the window furthest
    full = ("ride", "stop")
    rides = [int(r["peak"]) for r in demo["rows"] if r["behaviour"] in full]
    others = [int(r["peak"]) for r in demo["rows"] if r["behaviour"] not in full]
    assert min(rides) > max(others), "riding past the warning fills the window furthest"
    assert min(rides) > 40_000 - 16_384, "rides go on past the warning line"


def test_footer_counts_the_abort_overflow_commands_and_queued_message(demo):
    assert (
        "aborted turns: 1; overflow recoveries: 1; /wipe-memory commands: 4; "
        "queued messages delivered: 1"
    ) in demo["stdout"]
    assert "lines (tokens left): reminder 24576, warning 16384, hard reserve 4096" in demo["stdout"]


def test_modules_resume_from_the_checkpoint_note_without_gaps(demo):
    """The model only knows where to resume from its notes: no module is skipped or lost."""
    session = Session.open(demo["session"])
    read = [
        block["arguments"]["index"]
        for entry in session.branch()
        if entry["type"] == "message" and entry["message"]["role"] == "assistant"
        for block in entry["message"]["content"]
        if block.get("type") == "toolCall" and block["name"] == "read_module"
    ]
    assert read[0] == 1
    for position in range(1, len(read)):
        assert read[position] <= max(read[:position]) + 1, f"module skipped at {position}"
    assert set(read) == set(range(1, max(read) + 1)), "every module up to the last was read"


def test_queued_message_is_delivered_once_in_the_new_window(demo):
    session = Session.open(demo["session"])
    branch = session.branch()
    texts = [
        (index, e["message"]["content"][0]["text"])
        for index, e in enumerate(branch)
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    queued = [index for index, text in texts if text == QUEUED_TEXT]
    assert len(queued) == 1
    position = queued[0]
    assert branch[position - 1].get("customType") == CONTINUATION_TYPE, "right after the boundary"
    queued_window = schedule(WINDOWS).index("queued")
    markers = [i for i, e in enumerate(branch) if e.get("customType") == RESET_MARKER_TYPE]
    assert markers[queued_window] < position < markers[queued_window + 1]
    aborted = [
        e for e in branch if e["type"] == "message" and e["message"].get("stopReason") == "aborted"
    ]
    assert len(aborted) == 1 and branch.index(aborted[0]) < markers[0]


def test_session_opens_in_the_real_pi_session_manager_with_the_expected_windows(demo, run_pi):
    path = demo["session"]
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": [None]}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == path.read_text(encoding="utf-8"), (
        "Pi re-serializes it byte for byte"
    )
    view = deep_json(answer["views"][0])  # its tree view nests one level per entry
    by_id = {e["id"]: e for e in map(json.loads, answer["rewritten"].splitlines()[1:])}
    branch = [by_id[i] for i in view["branchIds"]]
    ours = Session.open(path)
    assert view["branchIds"] == [e["id"] for e in ours.branch()]
    assert answer["sessionId"] == ours.session_id
    marker_at = [i for i, e in enumerate(branch) if e.get("customType") == RESET_MARKER_TYPE]
    window_ids = [branch[i]["data"]["windowId"] for i in marker_at]
    assert window_ids == [r["id"] for r in demo["rows"][1:]], "Pi sees the same 19 boundaries"
    for i in marker_at:
        checkpoint, boot, continuation = branch[i - 1], branch[i + 1], branch[i + 2]
        assert checkpoint["type"] == "compaction" and checkpoint["summary"] == ""
        assert checkpoint["firstKeptEntryId"] == checkpoint["id"]
        assert boot["customType"] == BOOT_TYPE
        assert boot["details"]["windowId"] == branch[i]["data"]["windowId"]
        assert continuation["customType"] == CONTINUATION_TYPE
    messages = view["projection"]["messages"]
    assert messages[0]["role"] == "compactionSummary" and messages[0]["summary"] == ""
    model_boots = [m for m in messages if m.get("customType") == BOOT_TYPE]
    assert [b["details"]["windowId"] for b in model_boots] == [window_ids[-1]]
    assert not any(TASK in json.dumps(m) for m in messages), "earlier windows are cut off"


def test_demo_is_deterministic(tmp_path):
    first = run_demo(3, tmp_path / "a")
    second = run_demo(3, tmp_path / "b")
    assert [r.__dict__ for r in first.rows] == [r.__dict__ for r in second.rows]
    assert [r.cause for r in first.rows] == ["clear_memory", "hard reserve", ""]


def test_schedule_and_bad_arguments(tmp_path):
    assert schedule(1) == ["finish"]
    assert schedule(3) == ["wipe", "ride", "finish"]
    assert schedule(9)[6:] == ["wipe", "ride", "finish"]
    with pytest.raises(DemoError, match="at least 1"):
        schedule(0)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(DemoError, match="is not empty"):
        run_demo(2, busy)
    assert (busy / "keep.txt").read_text() == "mine"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "demo",
            "--windows",
            "0",
            "--dir",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--windows 0: must be between 1 and 500" in done.stderr
    assert not Path(tmp_path / "x").exists()


def test_the_demo_navigates_the_tree_across_a_reset_without_a_summary(demo):
    line = next(x for x in demo["stdout"].splitlines() if x.startswith("tree navigation: "))
    last_reset_from = demo["rows"][-2]["id"]
    assert f"in window {last_reset_from} (before the last reset) and back" in line
    assert "branch summary suppressed / suppressed, summarizer calls 0, summary entries 0" in line
    assert line.endswith("erased text in context: no")
    entries = [json.loads(x) for x in demo["session"].read_text().splitlines()[1:]]
    assert not any(e["type"] == "branch_summary" for e in entries)


def test_dir_naming_a_file_is_a_clear_error_not_a_traceback(tmp_path):
    """Regression: ``pi-context demo --dir FILE`` ended in a NotADirectoryError traceback."""
    target = tmp_path / "a-file.txt"
    target.write_text("mine")
    for where in (target, target / "below"):
        done = subprocess.run(
            [sys.executable, "-m", "pi_context", "demo", "--windows", "2", "--dir", str(where)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr  # a usage error: checked before the run
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(f"pi-context demo: --dir {where}")
        assert "not a directory" in done.stderr.lower()
    assert target.read_text() == "mine", "the file is left alone"


def test_every_boot_carries_the_maps_of_four_homes(demo):
    assert (
        f"maps (human, project, agent, model MAP.md) in {WINDOWS} of {WINDOWS} boots"
        in (demo["stdout"])
    )
    session = Session.open(demo["session"])
    boots = [e["content"] for e in session.branch() if e.get("customType") == BOOT_TYPE]
    assert len(boots) == WINDOWS
    for text in boots:
        # One shelf per home, in the extension's order, each with its map.
        order = [
            text.index(f"Map, {where}MAP.md:")
            for where in ("@project/", "@self/", "@model/", "@human/")
        ]
        assert order == sorted(order)
        assert "Agent name: demo-agent (brain: scripted-1)" in text


@pytest.mark.parametrize(
    ("spec", "stop", "manual"),
    [
        ("reset-control@0.25", "hard reserve", "/wipe-memory at once"),
        ("reset-control@0.26", "close-out at stop", "/wipe-memory, then wipe_memory"),
        ("reset-control@0.26-proposal", "close-out at stop", "/wipe-memory, then wipe_memory"),
        ("reset-control@0.27", "close-out at stop", "/wipe-memory, then wipe_memory (run stopped)"),
    ],
)
def test_the_demo_runs_under_every_published_spec_and_the_proposal(tmp_path, spec, stop, manual):
    report = run_demo(7, tmp_path / "run", spec=spec)
    causes = {row.kind: row.cause for row in report.rows}
    assert [row.kind for row in report.rows] == schedule(7)
    assert causes["stop"] == stop and causes["manual"] == manual
    assert causes["wipe"] == causes["queued"] == "wipe_memory"
    assert causes["overflow"] == "overflow recovery" and causes["finish"] == ""
    session = Session.open(report.session_path)
    markers = [e for e in session.branch() if e.get("customType") == RESET_MARKER_TYPE]
    assert len(markers) == 6, "every window but the last ends in exactly one boundary"


@pytest.mark.parametrize("spec", spec_ids())
def test_the_demo_runs_unchanged_on_every_committed_spec(tmp_path, spec):
    """Every committed spec, a new one too: each window but the last ends in one boundary
    with the cause its spec states, and the task finishes."""
    report = run_demo(7, tmp_path / "run", spec=spec)
    assert [row.kind for row in report.rows] == schedule(7)
    assert all(row.cause for row in report.rows[:-1]), [(r.kind, r.cause) for r in report.rows]
    assert report.rows[-1].cause == ""
    session = Session.open(report.session_path)
    markers = [e for e in session.branch() if e.get("customType") == RESET_MARKER_TYPE]
    assert len(markers) == 6
    assert report.counters.queued_delivered == 1, "the queued message arrives once"
