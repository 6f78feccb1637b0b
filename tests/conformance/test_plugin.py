"""The pytest plugin, loaded through its pytest11 entry point in a separate pytest process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from pi_context.spec import load, spec_path

UPGRADE = "close_out.upgrade-manual"


def host_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in an empty host project, as a host's CI would run it."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )


def test_the_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    found = [ep for ep in entry_points(group="pytest11") if ep.name == "pi-context"]
    assert [ep.value for ep in found] == ["pi_context.checks.conformance.plugin"]


def test_without_the_option_the_plugin_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_host.py").write_text("def test_host():\n    assert True\n")
    done = host_pytest(tmp_path, "-q")
    assert done.returncode == 0, done.stdout
    assert "1 passed" in done.stdout


def test_a_conforming_implementation_passes_every_item(tmp_path: Path, serve_cmd: str) -> None:
    done = host_pytest(
        tmp_path,
        "-v",
        "--pi-context-impl",
        serve_cmd,
        "--pi-context-spec",
        "reset-control@0.25",
        "--pi-context-examples",
        "5",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pi-context-conformance::reset-control@0.25::handshake PASSED" in done.stdout
    assert "pi-context-conformance::reset-control@0.25::request.record PASSED" in done.stdout
    assert "pi-context-conformance::reset-control@0.25::random traces PASSED" in done.stdout
    rows = len(load(spec_path("reset-control@0.25")).rows)
    assert f"{rows + 2} passed" in done.stdout  # handshake + one item per row + random traces


def test_a_wrong_implementation_fails_its_row_with_the_trace(
    tmp_path: Path, broken_cmd: Callable[[str], str]
) -> None:
    done = host_pytest(
        tmp_path,
        "--pi-context-impl",
        broken_cmd("wrong"),
        "--pi-context-spec",
        "reset-control@0.26",
        "--pi-context-examples",
        "5",
    )
    assert done.returncode == 1
    failed = sorted(line for line in done.stdout.splitlines() if line.startswith("FAILED"))
    assert failed[0].startswith(f"FAILED pi-context-conformance::reset-control@0.26::{UPGRADE}")
    assert all(UPGRADE in line or "random traces" in line for line in failed)
    assert "shortest failing trace (2 step(s)" in done.stdout
    assert "close_out(windowId=w1, source=manual)" in done.stdout
    assert "Traceback" not in done.stdout


def test_an_unserved_spec_is_skipped_unless_asked_for(tmp_path: Path, serve_cmd: str) -> None:
    only25 = f"{serve_cmd} --spec reset-control@0.25"
    done = host_pytest(
        tmp_path, "-q", "--pi-context-impl", only25, "--pi-context-examples", "2", "-k", "0.26"
    )
    assert done.returncode == 0, done.stdout
    assert "the implementation does not serve reset-control@0.26" in done.stdout
    done = host_pytest(
        tmp_path,
        "-q",
        "--pi-context-impl",
        only25,
        "--pi-context-spec",
        "reset-control@0.26",
        "-k",
        "handshake",
    )
    assert done.returncode == 1
    assert "does not serve reset-control@0.26" in done.stdout
