"""`pi-context audit`: real sessions are explained by their spec; planted faults are found at
the entry that carries them.

Sessions come from real writers: the demo (our runtime end to end, every reset-control spec,
with and without /handoff), the runtime conformance's hypothesis runs (kept as the session
files they wrote) and the real-Pi fixtures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.checks.audit.mapping import load_mapping
from pi_context.checks.audit.search import Auditor
from pi_context.checks.audit.verdict import audit_observations, read_observations
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs, resolve_spec

from . import faults

REPO = Path(__file__).resolve().parents[2]
SPECS = [s for s in committed_specs() if s.name == "reset-control"]
IDS = [s.id for s in SPECS]
FIXTURE_DIRS = [REPO / "tests" / "fixtures" / "pi-sessions"]
_shared = Path(os.environ.get("PI_SESSION_FIXTURES", REPO.parent.parent / "shared" / "fixtures"))
for candidate in (_shared / "pi-sessions", _shared):
    if candidate.is_dir() and any(candidate.glob("*.jsonl")):
        FIXTURE_DIRS.append(candidate)
        break
FIXTURES = sorted(p for d in FIXTURE_DIRS for p in d.glob("*.jsonl"))
DEMO_LINE = 40_000 - 4_096  # the demo's context window minus its hard reserve


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def demo_sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], list[Path]]:
    """Every session file the demo writes, per (spec, with /handoff)."""
    out: dict[tuple[str, bool], list[Path]] = {}
    for spec in IDS:
        for handoff in (False, True):
            home = tmp_path_factory.mktemp("demo")
            args = ["demo", "--dir", str(home), "--spec", spec, "--quiet"]
            done = cli(*args, *(["--handoff"] if handoff else []))
            assert done.returncode == 0, done.stderr
            out[(spec, handoff)] = sorted(home.rglob("sessions/*.jsonl"))
    return out


@pytest.mark.parametrize("handoff", [False, True], ids=["plain", "handoff"])
@pytest.mark.parametrize("spec_id", IDS)
def test_every_demo_session_is_explained_by_its_spec(
    demo_sessions: dict[tuple[str, bool], list[Path]], spec_id: str, handoff: bool
) -> None:
    spec = resolve_spec(spec_id)
    paths = demo_sessions[(spec_id, handoff)]
    assert len(paths) == (2 if handoff else 1)
    for path in paths:
        verdict = audit_observations(spec, read_observations(path), DEMO_LINE)
        assert verdict.explained, (path.name, verdict.failed_at, verdict.alternatives)
    # the main session's resets: each is a committing row of the spec
    verdict = audit_observations(spec, read_observations(paths[0]))
    committed = [
        row
        for step in verdict.run
        for _silent, _event, row, effect in step.fired
        if spec.effect(effect) and spec.effect(effect).commits  # type: ignore[union-attr]
    ]
    markers = sum(1 for o in read_observations(paths[0]) if o.kind == "marker")
    # every marker follows a committing row (a run may also find commits whose boundary an
    # abort made stale, or that the tree navigation left on another branch)
    assert len(committed) >= markers > 0


def test_auto_names_the_generations_that_explain_a_session(
    demo_sessions: dict[tuple[str, bool], list[Path]],
) -> None:
    for spec_id in IDS:
        (path,) = demo_sessions[(spec_id, False)]
        done = cli("audit", "--spec", "auto", "--json", str(path))
        assert done.returncode == 0, done.stderr
        named = json.loads(done.stdout)["explained_by"]
        assert spec_id in named


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_real_pi_fixture_is_explained(spec: Spec, path: Path) -> None:
    verdict = audit_observations(spec, read_observations(path))
    assert verdict.explained, (verdict.failed_at, verdict.alternatives)


@pytest.fixture(scope="module")
def demo_34(demo_sessions: dict[tuple[str, bool], list[Path]]) -> list[faults.Entry]:
    (path,) = demo_sessions[("reset-control@0.34", False)]
    return faults.read(path)


@pytest.mark.parametrize("name", sorted(faults.FAULTS))
def test_each_planted_fault_is_reported_at_its_entry(
    demo_34: list[faults.Entry], name: str, tmp_path: Path
) -> None:
    entries, culprit = faults.FAULTS[name](demo_34)
    path = faults.write(entries, tmp_path / f"{name}.jsonl")
    spec = resolve_spec("reset-control@0.34")
    verdict = audit_observations(spec, read_observations(path), DEMO_LINE)
    assert not verdict.explained
    assert verdict.failed_at is not None and verdict.failed_at.entry == culprit
    assert verdict.alternatives, "the verdict says what the spec allows there"
    assert verdict.run, "and a shortest explanation of the prefix"
    if name != "reset-moved-early":  # without the line, an early reset may be a hard reserve
        again = audit_observations(spec, read_observations(path))
        assert again.failed_at is not None and again.failed_at.entry == culprit


def test_the_cli_reports_a_fault_with_its_entry(
    demo_34: list[faults.Entry], tmp_path: Path
) -> None:
    entries, culprit = faults.boot_missing(demo_34)
    path = faults.write(entries, tmp_path / "boot-missing.jsonl")
    done = cli("audit", str(path))
    assert done.returncode == 1
    assert f"entry {culprit}" in done.stdout.splitlines()[0]
    data = json.loads(cli("audit", "--json", str(path)).stdout)
    assert data["explained"] is False and data["failed_at"]["entry"] == culprit


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_runtime_conformance_runs_are_explained(spec: Spec, tmp_path: Path) -> None:
    """The runtime conformance drives the real runtime over real session files; every file
    it wrote, kept before its run's clean-up, is a run of the spec."""
    from pi_context.checks.runtime.harness import run_machine
    from pi_context.checks.runtime.run import machine_for
    from pi_context.checks.runtime.scenarios import SCENARIOS

    kept: list[Path] = []

    class Keep(machine_for(spec)):  # type: ignore[misc,valid-type]
        def teardown(self) -> None:
            for session in self.sessions:
                if session.path is not None and session.path.exists():
                    kept.append(tmp_path / f"run{len(kept):03d}.jsonl")
                    shutil.copy(session.path, kept[-1])
            super().teardown()

    result = run_machine(spec.id, Keep, SCENARIOS, examples=4, steps=25, shrink=False)
    assert result.failure is None
    assert len(kept) > 10
    for path in kept:
        verdict = audit_observations(spec, read_observations(path))
        assert verdict.explained, (path.name, verdict.failed_at, verdict.alternatives)


def test_a_rule_for_an_event_the_spec_lacks_is_skipped() -> None:
    """One mapping serves every generation: 0.25 has no close_out, so the manual warning's
    rule does not apply to it, while 0.34 reads the warning as its close-out."""
    mapping = load_mapping("reset-control")
    old = Auditor(resolve_spec("reset-control@0.25"), mapping)
    new = Auditor(resolve_spec("reset-control@0.34"), mapping)
    assert "warning" not in old.rules
    assert [p.event for r in new.rules["warning"] for p in r.events] == ["close_out"]


SESSIONS = Path(__file__).parent / "sessions"


@pytest.mark.parametrize(
    "spec",
    [s for s in SPECS if s.event("close_out") is not None],
    ids=[s.id for s in SPECS if s.event("close_out") is not None],
)
def test_a_manual_close_out_settled_before_any_turn_is_explained(spec: Spec) -> None:
    """A runtime-conformance run (kept from a failure): a tree navigation back to the first
    prompt, then /wipe-memory (its manual-wipe prompt), queued input and the settle that
    commits the manual close-out, all before the model took any turn on the branch. The
    run the manual prompt starts may settle before a turn; the audit must not need one."""
    path = SESSIONS / "manual-close-out-settles-without-a-turn.jsonl"
    observed = read_observations(path)
    assert [o.describe() for o in observed][:4] == [
        "boot(window=pcw:019b6968:root)",
        "user",
        "navigation(fork=True)",
        "warning(source=manual)",
    ]
    verdict = audit_observations(spec, observed)
    assert verdict.explained, (verdict.failed_at, verdict.alternatives)
    # the checkpoint is the boundary of the settle's commit of the manual close-out
    checkpoint = next(x for x in verdict.run if x.observation.kind == "checkpoint")
    commits = {e.name for e in spec.effects if e.commits}
    assert [
        (source, event["type"])
        for source, event, _row, effect in checkpoint.fired
        if effect in commits
    ] == [("settle", "before_settle")], checkpoint.fired


@pytest.mark.parametrize(
    ("after", "loaded"),
    [("turn-end", ("turn-end",)), (["turn-end", "warning"], ("turn-end", "warning")), (None, ())],
)
def test_a_silent_after_names_one_or_several_kinds(
    tmp_path: Path, after: object, loaded: tuple[str, ...]
) -> None:
    import yaml

    from pi_context.checks.audit.mapping import MappingError, mapping_path

    data = yaml.safe_load(mapping_path("reset-control").read_text())
    settle = next(s for s in data["silent"] if s["id"] == "settle")
    settle["after"] = after
    path = tmp_path / "mapping.yaml"
    path.write_text(yaml.safe_dump(data))
    mapping = load_mapping("reset-control", path)
    assert next(s for s in mapping.silent if s.id == "settle").after == loaded
    settle["after"] = ["turn-end", "turn-ended"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MappingError, match=r"silent \d+: `after` names observation kinds"):
        load_mapping("reset-control", path)
