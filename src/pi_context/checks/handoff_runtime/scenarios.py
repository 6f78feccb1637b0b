"""The named scenarios every handoff conformance run starts with: every failure and cancel
point of both triggers, and the automatic rules."""

from __future__ import annotations

from pi_context.checks.runtime.harness import Op, Scenario

from .host import PLANS
from .machine import HandoffConformance


def _manual(kind: str, stage: str | None = None) -> Op:
    return "manual_handoff", {"plan": (kind, stage)}


def _pressure(kind: str = "ok", stage: str | None = None, high: bool = True) -> Op:
    return "pressure", {"plan": (kind, stage), "high": high}


def _command(word: str) -> Op:
    return "command", {"word": word}


def _wait(ms: int) -> Op:
    return "time_passes", {"ms": ms}


_RESTART: Op = ("restart", {})
_TORN: Op = ("torn_record", {})


def _points() -> tuple[Scenario, ...]:
    """Every plan (each failure point, each cancel point, not ready, success) as a manual and
    as an automatic handoff, each followed by a handoff that must work again."""
    out: list[Scenario] = []
    for kind, stage in PLANS:
        label = kind if stage is None else f"{kind} at {stage}"
        out.append((f"manual, {label}", (_manual(kind, stage), _manual("ok"))))
        after: tuple[Op, ...] = (_command("resume"), _wait(400_000), _pressure())
        out.append((f"automatic, {label}", (_pressure(kind, stage), *after)))
    return tuple(out)


SCENARIOS: tuple[Scenario, ...] = (
    *_points(),
    ("calm pressure starts nothing", (_pressure(high=False), _pressure())),
    ("without a model a handoff is unavailable",
     (("model", {"present": False}), _manual("ok"), _pressure(), _pressure(high=False),
      ("model", {"present": True}), _manual("ok"))),
    ("the attempt limit, then resume",
     (_pressure("fail", "generating"), _pressure("fail", "quality"), _pressure(), _pressure(),
      _command("resume"), _pressure())),
    ("attempts age out of the window",
     (_pressure("fail", "generating"), _pressure("fail", "quality"), _pressure(),
      _wait(400_000), _pressure())),
    ("the cooldown starts only after a verified destination",
     (_pressure("fail", "validating"), _pressure(), _pressure(), _wait(30_000), _pressure(),
      _wait(61_000), _pressure())),
    ("a pause holds pressure; resume lifts it",
     (_command("pause"), _pressure(), _command("pause"), _command("resume"), _pressure())),
    ("off, replayed; on again",
     (_command("off"), _pressure(), _RESTART, _pressure(), _command("on"), _pressure())),
    ("a failed continuation pauses the destination, replayed",
     (_pressure("fail", "continuing"), _RESTART, _pressure(), _command("resume"), _pressure())),
    ("a cancelled automatic handoff pauses, replayed",
     (_pressure("cancel", "generating"), _RESTART, _pressure(), _command("resume"),
      _pressure())),
    ("cooling, replayed, then cooled",
     (_pressure(), _RESTART, _pressure(), _wait(61_000), _RESTART, _pressure())),
    ("exhausted, replayed, then aged out",
     (_pressure("fail", "saving"), _pressure("fail", "preparing"), _RESTART, _pressure(),
      _wait(400_000), _RESTART, _pressure())),
    ("a torn record is not a record",
     (_command("pause"), _TORN, _pressure(), _command("resume"), _TORN, _pressure())),
    ("commands while nothing runs, and status",
     (_command("status"), _command("on"), _command("off"), _command("off"), _command("pause"),
      _command("on"), _command("resume"), _command("pause"), _command("status"))),
    ("a manual handoff never touches the automatic state",
     (_command("pause"), _manual("ok"), _pressure(), _command("resume"),
      _manual("fail", "continuing"), _pressure())),
)  # fmt: skip
"""Runs every conformance check starts with (named, so a failure says which), before the
randomly generated runs: between them every failure and cancel point of both triggers."""


def run_scenarios(machine: type[HandoffConformance] = HandoffConformance) -> str | None:
    """Run every scenario on a fresh machine; the first failure, named, or None."""
    return machine.run_scenarios(SCENARIOS)
