"""Upstream's eleven pure reducer tests (``test/reset-lifecycle.test.ts`` at 48be3d3, restated
in ``node/upstream_reducer.test.mjs``) run under ``node --test`` on the generated TypeScript
binding: all pass on the newest generation we reproduce, and on 0.34 exactly the one a508f68
changed ("fallback is normal-stop only") fails, so the file tells generations apart."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.statemachine.reset_control import DEFAULT_SPEC

HERE = Path(__file__).resolve().parent
TESTS = HERE / "node" / "upstream_reducer.test.mjs"


def _run(ts_adapter: str, spec_id: str) -> tuple[int, str]:
    module = SOURCE_ROOT / "bindings-ts" / "dist" / f"{spec_id.replace('@', '-')}.js"
    assert module.is_file(), f"{module} was not built"
    done = subprocess.run(
        [shutil.which("node") or "node", "--test", "--test-reporter=tap", str(TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PI_CONTEXT_BINDING": str(module)},
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def _failed(output: str) -> list[str]:
    return re.findall(r"^not ok \d+ - (.+)$", output, re.M)


def test_upstream_reducer_tests_pass_on_the_default_generation(ts_adapter: str) -> None:
    status, output = _run(ts_adapter, DEFAULT_SPEC)
    assert status == 0, output
    assert re.search(r"^# pass 11$", output, re.M), output


def test_on_0_34_only_the_normal_stop_fallback_test_fails(ts_adapter: str) -> None:
    status, output = _run(ts_adapter, "reset-control@0.34")
    assert status != 0
    assert _failed(output) == [
        "reset-control: fallback is normal-stop only; hard reserve remains safety"
    ]
    assert re.search(r"^# pass 10$", output, re.M), output


def test_the_file_holds_the_eleven_tests() -> None:
    names = re.findall(r'^test\("(reset-control: [^"]+)"', TESTS.read_text(encoding="utf-8"), re.M)
    assert len(names) == 11 and len(set(names)) == 11
