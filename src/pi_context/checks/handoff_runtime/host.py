"""What the handoff runtime conformance's parts share: the spec, the policy and model the host
runs with, the plans (every way a handoff can go), the reports a host makes for a plan, and the
mirror (the spec interpreter fed those reports, plus the records its effects wrote)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff.controller import STAGES
from pi_context.bindings.runtime import ModelInfo
from pi_context.spec import interpret, load, spec_path

SPEC_ID = "handoff@0.6-auto"
WINDOW = 20_000  # a 5,000-byte relay budget: 30 long untracked names exceed it
POLICY = auto.AutoHandoffPolicy(
    pressure_percent=50.0, cooldown_ms=60_000, max_attempts=2, attempt_window_ms=300_000
)
STAGE_MS = 1_000
# What a failure injected at each stage reports (the stage's own code).
REPORTED = {
    "preparing": "handoff_source_changed",
    "generating": "checkpoint_timeout",
    "quality": "handoff_budget",
    "saving": "stale_scope",
    "not-ready": "handoff_not_ready",
    "unverified": "storage_failed",
}
SUCCESS: dict[str, dict[str, Any]] = {
    "preparing": {"type": "source_read", "facts": {"ok": True}},
    "generating": {"type": "notes_generated", "facts": {"ok": True}},
    "quality": {"type": "quality_checked", "facts": {"ok": True}},
    "saving": {"type": "offer_saved", "facts": {"written": True, "verified": True, "ready": True}},
    "switching": {"type": "destination_created", "facts": {"created": True}},
    "validating": {"type": "destination_verified", "facts": {"ok": True}},
    "continuing": {"type": "continued", "facts": {"ok": True}},
}
FAILURE: dict[str, dict[str, Any]] = {
    "preparing": {"type": "source_read", "facts": {"ok": False}},
    "generating": {"type": "notes_generated", "facts": {"ok": False}},
    "quality": {"type": "quality_checked", "facts": {"ok": False}},
    # the source moves on before the offer is appended: nothing is written
    "saving": {
        "type": "offer_saved",
        "facts": {"written": False, "verified": False, "ready": True},
    },
    "switching": {"type": "destination_created", "facts": {"created": False}},
    "validating": {"type": "destination_verified", "facts": {"ok": False}},
    "continuing": {"type": "continued", "facts": {"ok": False}},
}
UNVERIFIED = {"type": "offer_saved", "facts": {"written": True, "verified": False, "ready": True}}
NOT_READY = {"type": "offer_saved", "facts": {"written": True, "verified": True, "ready": False}}
Plan = tuple[str, str | None]
"""("ok", None) | ("not-ready", None) | ("fail", stage) | ("cancel", stage)."""
PLANS: tuple[Plan, ...] = (
    ("ok", None),
    ("not-ready", None),
    ("unverified", "saving"),
    ("busy", "generating"),
    ("busy", "continuing"),
    *((kind, stage) for kind in ("fail", "cancel") for stage in STAGES),
)
"""Every way a handoff can go: success; not ready (automatic); an offer the disk garbled;
requests made while it runs; a failure at each stage; a cancel at each stage."""
MODEL = ModelInfo("scripted-1", "scripted", WINDOW)
RESTORE_FACTS = ("enabled", "paused", "cooling", "attemptsLeft")
UNREACHABLE = {
    "cancel.idle": "a host polls its cancel only while a handoff runs",
}
"""Rows no runtime run can fire, and why (the strays, reports for another stage, too)."""


@cache
def handoff_spec() -> Any:
    """The spec the conformance runs against (loaded once)."""
    return load(spec_path(SPEC_ID))


@dataclass
class Mirror:
    """The spec, stepped by the interpreter, plus the records its effects wrote."""

    spec: Any
    state: dict[str, Any]
    attempts: list[int] = field(default_factory=list)
    failure: str | None = None
    records: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        status = self.state["automatic"]
        out: dict[str, Any] = {
            "enabled": status != "off",
            "paused": status == "paused",
            "attempts": self.attempts[-auto.MAX_KEPT_ATTEMPTS :],
        }
        if self.failure is not None:
            out["failure"] = self.failure
        return out

    def step(self, event: dict[str, Any]) -> tuple[str, str]:
        done = interpret.step(self.spec, self.state, event)
        self.state = done.state
        return done.effect, done.row


def expected_events(plan: Plan, automatic: bool) -> list[dict[str, Any]]:
    """The reports a host makes for ``plan`` after the start (success until the planned end)."""
    kind, stage = plan
    events: list[dict[str, Any]] = []
    for name in STAGES:
        if kind == "cancel" and name == stage:
            return [*events, {"type": "cancel"}]
        if kind in ("fail", "torn") and name == stage:
            return [*events, FAILURE[name]]
        if kind == "unverified" and name == stage:
            return [*events, UNVERIFIED]
        if kind == "not-ready" and automatic and name == "saving":
            return [*events, NOT_READY]
        events.append(SUCCESS[name])
    return events


def reported_code(plan: Plan) -> str | None:
    """The code a ``reported`` ending of ``plan`` carries (the failure's own)."""
    kind, stage = plan
    if kind == "torn":  # the seed reads the source strictly: an invalid line fails the read
        return "handoff_source_unavailable"
    if kind in ("not-ready", "unverified"):
        return REPORTED[kind]
    return REPORTED.get(stage or "")


def effective(plan: Plan, torn: bool) -> Plan:
    """What ``plan`` comes to on a source that holds a torn line: the source read fails
    (only a cancel polled before it comes first)."""
    if not torn or plan == ("cancel", STAGES[0]):
        return plan
    return ("torn", STAGES[0])
