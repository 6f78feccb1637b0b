"""Quint's opinion of every spec: each exported module type-checks and simulates clean over
every invariant, its simulated traces replay through our reducer with no disagreement, a
one-cell mutant is caught by both checkers, and our own ITF bundles load in Quint's reader.
(CI runs the full figure, 1,000 traces per spec: ``python -m
pi_context.checks.quintcheck``.)"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_context.checks import quintcheck
from pi_context.checks.conformance.itf import decode, itf_problems, read_json, replay
from pi_context.checks.conformance.report import to_itf
from pi_context.checks.mutate import mutants
from pi_context.codegen.quint import quint_module
from pi_context.codegen.quint_names import qname
from pi_context.spec import interpret
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import broken_transition_invariants, model_check

SAMPLES = 100  # per spec here; CI's quintcheck step replays 1,000 per spec
SEED = "0x5eed"


@pytest.fixture(scope="module")
def traces_34(
    quint_cli: Path, specs: dict[str, Spec], tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    """20 Quint-simulated traces of reset-control@0.34's committed module."""
    spec = specs["reset-control@0.34"]
    out = tmp_path_factory.mktemp("quint-traces")
    run = quintcheck.simulate(
        quintcheck.module_path(spec, out), quintcheck.invariant_names(spec), out,
        samples=20, steps=12, seed=SEED,
    )  # fmt: skip
    assert run.violated == ()
    return sorted(out.glob("*.itf.json"))


@pytest.mark.parametrize("spec_id", ["handoff@0.6-auto", "reset-control@0.34"])
def test_a_spec_typechecks_simulates_and_replays(
    quint_cli: Path, specs: dict[str, Spec], capsys: pytest.CaptureFixture[str], spec_id: str
) -> None:
    """Here two specs (the largest table, the newest generation); CI's quintcheck step does
    every committed spec with 1,000 traces each."""
    for spec in [specs[spec_id]]:
        result = quintcheck.check_spec(spec, samples=SAMPLES, steps=15, seed=SEED)
        with capsys.disabled():
            print("\n" + quintcheck.summary(result))
        assert result.problems == [], spec.id
        assert result.disagreements == [], spec.id
        assert result.traces == SAMPLES and result.steps == SAMPLES * 15, spec.id


def test_a_progress_property_typechecks_and_simulates(
    quint_cli: Path, specs: dict[str, Spec], tmp_path: Path
) -> None:
    """A spec with a progress (leads-to) property: its ``temporal`` definition type-checks
    and the simulation over the invariants still runs clean (Quint checks no temporal
    property by simulation; our model checker does)."""
    from tests.quint.test_export import progress_spec

    spec = progress_spec(specs["reset-control@0.34"])
    path = tmp_path / f"{spec.module_name}.qnt"
    path.write_text(quint_module(spec))
    quintcheck.quint(["typecheck", str(path)], "quint typecheck", cwd=tmp_path)
    run = quintcheck.simulate(
        path, quintcheck.invariant_names(spec), tmp_path, samples=10, steps=10, seed=SEED
    )
    assert run.violated == ()


def _tamper(path: Path, target: Path, step: int, key: str, value: object) -> Path:
    data = json.loads(path.read_text())
    data["states"][step][key] = value
    target.write_text(json.dumps(data))
    return target


def test_replay_names_the_first_step_that_disagrees(
    traces_34: list[Path], specs: dict[str, Spec], tmp_path: Path
) -> None:
    spec = specs["reset-control@0.34"]
    original = traces_34[0]
    clean = replay(spec, decode(spec, read_json(original), original.name))
    assert clean.ok and clean.steps == 12
    data = read_json(original)
    assert itf_problems(data) == []
    effect = data["states"][5]["effect"]
    other = next(e.name for e in spec.effects if e.name != effect)
    cases = {
        "effect": _tamper(original, tmp_path / "effect.itf.json", 5, "effect", other),
        "row": _tamper(original, tmp_path / "row.itf.json", 7, "row", "no.such-row"),
        "state": _tamper(original, tmp_path / "state.itf.json", 3, "overflow", "spent"),
    }
    for kind, path in cases.items():
        result = replay(spec, decode(spec, read_json(path), path.name))
        assert result.disagreement is not None, kind
        found = result.disagreement
        if kind == "state" and data["states"][3]["overflow"] == "spent":
            continue  # the sample already was spent there: nothing changed
        assert (found.kind, found.step) == (kind, {"effect": 5, "row": 7, "state": 3}[kind])
    # the command: exit 1 and the step named; exit 0 over the untouched traces
    done = subprocess.run(
        ["pi-context", "replay", "--itf", str(cases["effect"])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "step 5" in done.stdout and "effect differs" in done.stdout
    folder = traces_34[0].parent
    done = subprocess.run(
        ["pi-context", "replay", "--itf", str(folder)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(traces_34)} traces (" in done.stdout and ": 20 agree, 0 disagree" in done.stdout


def test_a_one_cell_mutant_is_caught_by_both_checkers(
    quint_cli: Path, specs: dict[str, Spec], tmp_path: Path
) -> None:
    """0.34's aborted turn made to arm a close-out: our model checker and Quint's simulator
    both report it broken, Quint's counterexample replays through the mutant's own generated
    reducer step for step, and on its last step our checker breaks exactly the invariants
    Quint names."""
    spec = specs["reset-control@0.34"]
    mutant = next(
        m for m in mutants(spec)
        if m.row == "turn_end.aborted" and m.change == "effect `none` → `close-out-armed`"
    )  # fmt: skip
    ours = {v.property for v in model_check(mutant.spec, show=False).violations}
    assert ours == {"aborted-turn-clears", "disabled-never-commits"}
    assert model_check(spec, show=False).violations == []
    path = tmp_path / f"{spec.module_name}.qnt"
    path.write_text(quint_module(mutant.spec))
    out = tmp_path / "traces"
    out.mkdir()
    run = quintcheck.simulate(
        path, quintcheck.invariant_names(spec), out, samples=1000, steps=20, seed=SEED
    )
    assert run.violated and set(run.violated) <= {qname(p) for p in ours}, run.output
    (counterexample,) = sorted(out.glob("*.itf.json"))  # the one violating trace
    data = read_json(counterexample)
    assert data["#meta"]["status"] == "violation"
    # its own hash, so the mutant's reducer is generated rather than the committed one found
    edited = dataclasses.replace(mutant.spec, sha256=hashlib.sha256(b"M295").hexdigest())
    trace = decode(edited, data, counterexample.name)
    assert replay(edited, trace).ok
    assert not replay(spec, trace).ok  # the committed spec decides that step otherwise
    last = trace.steps[-1]
    assert last.row == "turn_end.aborted" and last.effect == "close-out-armed"
    # on Quint's counterexample, our checker breaks exactly the invariants Quint named
    pre = trace.steps[-2].state if len(trace.steps) > 1 else trace.initial
    broken = broken_transition_invariants(mutant.spec, pre, last.state, last.event, last.effect)
    assert {qname(i.id) for i in broken} == set(run.violated)


def _bundle_trace(spec: Spec) -> dict[str, object]:
    """A conformance-bundle trace (the runner's ITF writer) whose second step failed."""
    from pi_context.checks.conformance.check import Problem
    from pi_context.checks.conformance.traces import Trace, TraceStep

    close = {"type": "close_out", "windowId": "w1", "source": "automatic"}
    tool = {"type": "tool_request", "windowId": "w1"}
    state = interpret.initial_state(spec)
    trace = Trace(spec.id, dict(state), source="unit test")
    first = interpret.step(spec, state, close)
    trace.steps.append(TraceStep(state, close, first, first.state, first.effect, []))
    second = interpret.step(spec, first.state, tool)
    wrong = Problem("mismatch", f"effect 'already-pending', spec: {second.effect!r}")
    trace.steps.append(
        TraceStep(first.state, tool, second, second.state, "already-pending", [], (wrong,))
    )
    return to_itf(spec, trace, "my-impl --serve")


READ_ITF = """
const fs = require("fs");
const itf = require(process.argv[2]);
const data = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const states = itf.ofItfNormalized(data);
console.log(JSON.stringify({ states: states.length, kinds: states.map(s => s.kind) }));
"""


def test_our_bundles_are_itf_that_quint_reads(
    quint_cli: Path, specs: dict[str, Spec], tmp_path: Path
) -> None:
    reader = quint_cli.parent / "itf.js"
    script = tmp_path / "read-itf.cjs"
    script.write_text(READ_ITF)
    for spec_id in ("reset-control@0.34", "reset-control@0.26"):
        spec = specs[spec_id]
        bundle = _bundle_trace(spec)
        assert itf_problems(bundle) == []
        path = tmp_path / f"{spec.module_name}.itf.json"
        path.write_text(json.dumps(bundle))
        done = subprocess.run(
            [shutil.which("node") or "node", str(script), str(reader), str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        read = json.loads(done.stdout)
        assert read == {"states": 3, "kinds": ["app", "app", "app"]}  # three records
        assert replay(spec, decode(spec, bundle, path.name)).ok  # the spec's answers agree


def test_a_broken_itf_file_is_named(tmp_path: Path) -> None:
    bad = {"vars": ["request"], "states": [{"request": 3}, {"#meta": {}, "x": True}]}
    assert itf_problems(bad) == [
        "states[0].request: a bare number (ITF writes integers as {'#bigint': '...'})",
        "states[1]: variable 'request' missing",
        "states[1].x: not one of the trace's vars",
    ]
    path = tmp_path / "bad.itf.json"
    path.write_text("{")
    done = subprocess.run(
        ["pi-context", "replay", "--itf", str(path), "--spec", "reset-control@0.34"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "bad.itf.json: cannot read an ITF trace" in done.stderr
