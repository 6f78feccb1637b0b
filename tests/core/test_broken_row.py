"""Breaking one row of a copy of the 0.26 spec makes `verify --spec` fail with a shortest
counterexample."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pi_context.spec import SPECS_DIR, load
from pi_context.spec.modelcheck import model_check


def copy_with(tmp_path: Path, old: str, new: str) -> Path:
    text = (SPECS_DIR / "reset-control@0.26.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "copy.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


TOOL_COMMIT = """    next: {request: {phase: none}, overflow: idle}
    effect: commit-boundary
    cause: wipe_memory
    why: The model's own wipe_memory commits"""


def test_verify_fails_on_a_broken_row_with_shortest_counterexample(tmp_path: Path) -> None:
    # a row that commits nothing has no cause (the loader says so), so the cause goes too
    broken = TOOL_COMMIT.replace("effect: commit-boundary\n    cause: wipe_memory", "effect: none")
    path = copy_with(tmp_path, TOOL_COMMIT, broken)
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "verify", "--spec", str(path), "--no-hypothesis"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert "FAIL" in out
    assert "transition invariant 'tool-request-commits' violated" in out
    # the shortest trace is two steps: the tool request, then the turn that should commit
    block = out[out.index("'tool-request-commits' violated") :]
    assert "shortest counterexample, 2 step(s)" in block
    assert "1. tool_request(windowId=w1) -> tool-requested(w1) / idle" in block
    assert (
        "2. turn_end(windowId=w1, enabled) -> none / idle  [turn_end.tool-commit; effect none]"
        in block
    )


def test_counterexample_is_minimal(tmp_path: Path) -> None:
    """No shorter trace violates the property: BFS depth equals the reported length."""
    path = copy_with(
        tmp_path,
        "    next: {request: {phase: none}, overflow: spent}\n    effect: recover-overflow",
        "    next: {request: {phase: none}, overflow: idle}\n    effect: recover-overflow",
    )
    spec = load(path)
    result = model_check(spec, show=False)
    by_id = {v.property: v for v in result.violations}
    assert "recovery-spends" in by_id
    assert len(by_id["recovery-spends"].steps) == 2
    trace = by_id["one-recovery-per-chain"]
    # overflow, recover, overflow again (re-arms since idle), recover again
    assert len(trace.steps) == 4
    assert [s.effect for s in trace.steps].count("recover-overflow") == 2
