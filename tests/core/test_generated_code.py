"""Generated code: up to date, pure, typed and consistent with the wire shapes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.checks.stateful import event_strategy
from pi_context.spec.abstraction import all_states
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl
from pi_context.statemachine.wirecheck import WireError

GENERATED = Path(__file__).resolve().parents[2] / "src/pi_context/statemachine/generated"
ALLOWED_IMPORTS = {
    "__future__",
    "dataclasses",
    "typing",
    "collections.abc",
    "pi_context.statemachine.wirecheck",
}


def test_generated_files_match_the_specs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "generate", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_generated_code_imports_nothing_that_does_io() -> None:
    for path in GENERATED.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    continue  # sibling generated modules
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name in ALLOWED_IMPORTS, f"{path.name} imports {name}"


def test_generated_files_record_their_spec_hash(specs: dict[str, Spec]) -> None:
    for spec in specs.values():
        for path in (GENERATED / spec.module_name).glob("*.py"):
            assert f"# spec-sha256: {spec.sha256}" in path.read_text(encoding="utf-8")


def test_wire_round_trip_for_every_abstract_state(gens: dict[str, ResetControl]) -> None:
    for gen in gens.values():
        for state in all_states(gen.spec):
            assert gen.wire.state_to_wire(gen.wire.state_from_wire(state)) == state


@settings(max_examples=200)
@given(data=st.data())
def test_wire_round_trip_for_events(gens: dict[str, ResetControl], data: Any) -> None:
    for gen in gens.values():
        event_spec = data.draw(st.sampled_from(gen.spec.events))
        wire = data.draw(event_strategy(event_spec))
        assert gen.wire.event_to_wire(gen.wire.event_from_wire(wire)) == wire


def test_wire_errors_name_the_path(gens: dict[str, ResetControl]) -> None:
    wire = gens["reset-control@0.26"].wire
    cases = [
        (
            {"request": {"phase": "close-out", "windowId": "w"}, "overflow": "idle"},
            "state.request: missing 'source'",
        ),
        (
            {"request": {"phase": "nope"}, "overflow": "idle"},
            "state.request.phase: expected one of",
        ),
        ({"request": {"phase": "none"}, "overflow": "idle", "x": 1}, "state: unexpected key 'x'"),
        ({"request": {"phase": "none"}, "overflow": 3}, "state.overflow: expected one of"),
        ("nope", "state: expected an object"),
    ]
    for value, message in cases:
        try:
            wire.state_from_wire(value)
        except WireError as err:
            assert str(err).startswith(message), str(err)
        else:
            raise AssertionError(f"{value!r} was accepted")
    try:
        wire.event_from_wire({"type": "turn_end", "facts": {"windowId": "w"}})
    except WireError as err:
        assert str(err).startswith("event.facts: missing 'aborted'")
    else:
        raise AssertionError("incomplete facts were accepted")
