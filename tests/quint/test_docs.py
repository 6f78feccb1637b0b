"""docs/quint.md: its commands run. The reviewer's commands run as written, from a scratch
folder laid out like a checkout; the CI command is the one .ci/run runs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pi_context.codegen.outputs import SOURCE_ROOT

PAGE = SOURCE_ROOT / "docs" / "quint.md"


def _blocks(section: str) -> list[list[str]]:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end > 0 else len(text)]
    return [
        [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
        for block in re.findall(r"```sh[^\n]*\n(.*?)```", body, re.DOTALL)
    ]


def test_the_ci_command_is_the_one_ci_runs() -> None:
    (ci,) = _blocks("The check CI runs")
    assert ci == ["python -m pi_context.checks.quintcheck"]
    assert ci[0] in (SOURCE_ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_reviewers_commands_run(quint_cli: Path, tmp_path: Path) -> None:
    (tmp_path / "src").symlink_to(SOURCE_ROOT / "src")
    (tmp_path / ".cache").symlink_to(SOURCE_ROOT / ".cache")
    commands = [line for block in _blocks("Running Quint on an edited spec") for line in block]
    assert len(commands) == 6, commands
    outputs = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    assert (tmp_path / "review" / "reset_control_0_34.qnt").is_file()
    assert (
        "200 Quint traces (4000 steps) replayed through our reducer, 0 disagreements"
        in (outputs[1])
    )
    assert (
        "200 traces (4000 steps) replayed through our reducer: 200 agree, 0 disagree"
        in (outputs[5])
    )
