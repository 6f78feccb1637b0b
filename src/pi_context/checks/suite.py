"""`pi-context verify`: every check of every spec, with progress and a summary table."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from pi_context.checks.exhaustive import check_exhaustive
from pi_context.checks.runtime import (
    ConformanceResult,
    MutationResult,
    runtime_checks,
)
from pi_context.checks.stateful import SHRINK_SECONDS, StatefulResult, run_stateful
from pi_context.codegen.fresh import reset_control
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import ModelCheckResult, model_check
from pi_context.statemachine.reset_control import ResetControl
from pi_context.support.progress import Progress


@dataclass
class SpecReport:
    spec: Spec
    origin: str = ""
    cases: int = 0
    model: ModelCheckResult | None = None
    hypothesis_steps: int = 0
    hypothesis_examples: int = 0
    hypothesis_state: str = "skipped"  # skipped | ok | failed
    runtime: ConformanceResult | None = None
    """The real runtime driven against the spec (reset-control specs)."""
    mutants: MutationResult | None = None
    """Runtime mutants and whether the runtime conformance kills them."""
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def verify_spec(
    spec: Spec,
    *,
    examples: int = 100,
    seed: int | None = None,
    hypothesis: bool = True,
    show: bool = True,
    err: TextIO | None = None,
    runtime: bool = True,
) -> SpecReport:
    err = err or sys.stderr
    gen = reset_control(spec)
    report = SpecReport(spec, gen.origin)
    if show:
        print(f"{spec.id} ({spec.path}; code {gen.origin})", file=err)
    exhaustive = check_exhaustive(gen, show=show)
    report.cases = exhaustive.cases
    if exhaustive.mismatches:
        report.failures.append(
            "implementations disagree with the spec:\n  " + "\n  ".join(exhaustive.mismatches)
        )
    model = model_check(spec, show=show)
    report.model = model
    for counter in model.violations:
        report.failures.append(counter.render(spec))
    for lasso in model.lassos:
        report.failures.append(lasso.render(spec))
    from pi_context.spec.interpret import render_state

    if model.unreachable_expected:
        shown = ", ".join(render_state(spec, s) for s in model.unreachable_expected[:5])
        report.failures.append(
            f"the spec expects every state to be reachable, but these are not: {shown}"
        )
    unfired = [r.id for r in spec.rows if not model.row_counts.get(r.id)]
    if unfired:
        report.failures.append(f"rows never fire from the initial state: {', '.join(unfired)}")
    if hypothesis and examples > 0:
        _hypothesis(gen, report, examples=examples, seed=seed, show=show, err=err)
    if runtime:
        report.runtime, report.mutants = runtime_checks(spec, report.failures, show=show, err=err)
    return report


def _hypothesis(
    gen: ResetControl,
    report: SpecReport,
    *,
    examples: int,
    seed: int | None,
    show: bool,
    err: TextIO,
) -> None:
    spec = gen.spec
    progress = Progress(f"{spec.id} hypothesis", examples, err) if show else None
    announced: list[bool] = []

    def on_run(found: StatefulResult) -> None:
        if found.failure is None:
            if progress is not None and progress.done < examples:
                progress.advance()
        elif show and not announced:
            announced.append(True)
            print(
                f"\n  {spec.id} hypothesis: failing trace of {len(found.trace)} step(s) found "
                f"after {found.examples} examples; shrinking it "
                f"(at most {SHRINK_SECONDS:g}s)...",
                file=err,
            )

    result = run_stateful(gen, examples=examples, seed=seed, on_run=on_run)
    report.hypothesis_steps = result.steps
    report.hypothesis_examples = result.examples
    if result.ok:
        report.hypothesis_state = "ok"
        if progress is not None:
            progress.finish(f", {result.steps} steps")
        return
    report.hypothesis_state = "failed"
    report.failures.append(result.describe())
    if show:
        print(
            f"  {spec.id} hypothesis: FAILED; shrunk to {len(result.trace)} step(s) "
            f"in {result.shrink_seconds:.1f}s",
            file=err,
        )


def summary_table(reports: list[SpecReport]) -> str:
    headers = [
        "spec",
        "states",
        "reachable",
        "rows fired",
        "cases checked",
        "invariants",
        "traces",
        "progress",
        "hypothesis",
        "runtime",
        "result",
    ]
    rows: list[list[str]] = []
    for r in reports:
        m = r.model
        inv = len(r.spec.state_invariants) + len(r.spec.transition_invariants)
        rows.append(
            [
                r.spec.id,
                str(m.states if m else "-"),
                str(len(m.reachable) if m else "-"),
                f"{m.rows_fired() if m else 0}/{len(r.spec.rows)}",
                str(r.cases),
                f"{inv} ({m.invariant_checks if m else 0} checks)",
                str(len(r.spec.traces)),
                _progress_cell(r),
                "skipped"
                if r.hypothesis_state == "skipped"
                else f"{'FAILED, ' if r.hypothesis_state == 'failed' else ''}"
                f"{r.hypothesis_examples} ex / {r.hypothesis_steps} steps",
                _runtime_cell(r),
                "ok" if r.ok else "FAIL",
            ]
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(row) for row in rows]
    out += _mutant_lines(reports)
    return "\n".join(out)


def progress_lines(reports: list[SpecReport]) -> str:
    """Each spec's progress properties, what each states and whether it holds."""
    out = ["progress properties (leads-to under weak fairness):"]
    for r in reports:
        broken = {lasso.prop for lasso in r.model.lassos} if r.model else set()
        if not r.spec.progress:
            out.append(f"  {r.spec.id}: none stated")
        for prop in r.spec.progress:
            verdict = "VIOLATED" if prop.id in broken else "holds"
            out.append(f"  {r.spec.id} {prop.id}: {verdict}: {prop.render()}")
    return "\n".join(out)


def write_lassos(reports: list[SpecReport], directory: Path) -> list[Path]:
    """Each violated progress property's lasso as ``<spec>--<property>.itf.json`` and
    ``.mmd`` (the conformance bundle's formats, the ITF with its ``loop`` index)."""
    from pi_context.checks.conformance.report import dumps
    from pi_context.checks.lassos import to_itf, to_mermaid

    written: list[Path] = []
    for r in reports:
        for lasso in r.model.lassos if r.model else []:
            directory.mkdir(parents=True, exist_ok=True)
            stem = f"{r.spec.id}--{lasso.prop}".replace("/", "_")
            itf = directory / f"{stem}.itf.json"
            itf.write_text(dumps(to_itf(r.spec, lasso)), encoding="utf-8")
            mmd = directory / f"{stem}.mmd"
            mmd.write_text(to_mermaid(r.spec, lasso), encoding="utf-8")
            written += [itf, mmd]
    return written


def _progress_cell(report: SpecReport) -> str:
    """How many progress properties the spec states and how many a fair lasso violates."""
    declared = len(report.spec.progress)
    m = report.model
    if m is None or not declared:
        return str(declared)
    broken = len(m.lassos)
    return f"{declared} ({broken} violated)" if broken else f"{declared} ok"


def _runtime_cell(report: SpecReport) -> str:
    result = report.runtime
    if result is None:
        return "-"
    state = "ok" if result.ok else "FAILED"
    mutants = report.mutants
    return f"{state}, {result.examples} runs, rows {len(result.rows)}{mutant_cell(mutants)}"


def mutant_cell(mutants: MutationResult | None) -> str:
    """``, mutants: killed 18 of 19, 1 equivalent``: what the runtime conformance killed, out
    of all mutants, the equivalent ones (which no test can kill) named as such, so that a
    full score does not read as a failure."""
    if mutants is None:
        return ""
    equivalent = len(mutants.equivalent)
    tail = f", {equivalent} equivalent" if equivalent else ""
    return f", mutants: killed {mutants.killed} of {len(mutants.results)}{tail}"


def _mutant_lines(reports: list[SpecReport]) -> list[str]:
    """The runtime mutants' kill rate, and every survivor with why it is equivalent."""
    runs = [r.mutants for r in reports if r.mutants is not None]
    if not runs:
        return []
    killed = sum(m.killed for m in runs)
    counted = sum(len(m.results) - len(m.equivalent) for m in runs)
    equivalent = sum(len(m.equivalent) for m in runs)
    rate = killed / counted if counted else 1.0
    lines = [
        "",
        f"runtime mutants: {killed} of {counted} killed ({rate:.0%}) by the runtime "
        f"conformance; {equivalent} equivalent (not counted)",
    ]
    for m in runs:
        for result in m.equivalent:
            lines.append(f"  equivalent in {m.spec_id}: {result.mutant.name}: "
                         f"{result.mutant.equivalent[m.spec_id]}")  # fmt: skip
        for result in m.survived:
            lines.append(f"  SURVIVED in {m.spec_id}: {result.mutant.name} ({result.mutant.what})")
    return lines
