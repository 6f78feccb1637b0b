"""Packaging by need: ``pip install pi-context`` (no extras) gives a host the runtime, sessions,
notes, history and handoff without hypothesis; ``verify``, ``mutate`` and ``conformance``
name the ``[verify]`` extra when it is missing.

Slow but in the suite (about 20-40 s): a real virtual environment, a real ``pip install`` of
this checkout (pip's configured wheel cache and indexes make it quick), docs/embedding.md's
host loop run there, and the commands run there.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

from .conftest import REPO, python_blocks

EXTRA_LINE = "which the [verify] extra installs: pip install 'pi-context[verify]'"


@pytest.fixture(scope="module")
def clean_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with this checkout installed, no extras."""
    root = tmp_path_factory.mktemp("clean-venv")
    # creating it and installing into it probe toolchains (rustup writes its settings into
    # HOME): the clean environment gets a home of its own
    home = root / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        venv.create(root / "venv", with_pip=True)
    bindir = root / "venv" / "bin"
    done = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "install", "--quiet", str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": str(home)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return bindir


def _run(bindir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["HOME"] = str(bindir.parent.parent / "home")  # the clean environment's own home
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        list(args), capture_output=True, text=True, timeout=180, cwd=cwd, env=env, check=False
    )


def test_the_base_install_has_no_hypothesis_and_runs_the_embedding_loop(
    clean_env: Path, tmp_path: Path
) -> None:
    python = str(clean_env / "python")
    found = _run(
        clean_env,
        python,
        "-c",
        "import importlib.util as u, pi_context; "
        "print(u.find_spec('hypothesis') is None, pi_context.__file__)",
        cwd=tmp_path,
    )
    assert found.returncode == 0, found.stderr
    absent, where = found.stdout.split()
    assert absent == "True"
    assert str(REPO) not in where  # the installed copy, not this checkout
    loop = tmp_path / "host_loop.py"
    loop.write_text(python_blocks(REPO / "docs" / "embedding.md")[0], encoding="utf-8")
    ran = _run(clean_env, python, str(loop), str(tmp_path / "home"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "1 reset(s); now in window pcw:" in ran.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["verify", "--spec", "reset-control@0.34"],
        ["mutate", "--spec", "reset-control@0.34"],
        ["conformance", "--impl", "pi-context serve"],
    ],
    ids=lambda c: c[0],
)
def test_the_checking_commands_name_the_extra(
    clean_env: Path, tmp_path: Path, command: list[str]
) -> None:
    done = _run(clean_env, str(clean_env / "pi-context"), *command, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip() == (f"pi-context {command[0]}: needs hypothesis, {EXTRA_LINE}"), (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_the_base_dependencies_leave_hypothesis_to_the_extra() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(dep.startswith("hypothesis") for dep in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(dep.startswith("hypothesis") for dep in extras["verify"])
    assert any(dep.startswith("hypothesis") for dep in extras["dev"])
