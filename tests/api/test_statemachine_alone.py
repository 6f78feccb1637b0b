"""``pi_context.statemachine`` stands alone: importing it, and creating the handle of every
committed spec (both families), loads no module of the layers above it — bindings, the
generator, the checks, the test helpers or the entry points. Checked in a fresh interpreter
through ``sys.modules``; the check is also run with a planted import, so it can fail."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

ABOVE = (
    "pi_context.bindings",
    "pi_context.codegen",
    "pi_context.checks",
    "pi_context.testing",
    "pi_context.cli",
    "pi_context.mcp",
    "pi_context.integrations",
    "pi_context.demo",
)

PROGRAM = """
import json, sys
{extra}
import pi_context.statemachine
from pi_context.statemachine.reset_control import reset_control, spec_ids
from pi_context.statemachine.typed import SPEC_IDS, typed
handles = [reset_control(spec_id) for spec_id in spec_ids(None)]
for handle in handles:
    handle.state_to_wire(handle.initial_state())
    handle.machine  # the transitions machine, built from the generated table
typed_handles = [typed(spec_id) for spec_id in SPEC_IDS.values()]
print(json.dumps({{
    "ids": sorted(h.id for h in handles),
    "typed": sorted(h.id for h in typed_handles),
    "origins": sorted({{h.origin for h in handles}}),
    "modules": sorted(m for m in sys.modules if m.startswith("pi_context")),
}}))
"""


def _loaded(extra: str = "") -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(extra=extra)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def _above(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith(ABOVE)]


def test_the_statemachine_and_every_handle_load_nothing_above_it() -> None:
    from pi_context.spec import spec_paths

    loaded = _loaded()
    committed = sorted(path.stem for path in spec_paths())
    assert loaded["ids"] == committed and loaded["typed"] == committed
    assert any("handoff@" in spec_id for spec_id in loaded["ids"])  # both families
    assert loaded["origins"] == ["committed"]
    assert any(m.startswith("pi_context.statemachine.generated.") for m in loaded["modules"])
    assert _above(loaded["modules"]) == []


@pytest.mark.parametrize("planted", ["pi_context.bindings.session", "pi_context.codegen.python"])
def test_a_module_above_is_seen(planted: str) -> None:
    loaded = _loaded(f"import {planted}")
    assert planted in _above(loaded["modules"])
