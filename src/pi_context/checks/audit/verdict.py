"""Auditing a session file against specs, and the verdict as text or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Session
from pi_context.checks.audit.mapping import load_mapping
from pi_context.checks.audit.observe import Observation, fork_points, observations
from pi_context.checks.audit.search import Auditor, Verdict, audit
from pi_context.spec.interpret import render_event, render_state
from pi_context.spec.model import Spec


def read_observations(path: Path, leaf: str | None = None) -> list[Observation]:
    """The observations of a session file's branch (its own leaf or ``leaf``);
    SessionError says what is wrong with the file, KeyError names an unknown leaf."""
    session = Session.open(path, readonly=True)
    if leaf is not None and session.get(leaf) is None:
        raise KeyError(leaf)
    branch = session.branch(leaf)
    forks = fork_points(session.entries, branch)
    return list(observations(branch, session.session_id, forks))


def audit_observations(spec: Spec, seen: Sequence[Observation], line: int | None = None) -> Verdict:
    """The verdict of ``spec`` on the observations; ``line`` pins the hard-reserve line
    (context window minus reserve, in tokens) that is otherwise inferred."""
    return audit(Auditor(spec, load_mapping(spec.name), line), seen)


def _fired_text(spec: Spec, fired: Sequence[Any]) -> str:
    parts = []
    for silent, event, row, effect in fired:
        lead = f"({silent}) " if silent else ""
        parts.append(f"{lead}{render_event(event)} → {row} / {effect}")
    return "; ".join(parts)


def render_text(verdict: Verdict, *, all_rows: bool = False) -> str:
    spec = verdict.spec
    out: list[str] = []
    if verdict.explained:
        settings = ", ".join(f"{k}={v}" for k, v in verdict.settings.items())
        out.append(
            f"explained by {spec.id}: {verdict.observations} observations"
            + (f" (settings: {settings})" if settings else "")
        )
    else:
        obs = verdict.failed_at
        assert obs is not None
        where = f"entry {obs.entry}" if obs.entry else "the end of the branch"
        out.append(f"NOT explained by {spec.id}: {where}: {obs.describe()} is allowed by no run")
        out.append("  the spec allows there:")
        out += [f"    {line}" for line in verdict.alternatives]
        out.append("  shortest explanation of the prefix:")
    for step in verdict.run:
        if not step.fired and not all_rows:
            continue
        state = render_state(spec, step.state)
        fired = _fired_text(spec, step.fired) or "-"
        out.append(f"  {step.observation.entry or '(end)':>10}  {step.observation.describe()}: "
                   f"{fired}  ⇒ {state}")  # fmt: skip
    return "\n".join(out)


def to_json(verdict: Verdict) -> dict[str, Any]:
    def obs_json(obs: Observation) -> dict[str, Any]:
        return {"entry": obs.entry, "kind": obs.kind, "attrs": obs.attrs}

    run = [
        {
            **obs_json(step.observation),
            "fired": [
                {"silent": s or None, "event": e, "row": r, "effect": f}
                for s, e, r, f in step.fired
            ],
            "state": step.state,
            "owed": step.owed,
        }
        for step in verdict.run
        if step.fired
    ]
    out: dict[str, Any] = {
        "spec": verdict.spec.id,
        "explained": verdict.explained,
        "observations": verdict.observations,
    }
    if verdict.explained:
        out["settings"] = verdict.settings
        out["run"] = run
    else:
        assert verdict.failed_at is not None
        out["failed_at"] = obs_json(verdict.failed_at)
        out["alternatives"] = verdict.alternatives
        out["prefix"] = run
    return out
