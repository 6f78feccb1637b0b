"""The operation log and its metrics: a scripted run whose figures are computed by hand, a log
that survives ``kill -9`` in the middle of a line (a real killed subprocess), rotation at
3 × 2 MiB, and missing data that is counted, never taken as zero."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.controller import NotesRequest
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.panel import session_panel
from pi_context.bindings.operations import CallUsage, LogSource, read_diagnostics
from pi_context.bindings.operations.log import MAX_FILE_BYTES, LogWriter, log_path, rotated

from .test_runtime_handoff import World, make_world, scripted_generator

T0 = 1_800_000_000_000
CALL_MS = 700


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, monkeypatch)
    w.runtime.handoffs.logs.directory = tmp_path / "logs"
    now = [T0]
    w.runtime.handoffs.clock = lambda: now[0]
    w.now = now  # type: ignore[attr-defined]
    return w


def _tick(world: World, ms: int) -> None:
    world.now[0] += ms  # type: ignore[attr-defined]


def _requests(world: World, *usages: CallUsage | None, fail: bool = False) -> Any:
    """A generator making one logged request per usage (each takes CALL_MS); ``fail``: the
    last request fails and so does the generation."""

    def generator(request: NotesRequest) -> list[dict[str, Any]]:
        for i, usage in enumerate(usages):
            call = request.start_request()
            _tick(world, CALL_MS)
            if fail and i == len(usages) - 1:
                call.end("failed", "provider_error")
                raise HandoffError("operation_failed", "the provider failed")
            call.end("ok", usage=usage)
        return scripted_generator(request)

    return generator


def test_metrics_over_a_scripted_run_equal_the_hand_computed_figures(world: World) -> None:
    rt = world.runtime
    read_a = [("read", {"path": "a.py"})]
    # the host's own replies in the source, through the model-call hook
    rt.model_call(
        started_ms=T0 - 9_000,
        ended_ms=T0 - 7_500,
        usage=CallUsage(input=1_000, output=200, cost=0.01),
        tools=read_a,
    )
    rt.model_call(started_ms=T0 - 7_000, ended_ms=T0 - 6_500, outcome="failed", tools=read_a)
    rt.model_call(
        started_ms=T0 - 6_000,
        ended_ms=T0 - 5_750,
        outcome="cancelled",
        usage=CallUsage(output=50),
    )
    # a handoff whose one request fails (no usage), then one that completes with two requests
    failed = world.run(generator=_requests(world, None, fail=True))
    assert failed.code == "operation_failed", failed.message
    _tick(world, 1_000)
    done = world.run(generator=_requests(world, CallUsage(input=500, output=60, cost=0.003), None))
    assert done.ok, done.message
    _tick(world, 1_000)
    rt.model_call(
        started_ms=world.now[0],  # type: ignore[attr-defined]
        ended_ms=world.now[0] + 800,  # type: ignore[attr-defined]
        usage=CallUsage(input=2_000, output=100, cost=0.02),
    )
    assert rt.session.path == done.destination

    # The destination's window: its own log, and the source's up to the packet (the first
    # handoff, the host's three replies and the second handoff's requests).
    panel = rt.session_panel()
    assert panel["metrics"] == {
        "calls": 7,  # 3 replies + 1 failed request + 2 requests + 1 reply in the destination
        "failed_calls": 2,  # the failed reply, the failed request
        "cancelled_calls": 1,
        "unfinished_calls": 0,
        "failure_rate": 2 / 7,
        "handoffs": 2,  # the failed one (ended in the source), the done one (in the destination)
        "failed_operations": 1,
        "returned_tokens": 200 + 50 + 60 + 100,
        "extra_tokens": 500 + 60,  # our own calls only: the request that reported usage
        "unknown_usage_calls": 2,  # the failed request, the second request
        "native_unknown_usage": 1,  # the failed reply
        "reported_cost": 0.033,
        "call_duration_ms": 1_500 + 500 + 250 + 3 * CALL_MS + 800,
        "suspected_repeated_tools": 1,  # the failed reply repeated read(a.py)
    }
    assert panel["diagnostics"] == {
        "files": [str(log_path(done.destination, rt.handoffs.logs.directory)),
                  str(log_path(world.source_path, rt.handoffs.logs.directory))],
        "missing_primary_files": 0,
        "unavailable_files": 0,
        "invalid_lines": 0,
    }  # fmt: skip

    # The source's own window holds everything it logged, but not the done handoff's end.
    source = session_panel(world.source_path, log_dir=rt.handoffs.logs.directory)
    m = source["metrics"]
    assert (m["calls"], m["failed_calls"], m["handoffs"], m["failed_operations"]) == (6, 2, 1, 1)
    assert m["returned_tokens"] == 200 + 50 + 60 and m["reported_cost"] == 0.013


def test_missing_data_is_counted_not_zero(world: World, tmp_path: Path) -> None:
    done = world.run()
    assert done.ok, done.message
    logs = world.runtime.handoffs.logs.directory
    assert logs is not None and done.destination is not None
    dest_log, source_log = log_path(done.destination, logs), log_path(world.source_path, logs)
    with dest_log.open("ab") as handle:  # a torn last line, as a crash leaves it
        handle.write(b'{"v":1,"event":"call_st')
    source_log.unlink()
    source_log.mkdir()  # a primary log that exists but cannot be read as a file
    panel = session_panel(done.destination, log_dir=logs)
    window = panel["diagnostics"]
    assert (window["missing_primary_files"], window["unavailable_files"]) == (0, 1)
    assert window["invalid_lines"] == 1
    dest_log.unlink()
    window = session_panel(done.destination, log_dir=logs)["diagnostics"]
    assert window["missing_primary_files"] == 1
    assert "missing data is not counted as zero" in "\n".join(
        __import__("pi_context.bindings.handoff.panel", fromlist=["panel_lines"]).panel_lines(
            session_panel(done.destination, log_dir=logs)
        )
    )


# --- crash safety: a real process killed in the middle of a line -------------------------------

_WRITER = """
import os, sys, time
from pathlib import Path
from pi_context.support import writes
from pi_context.bindings.operations.log import LogWriter

path, mode = Path(sys.argv[1]), sys.argv[2]
writer = LogWriter(path)
if mode == "stall":  # the next event's write stops half-way, and the process waits there
    def half(fd, data):
        os.write(fd, data[: len(data) // 2])
        print("half", flush=True)
        time.sleep(600)
    writes.WRITE = half
    writer.append({"v": 1, "event": "call_start", "callId": "torn", "ms": 1, "pad": "x" * 4000})
else:
    print("go", flush=True)
    i = 0
    while True:
        i += 1
        event = {"v": 1, "event": "call_start", "callId": f"c{i}", "ms": i, "pad": "y" * 600_000}
        assert writer.append(event), writer.failure
"""


def _spawn(path: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_the_log_survives_kill_9_in_the_middle_of_a_line(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "s.jsonl"
    LogWriter(path).append({"v": 1, "event": "call_start", "callId": "a", "ms": 1})
    child = _spawn(path, "stall")
    assert child.stdout is not None and child.stdout.readline().strip() == "half"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert not path.read_bytes().endswith(b"\n"), "the kill left no torn line to test"
    # the next writer starts a fresh line; the reader counts the torn one and goes on
    assert LogWriter(path).append({"v": 1, "event": "call_end", "callId": "a", "ms": 2})
    diagnostics = read_diagnostics([LogSource(path, "s")])
    assert diagnostics.invalid_lines == 1
    assert [e["callId"] for e in diagnostics.events] == ["a", "a"]
    assert diagnostics.metrics.calls == 1 and diagnostics.metrics.unfinished_calls == 0


def test_the_log_survives_repeated_kill_9_of_a_busy_writer(tmp_path: Path) -> None:
    """A writer appending large events is killed at random moments, again and again: every
    line is one whole event or counted invalid, and a later writer always gets its line in."""
    path = tmp_path / "logs" / "busy.jsonl"
    rng = random.Random(9)
    kills = 12
    for _ in range(kills):
        child = _spawn(path, "busy")
        assert child.stdout is not None and child.stdout.readline().strip() == "go"
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert LogWriter(path).append({"v": 1, "event": "call_end", "callId": "last", "ms": 10**12})
    files = [p for p in rotated(path) if p.exists()]
    whole = invalid = 0
    for file in files:
        for line in file.read_bytes().split(b"\n"):
            if not line:
                continue
            try:
                json.loads(line)
                whole += 1
            except ValueError:
                invalid += 1
    diagnostics = read_diagnostics([LogSource(path, "busy")])
    assert diagnostics.invalid_lines == invalid <= kills
    assert len(diagnostics.events) == whole and diagnostics.events[-1]["callId"] == "last"


def test_the_log_rotates_at_three_files_of_two_mib(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "r.jsonl"
    writer = LogWriter(path)
    pad = "z" * 200_000
    for i in range(40):  # ~8 MB: more than three files can keep
        assert writer.append({"v": 1, "event": "call_start", "callId": f"c{i}", "ms": i, "p": pad})
    kept = [p for p in rotated(path) if p.exists()]
    assert [p.name for p in kept] == ["r.jsonl", "r.jsonl.1", "r.jsonl.2"]
    assert all(p.stat().st_size <= MAX_FILE_BYTES for p in kept)
    assert not path.with_name("r.jsonl.3").exists()
    events = read_diagnostics([LogSource(path, "r")]).events
    ids = [int(e["callId"][1:]) for e in events]
    assert ids == sorted(ids) and ids[-1] == 39 and ids[0] > 0  # the oldest were dropped


def test_a_log_write_that_fails_never_fails_the_handoff(world: World) -> None:
    logs = world.runtime.handoffs.logs.directory
    assert logs is not None
    logs.parent.mkdir(parents=True, exist_ok=True)
    logs.write_text("not a directory")  # every log write fails
    result = world.run()
    assert result.ok, result.message
    panel = world.runtime.session_panel()
    assert "log write failed" in (panel["logging"]["error"] or "")


def test_progress_for_every_stage_and_call_reaches_the_host(world: World) -> None:
    seen: list[str] = []
    world.runtime.handoffs.host.notify = lambda level, text: seen.append(text)  # type: ignore[method-assign]
    result = world.run(generator=_requests(world, CallUsage(output=1), CallUsage(output=2)))
    assert result.ok, result.message
    assert seen[:4] == [
        "Handoff: preparing",
        "Handoff: generating notes",
        "Handoff: request 1 · total budget 120s",
        "Handoff: request done",
    ]
    assert "Handoff: generating notes · batch 2" in seen
    for stage in ("checking the handoff", "saving", "switching", "verifying the new session",
                  "taking over", "done"):  # fmt: skip
        assert f"Handoff: {stage}" in seen, (stage, seen)
    asyncio.run(asyncio.sleep(0))
