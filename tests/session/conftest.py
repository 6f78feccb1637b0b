"""Fixtures for the session binding tests: Pi's fixtures and the real Pi, installed on demand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session.jsonl import encode

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(
    os.environ.get("PI_SESSION_FIXTURES", REPO.parent / "shared" / "fixtures" / "pi-sessions")
)
PI_PACKAGE = "@earendil-works/pi-coding-agent@1.6.0"
PI_CACHE = REPO / ".cache" / "pi-npm"
SESSION_MANAGER = (
    PI_CACHE
    / "node_modules"
    / "@earendil-works"
    / "pi-coding-agent"
    / "dist"
    / "core"
    / "session-manager.js"
)
DRIVER = Path(__file__).with_name("pi_driver.mjs")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"Pi session fixtures not found at {FIXTURES}")
    return FIXTURES


@pytest.fixture(scope="session")
def pi_session_manager() -> Path:
    """Path of Pi's session-manager.js, npm-installed into the git-ignored .cache/ once."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed: cannot run the real Pi SessionManager")
    if not SESSION_MANAGER.exists():
        PI_CACHE.mkdir(parents=True, exist_ok=True)
        manifest = PI_CACHE / "package.json"
        if not manifest.exists():
            manifest.write_text('{"name": "pi-npm-cache", "private": true}\n')
        print(f"installing {PI_PACKAGE} into {PI_CACHE} ...", file=sys.stderr)
        result = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
                PI_PACKAGE,
            ],
            cwd=PI_CACHE,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0 or not SESSION_MANAGER.exists():
            pytest.fail(f"npm install {PI_PACKAGE} failed:\n{result.stdout}\n{result.stderr}")
    return SESSION_MANAGER


PiRunner = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@pytest.fixture(scope="session")
def run_pi(pi_session_manager: Path, tmp_path_factory: pytest.TempPathFactory) -> PiRunner:
    """Answer a batch of driver jobs in one Node process (see pi_driver.mjs)."""
    work = tmp_path_factory.mktemp("pi-driver")
    counter = [0]

    def run(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counter[0] += 1
        jobs_file = work / f"jobs-{counter[0]}.json"
        out_file = work / f"out-{counter[0]}.json"
        jobs_file.write_text(encode(jobs), encoding="utf-8")
        result = subprocess.run(
            ["node", str(DRIVER), str(pi_session_manager), str(jobs_file), str(out_file)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            pytest.fail(f"Pi driver failed ({result.returncode}):\n{result.stderr[-4000:]}")
        answers: list[dict[str, Any]] = json.loads(out_file.read_text(encoding="utf-8"))
        assert len(answers) == len(jobs)
        return answers

    return run
