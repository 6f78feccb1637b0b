"""Progress properties: leads-to under weak fairness, found as shortest lassos.

The committed specs state their progress properties and keep them; a mutant that parks a
request forever (or never discharges a stop intent) keeps every safety invariant and is
killed by a progress property alone; its lasso replays step by step through
``pi-context serve``; the mutation report counts such kills.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pi_context.checks import mutate
from pi_context.checks.conformance.protocol import step_request
from pi_context.checks.lassos import to_itf, to_mermaid
from pi_context.checks.mutation_docs import render_markdown
from pi_context.spec import SpecError, load, loads, spec_paths
from pi_context.spec.liveness import Lasso, check_all, check_progress
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import model_check

SPEC_34 = next(p for p in spec_paths() if p.name == "reset-control@0.34.yaml")
TEXT_34 = SPEC_34.read_text(encoding="utf-8")

HARD_RESERVE = """  - id: turn_end.hard-reserve
    on: turn_end
    when: facts.hardReserveDue
"""
PARKS_A_CLOSE_OUT = HARD_RESERVE.replace(
    "when: facts.hardReserveDue", "when: facts.hardReserveDue and request.phase != 'close-out'"
)
STOP_RETRY = """  - id: before_settle.stop-retry
    on: before_settle
    when: request.phase == 'stop-pending'
    next: {request: {phase: none}, overflow: idle}
    effect: commit-boundary-stop
    cause: manual close-out
"""
KEEPS_THE_STOP = """  - id: before_settle.stop-retry
    on: before_settle
    when: request.phase == 'stop-pending'
    effect: none
"""


def mutant(old: str, new: str) -> Spec:
    assert old in TEXT_34
    return loads(TEXT_34.replace(old, new), file="mutant.yaml")


@pytest.mark.parametrize("path", spec_paths(), ids=lambda p: p.stem)
def test_every_committed_spec_states_progress_and_keeps_it(path: Path) -> None:
    spec = load(path)
    assert spec.progress, f"{spec.id} states no progress property"
    for prop in spec.progress:
        assert prop.why.strip()
        assert check_progress(spec, prop) is None, prop.id


def test_0_34_states_the_stop_intent_discharge() -> None:
    ids = [p.id for p in load(SPEC_34).progress]
    assert ids == ["request-resolves-under-hard-reserve", "stop-intent-discharged"]


@pytest.mark.parametrize(
    ("old", "new", "prop"),
    [
        (HARD_RESERVE, PARKS_A_CLOSE_OUT, "request-resolves-under-hard-reserve"),
        (STOP_RETRY, KEEPS_THE_STOP, "stop-intent-discharged"),
    ],
    ids=["parks-a-close-out", "keeps-the-stop-intent"],
)
def test_a_parking_mutant_is_killed_by_progress_alone(old: str, new: str, prop: str) -> None:
    spec = mutant(old, new)
    safety = model_check(spec, show=False)
    assert safety.violations == [], [v.property for v in safety.violations]
    assert [lasso.prop for lasso in safety.lassos] == [prop]
    lasso = safety.lassos[0]
    assert lasso.cycle, "a lasso has a cycle"
    # the cycle returns to where it starts and never reaches the goal
    start = lasso.prefix[-1].state if lasso.prefix else lasso.initial
    assert lasso.cycle[-1].state == start


def test_the_lasso_is_written_as_itf_and_mermaid() -> None:
    spec = mutant(HARD_RESERVE, PARKS_A_CLOSE_OUT)
    (lasso,) = check_all(spec)
    itf = to_itf(spec, lasso)
    assert itf["loop"] == len(lasso.prefix)
    assert len(itf["states"]) == 1 + len(lasso.steps)
    assert itf["states"][itf["loop"]]["request"] == itf["states"][-1]["request"]
    chart = to_mermaid(spec, lasso)
    assert f'-.->|"the cycle repeats"| s{len(lasso.prefix)}' in chart


def _replay(spec_file: Path, spec: Spec, lasso: Lasso, turns: int = 3) -> None:
    """Feed the prefix and ``turns`` turns of the cycle to ``pi-context serve``; every
    reply must be the lasso's own next state and effect."""
    steps = list(lasso.prefix) + list(lasso.cycle) * turns
    lines = []
    pre = lasso.initial
    for step in steps:
        lines.append(json.dumps(step_request(spec.id, pre, step.event)))
        pre = step.state
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "serve", "--spec", str(spec_file)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(steps)
    for step, reply in zip(steps, replies, strict=True):
        assert reply["ok"], reply
        assert (reply["state"], reply["effect"]) == (step.state, step.effect)


def test_the_lasso_replays_through_serve(tmp_path: Path) -> None:
    text = TEXT_34.replace(HARD_RESERVE, PARKS_A_CLOSE_OUT)
    spec_file = tmp_path / "reset-control@0.34.yaml"
    spec_file.write_text(text, encoding="utf-8")
    spec = load(spec_file)
    (lasso,) = check_all(spec)
    _replay(spec_file, spec, lasso)


@pytest.mark.parametrize(
    ("old", "new", "row", "cell", "killers"),
    [
        (
            HARD_RESERVE,
            PARKS_A_CLOSE_OUT,
            "turn_end.hard-reserve",
            "guard",
            ["progress properties"],
        ),
        # an upstream scenario pins the retry literally; no invariant or trace property does
        (
            STOP_RETRY,
            KEEPS_THE_STOP,
            "before_settle.stop-retry",
            "effect",
            ["scenarios", "progress properties"],
        ),
    ],
    ids=["parks-a-close-out", "keeps-the-stop-intent"],
)
def test_the_mutation_check_counts_a_kill_by_progress_alone(
    old: str, new: str, row: str, cell: str, killers: list[str]
) -> None:
    from pi_context.checks.scenarios import SCENARIOS

    spec = load(SPEC_34)
    base = mutate.Baseline(spec)
    changed = mutant(old, new)
    planted = mutate.Mutant(1, row, cell, "planted", replace(spec, rows=changed.rows))
    outcome = mutate.check_mutant(base, planted, SCENARIOS.get(spec.id, ()))
    assert outcome.status == "killed"
    assert list(outcome.killers) == killers, outcome.killers
    assert "then forever" in outcome.killers["progress properties"]
    page = render_markdown(mutate.MutationReport(spec, [outcome]))
    alone = int(killers == ["progress properties"])
    assert f"| progress properties | 1 | {alone} |" in page


def test_progress_errors_are_located() -> None:
    bad = TEXT_34.replace(
        "leads_to: request.phase != 'stop-pending'", "leads_to: request.phase != 'parked'"
    ).replace("      - event: before_settle\n        when: not facts.queued", "      - event: nap")
    with pytest.raises(SpecError) as err:
        loads(bad, file="bad.yaml")
    text = str(err.value)
    assert "unknown event 'nap'" in text
    assert "bad.yaml:" in text


def test_without_fairness_a_request_may_wait_forever() -> None:
    spec = load(SPEC_34)
    prop = spec.progress[0]
    unfair = replace(prop, fair=())
    lasso = check_progress(spec, unfair)
    assert lasso is not None, "with no turn end assumed, nothing forces the commit"
    assert check_progress(spec, prop) is None


def test_each_cycle_takes_every_fair_instance() -> None:
    spec = mutant(HARD_RESERVE, PARKS_A_CLOSE_OUT)
    (lasso,) = check_all(spec)
    fair_turn_ends = [
        s
        for s in lasso.cycle
        if s.event["type"] == "turn_end"
        and s.event["facts"]["hardReserveDue"]
        and s.event["facts"]["enabled"]
        and not s.event["facts"]["aborted"]
        and not s.event["facts"]["failed"]
        and not s.event["facts"]["overflow"]
    ]
    assert fair_turn_ends
    # and no state of the cycle reaches the goal
    assert all(s.state["request"]["phase"] in ("close-out", "tool-requested") for s in lasso.cycle)
