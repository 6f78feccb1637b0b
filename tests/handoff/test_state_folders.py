"""Every folder pi-context writes is named and governed: ``demo --handoff --dir D`` keeps its
operation logs and their locks inside D (as ``--auto-handoff`` does), the state folder is
created private to the user, and ``pi-context cache info`` / ``cache clear --logs`` cover the
operation logs (and nothing else in their folder).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from pi_context.bindings.operations.log import LogWriter, log_files, log_path, remove_logs


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PI_CONTEXT_STATE_DIR"] = str(tmp_path / "state")
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_demo_handoff_keeps_its_logs_and_locks_inside_dir(tmp_path: Path) -> None:
    env = _env(tmp_path)
    run = tmp_path / "run"
    done = _cli(env, "demo", "--handoff", "--windows", "2", "--quiet", "--dir", str(run))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "state").exists(), "the state folder was written outside --dir"
    logs = log_files(run / "logs")
    assert any(p.name.endswith(".jsonl") for p in logs)
    assert any(p.name.endswith(".lock") for p in logs)
    assert f"log:         {run / 'logs'}" in done.stdout


def test_the_state_folders_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "pi-context" / "operations"
    writer = LogWriter(log_path(tmp_path / "s.jsonl", folder))
    assert writer.append({"event": "operation_start"}), writer.failure
    for path in (tmp_path / "state", folder.parent, folder):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in log_files(folder):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_cache_info_and_clear_cover_the_operation_logs(tmp_path: Path) -> None:
    env = _env(tmp_path)
    folder = tmp_path / "state" / "operations"
    writer = LogWriter(log_path(tmp_path / "s.jsonl", folder))
    assert writer.append({"event": "operation_start"})
    theirs = folder / "notes-of-someone-else.txt"
    theirs.write_text("not ours")
    info = json.loads(_cli(env, "cache", "info", "--json").stdout)["operation_logs"]
    assert info["folder"] == str(folder)
    assert sorted(Path(p).name for p in info["files"]) == sorted(p.name for p in log_files(folder))
    assert len(info["files"]) == 2 and info["bytes"] > 0  # the log and its lock
    text = _cli(env, "cache", "info").stdout
    assert f"operation logs: {folder}" in text and "cache clear --logs" in text
    kept = _cli(env, "cache", "clear")
    assert kept.returncode == 0 and len(log_files(folder)) == 2  # not without --logs
    cleared = _cli(env, "cache", "clear", "--logs")
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 2 operation log and lock files" in cleared.stdout
    assert log_files(folder) == [] and theirs.read_text() == "not ours"
    assert remove_logs(folder) == []
