"""A host's type checker knows each spec: ``mypy --strict`` on small host snippets written
against ``pi_context.statemachine.typed`` (the generated typed accessor). The correct snippet
passes; a misspelt fact, a fact of another generation, a wrong event name, another
generation's event and a comparison with an effect the spec can never return each fail with
the error that names the mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_mypy

GOOD = """
from pi_context.statemachine.typed import reset_control_0_34 as t
from pi_context.statemachine.typed import typed

core = typed("reset-control@0.34")
facts = t.TurnEndFacts(
    window_id="w1",
    aborted=False,
    overflow=False,
    failed=False,
    enabled=True,
    queued=False,
    automatic_reset_enabled=True,
    hard_reserve_due=True,
)
state, effect, row = core.step(core.initial_state(), t.TurnEndEvent(facts))
if effect == "commit-boundary-stop":
    print(core.host(effect), core.cause(row, state))
state, effect = core.reduce(state, core.event("clear"))
"""

# (name, the line that replaces the marked one or is added, the error mypy must report)
BAD = [
    (
        "misspelt fact",
        ('window_id="w1",', 'windw_id="w1",'),
        'Unexpected keyword argument "windw_id" for "TurnEndFacts"',
    ),
    (
        "fact of another generation (0.25's thresholdDue)",
        ("hard_reserve_due=True,", "threshold_due=True,"),
        'Unexpected keyword argument "threshold_due" for "TurnEndFacts"',
    ),
    (
        "wrong event name",
        ('core.event("clear")', 'core.event("clearr")'),
        'Argument 1 to "event" of "TypedHandle" has incompatible type "Literal[\'clearr\']"',
    ),
    (
        "event of another generation",
        ('core.event("clear")', "t25.ClearEvent()"),
        'Argument 2 to "reduce" of "TypedHandle" has incompatible type'
        ' "pi_context.statemachine.generated.reset_control_0_25.types.ClearEvent"',
    ),
    (
        "impossible effect comparison",
        ('if effect == "commit-boundary-stop":', 'if effect == "commit-boundary-stopp":'),
        "Non-overlapping equality check",
    ),
]


def _check(tmp_path: Path, source: str) -> str:
    script = tmp_path / "host.py"
    script.write_text(source, encoding="utf-8")
    done = run_mypy(script, tmp_path / ".mypy_cache")
    return done.stdout + done.stderr


def test_the_correct_host_snippet_type_checks(tmp_path: Path) -> None:
    assert _check(tmp_path, GOOD) == ""


@pytest.mark.parametrize("name,edit,error", BAD, ids=[b[0] for b in BAD])
def test_each_mistake_fails_mypy_strict(
    tmp_path: Path, name: str, edit: tuple[str, str], error: str
) -> None:
    old, new = edit
    assert old in GOOD, name
    source = GOOD.replace(old, new, 1)
    if "t25." in new:
        source = "from pi_context.statemachine.typed import reset_control_0_25 as t25\n" + source
    out = _check(tmp_path, source)
    assert error in out, out
