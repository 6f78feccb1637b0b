"""The runner owns its implementation's whole process group.

Launchers that fork (``sh -c 'impl; true'``) or leave a grandchild holding the pipes must
fail within the timeout, and nothing they started may outlive the run: every test looks for
its own marker in /proc afterwards. Crashes, hangs and out-of-order replies are named in the
runner's own words.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

from pi_context.checks.conformance.runner import run_conformance
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure
from pi_context.spec.model import Spec

HERE = Path(__file__).parent
PY = shlex.quote(sys.executable)
IMPL = shlex.quote(str(HERE / "fixtures" / "impl.py"))


def alive_with(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def gone(marker: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while alive_with(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def impl(mode: str, marker: str, n: int = 0) -> str:
    return f"{PY} {IMPL} {mode} {n} {marker}"


def test_a_hanging_implementation_behind_sh_fails_in_time_and_leaves_nothing(
    spec26: Spec,
) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    command = f"sh -c {shlex.quote(impl('hang', marker) + '; true')}"
    started = time.monotonic()
    report = run_conformance(
        command, [spec26], examples=0, timeout=0.5, startup_timeout=20, show=False
    )
    assert time.monotonic() - started < 60
    assert not report.ok
    (result,) = report.specs
    assert {s.kind for steps in result.failures.values() for s in steps} == {"hang"}
    assert gone(marker)


def test_the_cli_fails_within_the_timeout_through_sh(spec26: Spec) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    command = f"sh -c {shlex.quote(impl('mute', marker) + '; true')}"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "conformance", "--impl", command, "--quiet"]
        + ["--timeout", "1", "--startup-timeout", "2", "--spec", spec26.id],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    assert "handshake failed: no reply to hello within 2s of starting" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert gone(marker)


def test_a_grandchild_holding_the_pipes_cannot_hang_the_runner() -> None:
    # the launcher starts the real implementation and exits at once; the grandchild keeps
    # stdout and stderr open and never answers
    marker = f"marker-{uuid.uuid4().hex}"
    launcher = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{marker}'])\n"
    )
    command = f"{PY} -c {shlex.quote(launcher)}"
    started = time.monotonic()
    report = run_conformance(command, examples=0, timeout=1, startup_timeout=5, show=False)
    assert time.monotonic() - started < 10
    assert not report.ok
    (error,) = report.errors
    assert error.startswith("handshake failed: the implementation exited with status 0")
    assert gone(marker)


def test_closing_kills_the_whole_process_group() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    # the echo loop runs in the background of a shell that also ignores end of input
    sleeper = f'{PY} -c "import time; time.sleep(300)" {marker}'
    command = f"sh -c {shlex.quote(sleeper + ' & cat')}"
    impl_ = Implementation(command, timeout=5)
    with impl_:
        assert impl_.request(b"ping\n", "ping") == b"ping"
        assert alive_with(marker)
        pgid = impl_.pgid
        assert pgid is not None and os.getpgid(alive_with(marker)[0]) == pgid
    assert gone(marker)


def test_a_hang_kills_the_group_at_once() -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    sleeper = f'{PY} -c "import time; time.sleep(300)" {marker}'
    command = f"sh -c {shlex.quote(sleeper + '; true')}"
    impl_ = Implementation(command, timeout=0.3, startup_timeout=0.5)
    started = time.monotonic()
    try:
        impl_.request(b"ping\n", "ping")
    except ImplementationFailure as fail:
        assert fail.kind == "hang"
    else:
        raise AssertionError("a mute implementation answered")
    assert time.monotonic() - started < 5
    assert gone(marker, within=1.0)


def test_a_crash_after_many_steps_is_named_a_crash(spec26: Spec) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    report = run_conformance(
        impl("crash-after", marker, 150),
        [spec26],
        examples=40,
        steps=30,
        exhaustive=False,
        seed=1,
        timeout=30,
        show=False,
    )
    (result,) = report.specs
    assert not result.ok
    text = "\n".join(result.problems + result.notes)
    assert "Flaky" not in text and "FlakyStrategyDefinition" not in text
    trace = result.random_trace
    assert trace is not None and trace.failing is not None
    assert trace.failing.kind == "crash"
    message = trace.failing.describe()
    # the hello and 150 steps were answered
    assert "exited with status 3" in message and "after 151 replies since it started" in message
    assert "giving up after 150 steps" in message
    assert any("depends on what the implementation did earlier" in n for n in result.notes)
    assert gone(marker)


def test_a_hang_after_many_steps_is_named_a_hang(spec26: Spec) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    report = run_conformance(
        impl("hang-after", marker, 150),
        [spec26],
        examples=40,
        steps=30,
        exhaustive=False,
        seed=1,
        timeout=0.5,
        show=False,
    )
    (result,) = report.specs
    text = "\n".join(result.problems + result.notes)
    assert "Flaky" not in text
    trace = result.random_trace
    assert trace is not None and trace.failing is not None
    assert trace.failing.kind == "hang"
    assert "within 0.5s, after 151 replies since it started" in trace.failing.describe()
    assert gone(marker)


def test_swapped_replies_are_named_out_of_order(spec26: Spec) -> None:
    marker = f"marker-{uuid.uuid4().hex}"
    report = run_conformance(impl("swap", marker), [spec26], examples=0, timeout=30, show=False)
    (result,) = report.specs
    assert not result.ok
    kinds = {s.kind for steps in result.failures.values() for s in steps}
    assert kinds == {"out-of-order"}
    assert any(
        p.startswith("replies came back out of order (swapped in pairs)") for p in result.problems
    )
    step = next(iter(result.failures.values()))[0]
    assert "reply out of order: case" in step.describe()
    assert gone(marker)
