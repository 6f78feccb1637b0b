"""`pi-context conformance` end to end: exit status, JSON, JUnit, the bundle and --replay."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from pi_context.statemachine.reset_control import committed_specs

UPGRADE = "close_out.upgrade-manual"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def wrong_run(
    tmp_path_factory: pytest.TempPathFactory, broken_cmd: Callable[[str], str]
) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("wrong")
    done = cli(
        "--impl",
        broken_cmd("wrong"),
        "--spec",
        "reset-control@0.26",
        "--examples",
        "40",
        "--json",
        str(out / "report.json"),
        "--junit",
        str(out / "junit.xml"),
        "--bundle",
        str(out / "bundle"),
        "--quiet",
    )
    return done, out


def test_a_conforming_implementation_exits_0(serve_cmd: str, tmp_path: Path) -> None:
    done = cli("--impl", serve_cmd, "--examples", "5", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"conforms: {len(committed_specs())} spec(s)" in done.stdout
    assert not (tmp_path / "pi-context-conformance").exists()  # no bundle without failures


def test_a_wrong_implementation_exits_1_with_reports(
    wrong_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = wrong_run
    assert done.returncode == 1, done.stderr
    assert "DOES NOT CONFORM (reset-control@0.26)" in done.stdout
    assert f"row {UPGRADE}: 2 step(s)" in done.stdout
    data = json.loads((out / "report.json").read_text())
    assert data["ok"] is False
    assert [s["id"] for s in data["specs"]] == ["reset-control@0.26"]
    failing = {row for row, t in data["specs"][0]["rows"].items() if t["failed"]}
    assert failing == {UPGRADE}
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite[@name='reset-control@0.26']")
    assert suite is not None and suite.get("failures") == "2"
    case = suite.find(f"testcase[@name='{UPGRADE}']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and "shortest failing trace" in (failure.text or "")
    assert f"failing traces written to {out / 'bundle'}/" in done.stdout
    assert (out / "bundle" / f"reset-control@0.26--{UPGRADE}.itf.json").is_file()
    assert (out / "bundle" / f"reset-control@0.26--{UPGRADE}.mmd").is_file()


def test_a_bundled_trace_replays(
    wrong_run: tuple[subprocess.CompletedProcess[str], Path],
    serve_cmd: str,
    broken_cmd: Callable[[str], str],
) -> None:
    _done, out = wrong_run
    itf = out / "bundle" / f"reset-control@0.26--{UPGRADE}.itf.json"
    again = cli("--impl", broken_cmd("wrong"), "--replay", str(itf))
    assert again.returncode == 1
    assert "DOES NOT CONFORM at step 2" in again.stdout
    fixed = cli("--impl", serve_cmd, "--replay", str(itf))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "conforms on this trace" in fixed.stdout


def test_bad_arguments_are_named(tmp_path: Path, serve_cmd: str) -> None:
    done = cli("--impl", "  ")
    assert done.returncode == 2 and "--impl: the implementation command is empty" in done.stderr
    done = cli("--impl", serve_cmd, "--spec", "reset-control@7")
    assert done.returncode == 2 and "unknown spec 'reset-control@7'" in done.stderr
    junk = tmp_path / "junk.itf.json"
    junk.write_text("{not json")
    done = cli("--impl", serve_cmd, "--replay", str(junk))
    assert done.returncode == 2 and "cannot read an ITF trace" in done.stderr
    done = cli("--impl", serve_cmd, "--timeout", "0")
    assert done.returncode == 2 and "--timeout 0.0: must be > 0" in done.stderr
    for stream in (done.stdout, done.stderr):
        assert "Traceback" not in stream
