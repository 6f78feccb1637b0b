"""Regression tests for the first-hour defects of `verify`, `conformance` and `mutate`:
no traceback for --examples 0, no temp folders or .hypothesis/ left behind, a failing
hypothesis run reported as failed with progress, --docs never writing into an install."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.cli.mutate import docs_root, is_checkout
from pi_context.spec import SPECS_DIR

PY = shlex.quote(sys.executable)
ABORTED = (
    "      then: post.request.phase == 'none' and post.overflow == 'idle' and effect == 'none'"
)


def run(args: list[str], cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "TMPDIR": str(tmp),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_verify_examples_0_skips_hypothesis_cleanly(work: Path, tmp_path: Path) -> None:
    done = run(["verify", "--spec", "reset-control@0.25", "--examples", "0"], work, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "| skipped " in done.stdout
    bad = run(["verify", "--spec", "reset-control@0.25", "--examples", "-1"], work, tmp_path)
    assert bad.returncode == 2
    assert "pi-context verify: --examples -1: must be >= 0" in bad.stderr


def test_a_spec_file_run_leaves_no_temp_folder_and_no_hypothesis_dir(
    work: Path, tmp_path: Path
) -> None:
    # a copy that differs from the committed spec is generated on the fly
    spec = work / "copy.yaml"
    text = (SPECS_DIR / "reset-control@0.25.yaml").read_text(encoding="utf-8")
    spec.write_text("# a copy\n" + text, encoding="utf-8")
    done = run(["verify", "--spec", str(spec), "--examples", "5"], work, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "code generated for this run" in done.stderr
    assert not list((tmp_path / "tmp").glob("pi-context-gen-*"))
    assert sorted(p.name for p in work.iterdir()) == ["copy.yaml"]


def test_conformance_leaves_no_hypothesis_dir(work: Path, tmp_path: Path) -> None:
    impl = f"{PY} -m pi_context serve"
    done = run(
        ["conformance", "--impl", impl, "--spec", "reset-control@0.25"]
        + ["--examples", "3", "--no-exhaustive", "--quiet"],
        work,
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(work.iterdir()) == []


def test_a_failing_hypothesis_run_is_reported_failed_with_progress(
    work: Path, tmp_path: Path
) -> None:
    text = (SPECS_DIR / "reset-control@0.26.yaml").read_text(encoding="utf-8")
    assert ABORTED in text
    spec = work / "broken.yaml"
    broken = (
        "      then: not (post.request.phase == 'none' and pre.request.phase == 'tool-requested')"
    )
    spec.write_text(text.replace(ABORTED, broken), encoding="utf-8")
    done = run(["verify", "--spec", str(spec), "--seed", "3"], work, tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    table = next(line for line in done.stdout.splitlines() if line.startswith("| reset"))
    assert "skipped" not in table and "FAILED, " in table
    assert "hypothesis: failing trace of" in done.stderr and "shrinking it" in done.stderr
    assert "hypothesis: FAILED; shrunk to" in done.stderr
    assert done.stdout.count("hypothesis found a failing trace") == 1
    assert "Falsifying example" not in done.stdout + done.stderr


def test_mutate_docs_writes_only_into_a_checkout(tmp_path: Path) -> None:
    checkout = Path(__file__).resolve().parents[2]
    assert is_checkout(checkout)
    install = tmp_path / "venv" / "lib" / "python3.11"  # what a wheel install resolves to
    (install / "site-packages" / "pi_context").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert docs_root(None, install, elsewhere) is None
    assert docs_root(None, install, checkout / "src") == checkout
    assert docs_root(None, checkout, elsewhere) == checkout
    assert docs_root(tmp_path, checkout, checkout) is None
    assert docs_root(checkout, install, elsewhere) == checkout


def test_mutate_docs_refuses_a_root_that_is_not_a_checkout(work: Path, tmp_path: Path) -> None:
    done = run(
        ["mutate", "--spec", "reset-control@0.25", "--docs", "--root", str(work), "--quiet"],
        work,
        tmp_path,
    )
    assert done.returncode == 2
    assert f"{work} is not one" in done.stderr
    assert "--docs writes into a pi-context checkout's docs/" in done.stderr
    assert list(work.iterdir()) == []


def test_the_readme_states_the_requirements_and_the_typescript_build() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    setup = readme[readme.index("## Set up") : readme.index("## Tests")]
    assert "Python ≥ 3.11" in setup and "Node.js and npm" in setup
    build = setup.index("python -m pi_context.codegen.tsbuild")
    assert build < setup.index('pi-context conformance --impl "node bindings-ts/adapter.mjs"')
