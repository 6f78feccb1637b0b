"""The generated TypeScript binding: committed and current, type-checked, conforming, and
generated faithfully from the spec (a mutated spec yields a binding the suite rejects)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_context.checks.conformance.runner import run_conformance
from pi_context.checks.scenarios import SCENARIOS, Scenario, run_scenario
from pi_context.codegen import tsbuild
from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.codegen.typescript import (
    index_module,
    typescript_module,
    typescript_outputs,
)
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs


def test_the_committed_modules_are_current() -> None:
    for rel, content in typescript_outputs(committed_specs()).items():
        path = SOURCE_ROOT / rel
        assert path.is_file(), f"{rel} is missing: run `pi-context generate`"
        assert path.read_text(encoding="utf-8") == content, f"{rel} is stale: run generate"


def test_each_module_exports_the_seeds_api(spec25: Spec, spec26: Spec) -> None:
    for spec in (spec25, spec26):
        text = typescript_module(spec)
        for export in (
            "export function initialResetControl(): ResetControlState {",
            "export function reduceResetControl(state: ResetControlState, "
            "event: ResetControlEvent): ResetControlResult {",
            "export interface ResetControlState {",
            "export type ResetControlEvent =",
            "export type ResetControlEffect =",
            f'export const SPEC_SHA256 = "{spec.sha256}";',
        ):
            assert export in text, (spec.id, export)
        for row in spec.rows:
            assert f"  // {row.id}: " in text, row.id
        assert typescript_module(spec) == text  # deterministic
    text = typescript_module(spec26)
    assert (
        '| { readonly phase: "close-out"; readonly windowId: Window; readonly source: Source }'
        in text
    )
    # lazy facts go through memoised, checked readers, read only where a guard reaches them
    reader = (
        "const readHardReserveDue = (): boolean => (hardReserveDueValue ??= "
        'checkBoolean(facts.hardReserveDue, "event.facts.hardReserveDue"));'
    )
    assert reader in text
    assert "facts.hardReserveDue" not in text.replace(reader, "")
    index = index_module([spec25, spec26])
    assert 'import * as resetControl0_26 from "./reset-control-0.26.js";' in index


def test_the_binding_conforms_to_every_spec(ts_adapter: str) -> None:
    report = run_conformance(ts_adapter, examples=20, timeout=30, show=False)
    assert report.ok, [r.problems for r in report.specs]
    assert sorted(r.spec.id for r in report.specs) == sorted(s.id for s in committed_specs())
    assert all(t.failed == 0 and t.checked > 0 for r in report.specs for t in r.rows.values())


def test_the_binding_passes_the_named_scenarios(ts_adapter: str) -> None:
    """Seed and published-upstream scenarios, literally, through the TS binding's adapter."""
    specs = {s.id: s for s in committed_specs()}
    requests: list[str] = []
    plan: list[tuple[str, Scenario]] = []
    # The adapter is stateless per step, so feed each scenario's expected states as inputs
    # and compare replies step by step.
    for spec_id, scenarios in SCENARIOS.items():
        for scenario in scenarios:
            plan.append((spec_id, scenario))
            state = scenario.start
            for expect in scenario.steps:
                requests.append(
                    json.dumps(
                        {"op": "step", "spec": spec_id, "state": state, "event": expect.event}
                    )
                )
                state = expect.state
    replies = iter(adapter_session(ts_adapter, requests))
    failures: list[str] = []
    for spec_id, scenario in plan:
        lazy = {e.name: {f.name for f in e.facts if f.lazy} for e in specs[spec_id].events}
        answers = iter([next(replies) for _ in scenario.steps])

        def step(
            _state: dict[str, Any],
            event: dict[str, Any],
            answers: Any = answers,
            lazy: dict[str, set[str]] = lazy,
        ) -> Any:
            reply = next(answers)
            assert reply["ok"] is True, reply
            reads = tuple(n for n in reply["consulted"] if n in lazy[event["type"]])
            return reply["state"], reply["effect"], reads

        failures += run_scenario(scenario, step)
    assert failures == []


def adapter_session(command: str, lines: list[str]) -> list[dict[str, object]]:
    done = subprocess.run(
        command.split(),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_adapter_keeps_serving_and_reports_reads_in_order(ts_adapter: str) -> None:
    pending = {"request": {"phase": "none"}, "overflow": "pending"}
    facts = {
        "windowId": "w",
        "queued": True,
        "enabled": True,
        "automaticResetEnabled": True,
        "aborted": False,
        "failed": False,
    }
    step = {
        "op": "step",
        "spec": "reset-control@0.26",
        "state": pending,
        "event": {"type": "before_settle", "facts": facts},
    }
    replies = adapter_session(
        ts_adapter,
        [
            "not json",
            "",
            json.dumps({"op": "step", "spec": "reset-control@1"}),
            json.dumps({"op": "nope"}),
            json.dumps(step),
            json.dumps({"op": "hello"}),
        ],
    )
    assert [r["ok"] for r in replies] == [False, False, False, False, True, True]
    assert "not JSON" in str(replies[0]["error"])
    assert replies[1]["error"] == "request is an empty line"
    assert "unknown spec" in str(replies[2]["error"])
    assert "unknown op" in str(replies[3]["error"])
    # every fact read, in first-read order: the plain facts, checked on entry (so a mistyped
    # one is named before anything is decided), then the lazy queued where a guard reaches it
    assert replies[4] == {
        "ok": True,
        "state": pending,
        "effect": "none",
        "consulted": ["windowId", "aborted", "failed", "queued"],
    }
    assert sorted(replies[5]["specs"]) == sorted(s.id for s in committed_specs())


def test_a_binding_generated_from_a_mutated_spec_is_rejected(
    ts_adapter: str, spec26: Spec, tmp_path: Path
) -> None:
    """Generate, type-check and serve TypeScript from a spec whose manual upgrade keeps the
    automatic source: the suite must reject it at that row (the generator follows the spec)."""
    rows = tuple(
        dataclasses.replace(r, next=()) if r.id == "close_out.upgrade-manual" else r
        for r in spec26.rows
    )
    mutant = dataclasses.replace(spec26, rows=rows)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "reset-control-0.26.ts").write_text(typescript_module(mutant))
    (tmp_path / "generated" / "index.ts").write_text(index_module([mutant]))
    shutil.copyfile(tsbuild.BINDINGS / "tsconfig.json", tmp_path / "tsconfig.json")
    shutil.copyfile(tsbuild.BINDINGS / "adapter.mjs", tmp_path / "adapter.mjs")
    tsc = tsbuild.install()
    done = subprocess.run(
        [shutil.which("node") or "node", str(tsc), "-p", str(tmp_path / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = run_conformance(
        f"node {tmp_path / 'adapter.mjs'}", [spec26], examples=0, timeout=30, show=False
    )
    (result,) = report.specs
    assert {row for row, t in result.rows.items() if t.failed} == {"close_out.upgrade-manual"}
    assert len(result.traces["close_out.upgrade-manual"]) == 2


@pytest.mark.parametrize("name", ["package.json", "package-lock.json"])
def test_the_toolchain_is_pinned(name: str) -> None:
    data = json.loads((tsbuild.BINDINGS / name).read_text())
    if name == "package.json":
        assert data["devDependencies"] == {"typescript": "5.9.3"}
    else:
        assert data["packages"]["node_modules/typescript"]["version"] == "5.9.3"
        assert data["packages"]["node_modules/typescript"]["integrity"].startswith("sha512-")
