"""The generated machine table in patterns: folding loses nothing, and it is what keeps the table
small enough to review."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.codegen.machine import axis_values, machine_table
from pi_context.spec.model import Spec
from pi_context.statemachine.patterns import ANY, fold, spell_out
from pi_context.statemachine.reset_control import ResetControl

GENERATED = Path(__file__).resolve().parents[2] / "src/pi_context/statemachine/generated"


def _by_name(spec: Spec) -> dict[tuple[str, str], tuple[tuple[str, str], ...]]:
    return {
        key: tuple((row.id, dest) for row, dest in rows)
        for key, rows in machine_table(spec).items()
    }


def test_the_committed_table_spells_out_to_every_shapes_rows(
    specs: dict[str, Spec], gens: dict[str, ResetControl]
) -> None:
    for spec_id, spec in specs.items():
        table = gens[spec_id].table
        spelt = spell_out(table.TABLE, table.STATES)
        full = _by_name(spec)
        assert spelt == full, spec_id
        assert list(spelt) == list(full), f"{spec_id}: (trigger, shape) order"


def test_the_machine_has_a_transition_for_every_row_of_every_shape(
    specs: dict[str, Spec], gens: dict[str, ResetControl]
) -> None:
    for spec_id, spec in specs.items():
        machine = gens[spec_id].machine.machine
        built = {
            (trigger, source, t.dest or source)
            for trigger, event in machine.events.items()
            for source, transitions in event.transitions.items()
            for t in transitions
        }
        expected = {
            (trigger, source, dest)
            for (trigger, source), rows in _by_name(spec).items()
            for _, dest in rows
        }
        assert built == expected, spec_id


def test_handoff_auto_folds_from_1650_keys_and_its_machine_module_stays_under_600_lines(
    specs: dict[str, Spec],
) -> None:
    spec = specs["handoff@0.6-auto"]
    assert len(_by_name(spec)) == 1650
    assert len(spec_table_keys(spec)) < 300
    for path in GENERATED.glob("*/machine.py"):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines < 600, f"{path.parent.name}/machine.py has {lines} lines"


def spec_table_keys(spec: Spec) -> list[tuple[str, str]]:
    return list(fold(_by_name(spec), axis_values(spec)))


_value = st.sampled_from("abcd")


@st.composite
def tables(
    draw: st.DrawFn,
) -> tuple[dict[tuple[str, str], tuple[tuple[str, str], ...]], list[str], list[list[str]]]:
    """A random table over 1-3 axes of 1-3 values: rows that keep, set or move each axis."""
    axes = [
        [f"{name}{i}" for i in range(draw(st.integers(1, 3)))]
        for name in "xyz"[: draw(st.integers(1, 3))]
    ]
    states = ["/".join(p) for p in itertools.product(*axes)]
    rows = [f"r{i}" for i in range(draw(st.integers(1, 3)))]
    table: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
    for trigger in ("go", "stop"):
        for state in states:
            if draw(st.booleans()) and draw(st.booleans()):
                continue  # a shape with no rows
            chosen = draw(st.lists(st.sampled_from(rows), min_size=1, max_size=3, unique=True))
            targets = []
            for row in chosen:
                parts = state.split("/")
                dest = [
                    draw(st.sampled_from([part, *axis]))
                    for part, axis in zip(parts, axes, strict=True)
                ]
                targets.append((row, "/".join(dest)))
            table[(trigger, state)] = tuple(targets)
    return table, states, axes


@settings(max_examples=300, deadline=None)
@given(tables())
def test_fold_then_spell_out_is_the_table(
    case: tuple[dict[tuple[str, str], tuple[tuple[str, str], ...]], list[str], list[list[str]]],
) -> None:
    table, states, axes = case
    folded = fold(table, axes)
    assert spell_out(folded, states) == table
    assert len(folded) <= len(table)


def test_a_trigger_that_ignores_an_axis_folds_it_and_keeps_what_it_moves() -> None:
    axes = [["idle", "busy"], ["on", "off"]]
    table = {
        ("go", "idle/on"): (("go.start", "busy/on"),),
        ("go", "idle/off"): (("go.start", "busy/off"),),
        ("go", "busy/on"): (("go.busy", "busy/on"), ("go.late", "idle/on")),
        ("go", "busy/off"): (("go.busy", "busy/off"), ("go.late", "idle/on")),
    }
    assert fold(table, axes) == {
        ("go", f"idle/{ANY}"): (("go.start", f"busy/{ANY}"),),
        ("go", f"busy/{ANY}"): (("go.busy", f"busy/{ANY}"), ("go.late", "idle/on")),
    }
    # rows that differ by the axis's value stay apart
    table[("go", "idle/off")] = (("go.other", "busy/off"),)
    assert ("go", "idle/on") in fold(table, axes)
