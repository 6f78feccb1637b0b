"""The layout's size rule: no hand-written module over 600 lines, and each generated
``machine.py`` (the table a person reviews) under 600 lines."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src/pi_context"
LIMIT = 600


def _lines(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n")


def test_no_hand_written_module_exceeds_600_lines() -> None:
    over = {
        str(path.relative_to(SRC)): _lines(path)
        for path in SRC.rglob("*.py")
        if "generated" not in path.relative_to(SRC).parts and _lines(path) > LIMIT
    }
    assert not over, f"modules over {LIMIT} lines (split them by job): {over}"


def test_each_generated_machine_module_is_under_600_lines() -> None:
    machines = sorted((SRC / "statemachine/generated").glob("*/machine.py"))
    assert machines, "no generated machine.py found"
    over = {path.parent.name: _lines(path) for path in machines if _lines(path) >= LIMIT}
    assert not over, f"generated machine.py at or over {LIMIT} lines: {over}"
