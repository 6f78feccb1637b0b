"""Mutation adequacy: the mutants are single-cell, and the incremental checks agree with the
reference checkers (table analysis, model checker, interpreter) run on each mutant in full."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from pi_context.checks.mutate import Baseline, Mutant, check_mutant, mutants
from pi_context.checks.mutation_docs import docs_path, render_markdown
from pi_context.checks.scenarios import SCENARIOS
from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.spec import expr as ex
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.analysis import table_diagnostics
from pi_context.spec.interpret import NoRowMatches
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import model_check


def cells(spec: Spec, mutant: Mutant) -> list[str]:
    """Which cells of which rows differ between the spec and the mutant."""
    out: list[str] = []
    for a, b in zip(spec.rows, mutant.spec.rows, strict=True):
        if a.effect != b.effect:
            out.append(f"{a.id}.effect")
        for axis in spec.axes:
            if str(a.next_for(axis.name)) != str(b.next_for(axis.name)):
                out.append(f"{a.id}.next.{axis.name}")
        if ex.render(a.guard) != ex.render(b.guard):
            out.append(f"{a.id}.guard")
    return out


@pytest.mark.parametrize("version", ["0.25", "0.26"])
def test_every_mutant_changes_exactly_one_cell(version: str, spec25: Spec, spec26: Spec) -> None:
    spec = spec25 if version == "0.25" else spec26
    found = mutants(spec)
    assert [m.number for m in found] == list(range(1, len(found) + 1))
    for m in found:
        changed = cells(spec, m)
        if m.cell == "guard" and m.change.startswith("drop") and changed == []:
            pytest.fail(f"{m.id} drops a conjunct but the guard is unchanged")
        assert changed == [f"{m.row}.{m.cell}"], (m.id, m.change, changed)
    assert len({(m.row, m.change) for m in found}) == len(found)
    by_cell = Counter(m.cell for m in found)
    assert by_cell["effect"] == len(spec.rows) * (len(spec.effects) - 1)
    guards = sum(
        2 * len(ex.conjuncts(r.guard)) - (1 if ex.render(r.guard) == "true" else 0)
        for r in spec.rows
    )
    assert by_cell["guard"] == guards


def reference_verdict(spec: Spec, m: Mutant) -> dict[str, bool | int]:
    """What the full, non-incremental checkers say about a mutant."""
    mspec = m.spec
    loader = bool(table_diagnostics(mspec))
    equivalent, steppable = True, True
    for state in all_states(spec):
        for event in all_events(spec):
            want = interpret.step(spec, state, event)
            try:
                got = interpret.step(mspec, state, event)
            except NoRowMatches:
                steppable = False
                continue
            if any(isinstance(v, dict) and ex.ABSENT in v.values() for v in got.state.values()):
                steppable = False
            if (got.state, got.effect, got.consulted) != (want.state, want.effect, want.consulted):
                equivalent = False
    verdict: dict[str, bool | int] = {"loader": loader, "equivalent": equivalent and not loader}
    if steppable:
        result = model_check(mspec, show=False)
        kinds = {v.kind for v in result.violations}
        verdict["invariants"] = bool(kinds & {"state invariant", "transition invariant"})
        verdict["trace properties"] = "trace property" in kinds
        verdict["model checker"] = bool(result.unreachable_expected) or any(
            not n for n in result.row_counts.values()
        )
        lengths = [len(v.steps) for v in result.violations if v.kind != "trace property"]
        verdict["shortest"] = min(lengths, default=-1)
    return verdict


def agree(spec: Spec, base: Baseline, m: Mutant) -> None:
    outcome = check_mutant(base, m, SCENARIOS.get(spec.id, ()))
    ref = reference_verdict(spec, m)
    where = f"{m.id} {m.row}: {m.change}"
    assert ("loader" in outcome.killers) == ref["loader"], where
    assert (outcome.status == "equivalent") == ref["equivalent"], where
    if "invariants" not in ref:
        return
    for category in ("invariants", "trace properties", "model checker"):
        assert (category in outcome.killers) == ref[category], (where, category, outcome.killers)
    if ref["invariants"]:
        found = re.search(r"(\d+) step\(s\)", outcome.killers["invariants"])
        assert found is not None and int(found.group(1)) == ref["shortest"], where


def test_025_mutants_agree_with_the_reference_checkers(spec25: Spec) -> None:
    base = Baseline(spec25)
    for m in mutants(spec25)[::3]:  # every third, spread over every row and cell kind
        agree(spec25, base, m)


def test_a_sample_of_026_mutants_agrees_with_the_reference_checkers(spec26: Spec) -> None:
    base = Baseline(spec26)
    found = mutants(spec26)
    # one mutant of each kind of cell per row, spread over the table
    sample: dict[tuple[str, str], Mutant] = {}
    for m in found:
        sample.setdefault((m.row, m.cell), m)
    chosen = list(sample.values())[::14]
    assert len(chosen) >= 6
    for m in chosen:
        agree(spec26, base, m)


def test_scenarios_kill_a_mutant_they_pin(spec26: Spec) -> None:
    """Aborted turns must clear every phase: a mutant keeping the request is caught by the
    seeds' literal scenario, independently of the invariants."""
    base = Baseline(spec26)
    m = next(
        m
        for m in mutants(spec26)
        if m.row == "turn_end.aborted" and m.change == "request `none` → `keep`"
    )
    outcome = check_mutant(base, m, SCENARIOS[spec26.id])
    assert outcome.status == "killed"
    assert outcome.killers["scenarios"].startswith("scenario ")


@pytest.mark.parametrize(
    "version", ["0.25", "0.26", "0.26-proposal", "0.27", "0.33", "0.34", "a508f68", "6bcd8b5"]
)
def test_the_committed_report_is_current(version: str) -> None:
    from pi_context.checks.mutate import mutation_report
    from pi_context.spec import load, spec_path

    spec = load(spec_path(f"reset-control@{version}"))
    page = SOURCE_ROOT / docs_path(version)
    assert page.is_file(), f"run `pi-context mutate --spec {spec.id} --docs`"
    report = mutation_report(spec, show=False)
    assert page.read_text(encoding="utf-8") == render_markdown(report), (
        f"{page} is stale: run `pi-context mutate --spec {spec.id} --docs`"
    )
    if version != "0.25":
        assert report.rate >= 0.95


def _mutate(spec: str, rate: str) -> subprocess.CompletedProcess[str]:
    """``pi-context mutate --spec SPEC --quiet --min-rate RATE`` in a fresh process."""
    argv = ["mutate", "--spec", spec, "--quiet", "--min-rate", rate]
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_mutate_command() -> None:
    def mutate(rate: str) -> subprocess.CompletedProcess[str]:
        return _mutate("reset-control@0.25", rate)

    # a rate no kill rate can reach is a usage error (the CLI rule: exit 2, the option named)
    impossible = mutate("1.01")
    assert impossible.returncode == 2
    assert "pi-context mutate: --min-rate 1.01" in impossible.stderr
    # every committed table is fully pinned, so the highest reachable rate is met
    done = mutate("1")
    assert done.returncode == 0, done.stderr
    assert re.search(r"reset-control@0\.25: \d+ mutants, \d+ equivalent, \d+ killed", done.stdout)


UNPINNED = """\
spec: tiny
version: "1"
title: A request and a clear, with nothing that pins the table
axes:
  request:
    kind: enum
    values: [none, explicit]
    why: Whether a request waits.
initial: {request: none}
events:
  request:
    why: A request arrived.
  clear:
    why: The request was answered.
effects:
  none:
    host: none
    meaning: Nothing to do.
  requested:
    host: acknowledge
    meaning: The request was recorded.
rows:
  - id: request.record
    on: request
    when: request == 'none'
    next: {request: explicit}
    effect: requested
    why: The first request is recorded.
  - id: request.again
    on: request
    when: request == 'explicit'
    effect: none
    why: A second request changes nothing.
  - id: clear.any
    on: clear
    when: 'true'
    next: {request: none}
    effect: none
    why: Clearing drops the request.
"""


def test_the_mutate_command_fails_below_the_required_rate(tmp_path: Path) -> None:
    """A table nothing but itself pins (no invariants, scenarios or reachability
    expectation) keeps surviving mutants: below ``--min-rate`` the command says by how much
    on stderr and exits 1; a rate it reaches passes on the same report."""
    spec = tmp_path / "tiny@1.yaml"
    spec.write_text(UNPINNED, encoding="utf-8")

    below = _mutate(str(spec), "1")
    found = re.search(r"(\d+) survived; kill rate (\d+\.\d)%", below.stdout)
    assert found is not None, below.stdout + below.stderr
    survived, rate = int(found.group(1)), found.group(2)
    assert survived > 0 and float(rate) < 100
    assert below.returncode == 1, below.stderr
    assert f"kill rate {rate}% is below the required 100.0%" in below.stderr
    reached = _mutate(str(spec), str(float(rate) / 100 - 0.001))
    assert reached.returncode == 0, reached.stderr
    assert "below the required" not in reached.stderr
