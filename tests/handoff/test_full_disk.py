"""A handoff on a filesystem that fails the n-th write, for every n (issue 25, item 3).

Every write a handoff makes — the offer, the destination, the runtime's boot in the
destination, the continuation, the automatic-handoff records and the operation log — goes
through the seam of ``pi_context.support.writes``, which ``pi_context.testing.faults``
replaces. For every n from the first write to one past the last, the n-th write is cut short
(half its bytes, then ENOSPC) and every later write fails too, as on a full disk. Whatever n,
the handoff returns a named result (no exception), the source is byte-identical but for whole,
verified offer lines (and, automatic, whole automatic-state records), the runtime is back on
the source unless the destination was verified, and no file in the destination directory
reports ``verified`` without being whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.automatic import AUTO_HANDOFF_EVENT, AutoHandoffPolicy
from pi_context.bindings.handoff.controller import HandoffResult
from pi_context.bindings.handoff.durability import verify_persisted_memory
from pi_context.bindings.handoff.relay import HANDOFF_OUT, inherited_records
from pi_context.bindings.handoff.report import session_report
from pi_context.bindings.session import Session, SessionError
from pi_context.testing import faults

from .test_runtime_handoff import World, make_world


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, monkeypatch)
    w.runtime.handoffs.logs.directory = tmp_path / "logs"
    return w


def run(world: World, automatic: bool) -> HandoffResult | None:
    world.baseline = world.source_path.read_bytes()
    if not automatic:
        return asyncio.run(world.runtime.handoff_command(world.options()))
    world.runtime.handoffs.configure(
        world.options(), AutoHandoffPolicy(pressure_percent=0.001), world.root / "logs"
    )
    return asyncio.run(world.runtime.auto_handoff())


def check(world: World, result: HandoffResult | None, automatic: bool) -> None:
    assert result is not None and result.outcome, "the handoff always ends with a result"
    after = world.source_path.read_bytes()
    assert after.startswith(world.baseline), "the source was rewritten"
    extra = after[len(world.baseline) :]
    assert not extra or extra.endswith(b"\n"), f"a torn line was left on the source: {extra!r}"
    allowed = {HANDOFF_OUT, AUTO_HANDOFF_EVENT} if automatic else {HANDOFF_OUT}
    for line in extra.splitlines():
        entry = json.loads(line)
        assert entry["type"] == "custom" and entry["customType"] in allowed, entry
    if extra:
        verify_persisted_memory(Session.open(world.source_path).branch(), world.source_path)
    files = sorted(world.dest_dir.glob("*.jsonl")) if world.dest_dir.is_dir() else []
    verified = "validating" in result.stages and result.code in (None, "continuation_failed")
    if "continuing" in result.stages and result.destination is not None:
        [dest] = files
        assert world.runtime.session.path == dest
        inherited_records(Session.open(dest, readonly=True))
    else:
        assert world.runtime.session is world.source, "the runtime did not return to the source"
        for path in files:
            try:
                verdict = session_report(path)["handoff"]["verdict"]
            except SessionError:
                continue
            assert verdict != "verified" or verified, f"{path} claims to be a verified handoff"
    if result.outcome != "done":
        assert result.code is not None and result.message


def writes_of_a_handoff(root: Path, automatic: bool) -> int:
    with pytest.MonkeyPatch.context() as mp:
        world = make_world(root, mp)
        world.runtime.handoffs.logs.directory = root / "logs"
        with faults.failing_writes(None) as plan:
            result = run(world, automatic)
        assert result is not None and result.outcome == "done", result and result.message
        return plan.writes


@pytest.mark.parametrize("automatic", [False, True], ids=["manual", "automatic"])
@pytest.mark.parametrize("partial", [True, False], ids=["short-write", "no-write"])
def test_every_failing_write(
    tmp_path_factory: pytest.TempPathFactory, automatic: bool, partial: bool
) -> None:
    total = writes_of_a_handoff(tmp_path_factory.mktemp("count"), automatic)
    assert total >= 5
    seen: dict[str | None, int] = {}
    for n in range(1, total + 2):
        with pytest.MonkeyPatch.context() as mp:
            root = tmp_path_factory.mktemp(f"n{n}")
            world = make_world(root, mp)
            world.runtime.handoffs.logs.directory = root / "logs"
            with faults.failing_writes(n, partial=partial) as plan:
                result = run(world, automatic)
            check(world, result, automatic)
            assert plan.failed > 0 or n > total
            assert result is not None
            seen[result.code] = seen.get(result.code, 0) + 1
    # the sweep reached failures in the switch and in the destination, not only the offer
    assert None in seen, seen  # n beyond the last write, or only log writes failed
    assert {"storage_failed", "handoff_setup_failed"} <= set(seen), seen


def test_a_failed_validation_returns_and_removes(world: World, monkeypatch: Any) -> None:
    """The seed's 244 KiB case: the destination is written, the runtime's own writes into it
    (its boot) fail on the full disk; the handoff returns to the source and the destination
    is gone (it never reports verified)."""
    real = world.runtime.session_start

    def full_disk_start(reason: str = "startup", session: Session | None = None) -> Any:
        if reason == "new":
            with faults.failing_writes(1):
                return real(reason, session)
        return real(reason, session)

    monkeypatch.setattr(world.runtime, "session_start", full_disk_start)
    result = world.run()
    assert result.outcome == "failed" and result.code == "handoff_setup_failed", result.message
    assert result.returned is True and "Returned to the source" in result.message
    assert world.runtime.session is world.source
    assert list(world.dest_dir.glob("*.jsonl")) == []


def test_a_cancelled_return_gives_the_resume_hint(world: World) -> None:
    """Returning to the source is itself cancelled: the user is told to /resume it."""

    def switch(session: Session, reason: str) -> bool:
        if reason == "new":
            world.runtime.session_start(reason, session)
            raise RuntimeError("the destination cannot be initialised")
        return False  # the host's switch back was cancelled

    result = world.run(switch=switch)
    assert result.code == "handoff_setup_failed" and result.returned is False
    assert f"/resume {world.source_path}" in result.message


# --- the demo on a real full disk -----------------------------------------------------------


def _demo(directory: Path, preexec: Any = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pi_context", "demo", "--handoff", "--quiet"]
    return subprocess.run(
        [*command, "--dir", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec,
    )


def _ends_in_one_line(done: subprocess.CompletedProcess[str], where: str) -> str:
    """The demo either completes or says in one line why not: never a traceback."""
    assert "Traceback" not in done.stderr, f"{where}: {done.stderr[-2000:]}"
    assert done.returncode in (0, 1), f"{where}: exit {done.returncode}: {done.stderr[-500:]}"
    if done.returncode == 0:
        return "done"
    ours = [line for line in done.stderr.splitlines() if line.startswith("pi-context demo")]
    handoff = [line for line in done.stdout.splitlines() if line.startswith("handoff:")]
    assert ours or handoff, f"{where}: no reason given: {done.stderr[-500:]}"
    return (ours or handoff)[-1]


@contextlib.contextmanager
def _tmpfs(path: Path, kib: int) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _used_kib(path: Path) -> int:
    info = os.statvfs(path)
    return (info.f_blocks - info.f_bfree) * info.f_frsize // 1024


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root")
def test_the_demo_on_a_full_disk_never_crashes(tmp_path: Path) -> None:
    """Real small filesystems: from one that cannot hold the first session to one just big
    enough, in steps through the handoff's own writes (the window where the issue saw
    tracebacks, a torn offer and a torn destination reporting verified)."""
    with _tmpfs(tmp_path / "big", 64 * 1024) as disk:
        assert _ends_in_one_line(_demo(disk / "run"), "64 MiB") == "done"
        total = _used_kib(disk)
    sizes = [24, total // 2, *range(total - 96, total + 16, 8)]
    outcomes: dict[int, str] = {}
    for kib in sizes:
        with _tmpfs(tmp_path / f"d{kib}", kib) as disk:
            outcomes[kib] = _ends_in_one_line(_demo(disk / "run"), f"{kib} KiB")
    assert outcomes[sizes[-1]] == "done", outcomes
    assert any("handoff: failed" in line for line in outcomes.values()), outcomes
    assert any("No space left on device" in line for line in outcomes.values()), outcomes


def test_the_demo_past_a_file_size_limit_never_crashes(tmp_path: Path) -> None:
    """Where no filesystem can be mounted: every file is capped (RLIMIT_FSIZE), so the
    session's appends fail part-way at each cap."""

    def cap(kib: int) -> Any:
        def apply() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (kib * 1024, kib * 1024))

        return apply

    for kib in (4, 64, 512):
        reason = _ends_in_one_line(_demo(tmp_path / f"c{kib}", cap(kib)), f"cap {kib} KiB")
        assert "File too large" in reason, reason
