"""The session panel, export and report: ``pi-context demo --auto-handoff`` end to end (the
policy hands off by itself, the next turn runs in the destination, which the real Pi opens),
then ``session panel --json`` / ``session export`` / ``session report`` on what it left, and
the runtime's panel API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.controller import STAGES
from pi_context.bindings.session import Session

from .test_runtime_handoff import World, make_world

PANEL_KEYS = {"context", "memory", "quality", "auto_handoff", "metrics", "log_path", "policy"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def auto_demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("auto") / "demo"
    run = _cli("demo", "--auto-handoff", "--json", "--dir", str(directory))
    assert run.returncode == 0, run.stderr
    out: dict[str, Any] = json.loads(run.stdout)
    out["stderr"] = run.stderr
    return out


def test_the_demo_hands_off_by_itself_and_continues(auto_demo: dict[str, Any]) -> None:
    assert auto_demo["result"] == "done" and auto_demo["code"] is None
    destination = Path(auto_demo["destination"])
    dest = Session.open(destination, readonly=True)
    assert dest.header["parentSession"] == auto_demo["source"]
    users = [
        e["message"]["content"][0]["text"]
        for e in dest.branch()
        if e.get("type") == "message" and e["message"]["role"] == "user"
    ]
    assert users[-1] == "Carry on." and "Take over the task" in users[-2]
    # progress for every stage and every call reached the CLI (stderr)
    for stage in ("preparing", "generating notes", "checking the handoff", "saving",
                  "switching", "verifying the new session", "taking over", "done"):  # fmt: skip
        assert f"pi-context demo: Handoff: {stage}\n" in auto_demo["stderr"], stage
    assert "Handoff: request 2 · total budget 120s" in auto_demo["stderr"]
    assert "Model reply: request done" in auto_demo["stderr"]


def test_the_destination_panel_shows_the_automatic_state_metrics_and_log(
    auto_demo: dict[str, Any], tmp_path: Path
) -> None:
    destination, logs = auto_demo["destination"], auto_demo["log_dir"]
    run = _cli("session", "panel", destination, "--json", "--log-dir", logs)
    assert run.returncode == 0, run.stderr
    panel = json.loads(run.stdout)
    assert set(panel) >= PANEL_KEYS
    assert panel["auto_handoff"]["status"] == "cooling" and panel["auto_handoff"]["recorded"]
    assert (
        panel["auto_handoff"]["paused"] is False and panel["auto_handoff"]["last_failure"] is None
    )
    m = panel["metrics"]
    assert m["handoffs"] == 1 and m["failed_operations"] == 0
    # every host reply (two per turn with a tool call, one after the handoff) and the two
    # note requests, over the destination and its parent up to the packet
    turns = auto_demo["turns"]
    assert m["calls"] == 2 * (turns - 1) + 1 + 2, m
    assert m["extra_tokens"] == 1_800 + 220 + 900 + 120 and m["unknown_usage_calls"] == 0
    assert Path(panel["log_path"]).is_file() and panel["logging"]["exists"]
    assert panel["diagnostics"]["missing_primary_files"] == 0
    # the file does not say which policy a host ran: the CLI shows the documented defaults,
    # the runtime its own
    assert panel["policy"]["max_requests"] == 4 and panel["policy"]["pressure_percent"] == 80.0
    assert auto_demo["panel"]["policy"]["pressure_percent"] == 30.0
    assert panel["handoff"]["verdict"] == "verified"
    # the runtime's own panel at the end of the demo said the same
    assert auto_demo["panel"]["auto_handoff"]["status"] == "cooling"
    assert auto_demo["panel"]["metrics"] == m
    assert {k: v for k, v in auto_demo["panel"].items() if k not in ("context", "policy")} == {
        k: v for k, v in panel.items() if k not in ("context", "policy")
    }  # the runtime's panel is the CLI's, but for what only the host knows

    text = _cli("session", "panel", destination, "--log-dir", logs)
    assert text.returncode == 0
    assert "automatic handoff: cooling down until" in text.stdout
    assert "log window: 0 missing primary logs" in text.stdout

    out = tmp_path / "report.md"
    export = _cli("session", "export", destination, "--out", str(out), "--log-dir", logs)
    assert export.returncode == 0, export.stderr
    body = out.read_text()
    for heading in ("# Session ", "## Panel", "## Task notes", "## Metrics",
                    "## Automatic handoff policy"):  # fmt: skip
        assert heading in body, heading
    assert "| resume | open_item (inference) | active |" in body


def test_the_destination_opens_in_the_real_pi(auto_demo: dict[str, Any], pi_branch: Any) -> None:
    destination = Path(auto_demo["destination"])
    [dest] = pi_branch([{"path": str(destination)}])
    assert "error" not in dest, dest
    assert dest["header"]["parentSession"] == auto_demo["source"]
    ours = Session.open(destination, readonly=True)
    assert dest["branchIds"] == [e["id"] for e in ours.branch()]
    assert dest["messages"] > 0


def test_the_report_says_what_it_counts(auto_demo: dict[str, Any]) -> None:
    for path in (auto_demo["source"], auto_demo["destination"]):
        run = _cli("session", "report", path)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert not [line for line in lines if line.startswith(("notes:", "coverage:"))], lines
        for wrong in ("through -", " 1 goals", " 1 constraints", " 1 open items"):
            assert wrong not in run.stdout, (wrong, run.stdout)
    dest = _cli("session", "report", auto_demo["destination"]).stdout
    assert "task notes: 3 saved task notes" in dest
    assert "1 active goal · 1 active constraint · 1 active open item" in dest
    source = _cli("session", "report", auto_demo["source"]).stdout
    assert "task notes: 0 saved task notes" in source
    assert "note coverage: none" in source


def test_the_panel_refuses_a_file_that_is_not_a_session(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    for command in (("panel", str(bad)), ("export", str(bad), "--out", str(tmp_path / "o.md"))):
        run = _cli("session", *command)
        assert run.returncode == 1 and "Traceback" not in run.stderr  # a failure, not usage
        assert run.stderr.startswith(f"pi-context session {command[0]}: ")
    assert not (tmp_path / "o.md").exists()


def test_the_runtime_panel_api_export_and_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world: World = make_world(tmp_path, monkeypatch)
    world.runtime.handoffs.logs.directory = tmp_path / "logs"
    updates: list[list[str]] = []
    panel = world.runtime.open_panel(updates.append)
    result = world.run()
    assert result.ok, result.message
    assert len(updates) >= len(STAGES), "the live panel refreshes on every operation event"
    assert any(line.startswith("handoff: verified") for line in updates[-1])
    report = world.runtime.session_panel()
    assert set(report) >= PANEL_KEYS and report["context"]["context_window"] == 200_000
    written = world.runtime.export_session(tmp_path / "out" / "panel.md")
    assert written.read_text().startswith(f"# Session {report['session_id']}")
    world.runtime.close()
    seen = len(updates)
    asyncio.run(world.runtime.auto_handoff_command("pause"))
    world.runtime.model_call(started_ms=1, ended_ms=2)
    assert len(updates) == seen and panel.closed
