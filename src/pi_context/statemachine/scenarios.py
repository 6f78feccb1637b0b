"""The behaviours the seeds assert for the reset-control reducer, as literal scenarios.

These are written independently of the spec files: each scenario starts from an explicit
state, feeds wire events and states the exact next state, effect and (where the seeds pin
it) the lazy facts consulted. They catch a wrong spec, which checks generated from the spec
cannot, and they are what `pi-context mutate` uses to kill table mutants. The pytest suite
runs each one by name against the generated reducer, the transitions machine and the
interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Wire = dict[str, Any]
Stepper = Callable[[Wire, Wire], tuple[Wire, str, tuple[str, ...] | None]]


@dataclass(frozen=True)
class Expect:
    event: Wire
    state: Wire
    effect: str
    consulted: tuple[str, ...] | None = None  # None: the seeds do not pin the reads


@dataclass(frozen=True)
class Scenario:
    id: str
    spec: str
    why: str
    start: Wire
    steps: tuple[Expect, ...]


def run_scenario(scenario: Scenario, step: Stepper) -> list[str]:
    """Feed the scenario to ``step``; every difference from the literal expectation."""
    failures: list[str] = []
    state = scenario.start
    for i, expect in enumerate(scenario.steps, 1):
        got_state, effect, consulted = step(state, expect.event)
        where = f"{scenario.id} step {i} ({expect.event['type']})"
        if got_state != expect.state:
            failures.append(f"{where}: state {got_state}, expected {expect.state}")
        if effect != expect.effect:
            failures.append(f"{where}: effect {effect!r}, expected {expect.effect!r}")
        want, read = expect.consulted, consulted
        if want is not None and read is not None and tuple(read) != want:
            failures.append(f"{where}: consulted {list(read)}, expected {list(want)}")
        if failures:
            break
        state = got_state
    return failures


# ---------------------------------------------------------------- reset-control@0.25

V25 = "reset-control@0.25"


def s25(request: str = "none", overflow: str = "idle") -> Wire:
    return {"request": request, "overflow": overflow}


def turn25(**overrides: bool) -> Wire:
    facts = {
        "aborted": False,
        "overflow": False,
        "failed": False,
        "enabled": True,
        "queued": False,
        "automaticResetEnabled": True,
        "thresholdDue": False,
    }
    facts.update(overrides)
    return {"type": "turn_end", "facts": facts}


def settle25(**overrides: bool) -> Wire:
    facts = {"queued": False, "enabled": True, "automaticResetEnabled": True, "aborted": False}
    facts.update(overrides)
    return {"type": "before_settle", "facts": facts}


REQUEST = {"type": "request"}
SETTLED = {"type": "settled"}
ABORT = {"type": "abort"}
CLEAR = {"type": "clear"}
OVERFLOW_LAZY = ("queued", "automaticResetEnabled")
SETTLE_LAZY = ("queued", "enabled", "automaticResetEnabled")

SCENARIOS_025: tuple[Scenario, ...] = (
    Scenario(
        "explicit-request-dedupes-and-is-consumed",
        V25,
        "A duplicate request changes nothing; the next turn_end commits and consumes it.",
        s25(),
        (
            Expect(REQUEST, s25("explicit"), "requested"),
            Expect(REQUEST, s25("explicit"), "already-requested"),
            Expect(turn25(), s25(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "threshold-commits",
        V25,
        "A completed, enabled turn whose usage is due commits without a request.",
        s25(),
        (Expect(turn25(thresholdDue=True), s25(), "commit-boundary", ("thresholdDue",)),),
    ),
    Scenario(
        "completed-turn-consults-only-threshold",
        V25,
        "A completed turn with no trigger commits nothing and reads only thresholdDue.",
        s25(),
        (Expect(turn25(), s25(), "none", ("thresholdDue",)),),
    ),
    Scenario(
        "disabled-turn-drops-request",
        V25,
        "A disabled turn drops the explicit request without committing or reading policy.",
        s25("explicit"),
        (Expect(turn25(enabled=False, thresholdDue=True), s25(), "none", ()),),
    ),
    Scenario(
        "failed-turn-drops-request",
        V25,
        "A failed turn drops the request, commits nothing and reads no threshold.",
        s25("explicit"),
        (Expect(turn25(failed=True, thresholdDue=True), s25(), "none", ()),),
    ),
    Scenario(
        "aborted-turn-clears-both-axes",
        V25,
        "An abort manufactures no continuation and consults no policy guard.",
        s25("explicit", "pending"),
        (Expect(turn25(aborted=True), s25(), "none", ()),),
    ),
    Scenario(
        "settlement-keeps-only-the-request",
        V25,
        "Settlement ends the failure chain but keeps a pending explicit request.",
        s25("explicit", "pending"),
        (Expect(SETTLED, s25("explicit"), "none"),),
    ),
    Scenario(
        "clear-resets-both-axes",
        V25,
        "Lifecycle transitions reset both axes.",
        s25("explicit", "pending"),
        (Expect(CLEAR, s25(), "none"),),
    ),
    Scenario(
        "abort-resets-both-axes",
        V25,
        "An abort resets both axes.",
        s25("explicit", "pending-spent"),
        (Expect(ABORT, s25(), "none"),),
    ),
    Scenario(
        "overflow-recovery-armed-and-spent-once",
        V25,
        "An overflow arms recovery at turn_end; the first settle spends it; a later failure "
        "in the chain is bounded.",
        s25(),
        (
            Expect(
                turn25(overflow=True, failed=True), s25("none", "pending"), "none", OVERFLOW_LAZY
            ),
            Expect(settle25(), s25("none", "spent"), "recover-overflow", SETTLE_LAZY),
            Expect(settle25(), s25("none", "spent"), "none"),
            Expect(turn25(overflow=True, failed=True), s25("none", "pending-spent"), "none"),
            Expect(settle25(), s25("none", "spent"), "none"),
        ),
    ),
    Scenario(
        "queued-success-supersedes-the-failure",
        V25,
        "A queued message defers settle recovery; the queued turn's success clears the chain.",
        s25(),
        (
            Expect(turn25(overflow=True, failed=True), s25("none", "pending"), "none"),
            Expect(settle25(queued=True), s25("none", "pending"), "none", ("queued",)),
            Expect(turn25(), s25(), "none"),
            Expect(settle25(), s25(), "none"),
        ),
    ),
    Scenario(
        "overflow-while-queued-does-not-arm",
        V25,
        "An overflow with queued work cannot recover and reads no further policy.",
        s25(),
        (Expect(turn25(overflow=True, failed=True, queued=True), s25(), "none", ("queued",)),),
    ),
    Scenario(
        "disabled-settle-disarms",
        V25,
        "Disabled mode never spends overflow recovery.",
        s25("none", "pending"),
        (Expect(settle25(enabled=False), s25(), "none"),),
    ),
    Scenario(
        "automatic-off-settle-disarms",
        V25,
        "Without automatic resets the pending recovery is disarmed.",
        s25("none", "pending"),
        (Expect(settle25(automaticResetEnabled=False), s25(), "none"),),
    ),
    Scenario(
        "aborted-settle-disarms",
        V25,
        "An aborted run disarms the pending recovery.",
        s25("none", "pending"),
        (Expect(settle25(aborted=True), s25(), "none"),),
    ),
)


# ---------------------------------------------------------------- reset-control@0.26

V26 = "reset-control@0.26"
W = "pcw:test:window"
OTHER = "pcw:test:other"
NONE: Wire = {"phase": "none"}


def close(window: str = W, source: str = "manual") -> Wire:
    return {"phase": "close-out", "windowId": window, "source": source}


def tool(window: str = W) -> Wire:
    return {"phase": "tool-requested", "windowId": window}


def s26(request: Wire | None = None, overflow: str = "idle") -> Wire:
    return {"request": dict(request or NONE), "overflow": overflow}


def turn26(window: str = W, **overrides: bool) -> Wire:
    facts: dict[str, Any] = {
        "windowId": window,
        "aborted": False,
        "overflow": False,
        "failed": False,
        "enabled": True,
        "queued": False,
        "automaticResetEnabled": True,
        "hardReserveDue": False,
    }
    facts.update(overrides)
    return {"type": "turn_end", "facts": facts}


def settle26(window: str = W, **overrides: bool) -> Wire:
    facts: dict[str, Any] = {
        "windowId": window,
        "queued": False,
        "enabled": True,
        "automaticResetEnabled": True,
        "aborted": False,
        "failed": False,
    }
    facts.update(overrides)
    return {"type": "before_settle", "facts": facts}


def close_out(window: str = W, source: str = "manual") -> Wire:
    return {"type": "close_out", "windowId": window, "source": source}


def tool_request(window: str = W) -> Wire:
    return {"type": "tool_request", "windowId": window}


SCENARIOS_026: tuple[Scenario, ...] = (
    Scenario(
        "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
        V26,
        "A close-out deduplicates, survives note/tool turns, and a tool request commits it.",
        s26(),
        (
            Expect(close_out(), s26(close()), "close-out-armed"),
            Expect(close_out(), s26(close()), "already-pending"),
            Expect(turn26(), s26(close()), "none"),
            Expect(tool_request(), s26(tool()), "none"),
            Expect(turn26(), s26(), "commit-boundary"),
        ),
    ),
    Scenario(
        "manual-close-out-falls-back-at-a-normal-stop",
        V26,
        "A successful, unqueued stop commits a manual close-out at before_settle.",
        s26(close()),
        (Expect(settle26(), s26(), "commit-boundary", ("queued", "enabled")),),
    ),
    Scenario(
        "manual-close-out-ignores-automatic-setting",
        V26,
        "A manual close-out works even when automatic resets are disabled.",
        s26(close()),
        (Expect(settle26(automaticResetEnabled=False), s26(), "commit-boundary"),),
    ),
    Scenario(
        "automatic-close-out-needs-automatic-resets",
        V26,
        "An automatic close-out is dropped, not committed, while automatic resets are off.",
        s26(close(source="automatic")),
        (Expect(settle26(automaticResetEnabled=False), s26(), "none"),),
    ),
    Scenario(
        "hard-reserve-is-the-safety-commit",
        V26,
        "The hard reserve commits without any request.",
        s26(),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
    ),
    Scenario(
        "failed-stop-is-not-a-close-out",
        V26,
        "A run that stopped on an error never counts as a successful close-out.",
        s26(close()),
        (Expect(settle26(failed=True), s26(), "none"),),
    ),
    Scenario(
        "aborted-stop-is-not-a-close-out",
        V26,
        "An aborted run never counts as a successful close-out.",
        s26(close()),
        (Expect(settle26(aborted=True), s26(), "none"),),
    ),
    Scenario(
        "settled-clears-close-out",
        V26,
        "Settlement clears every close-out phase.",
        s26(close()),
        (Expect({"type": "settled"}, s26(), "none"),),
    ),
    Scenario(
        "aborted-turn-clears-close-out",
        V26,
        "An aborted turn clears the pending close-out and manufactures nothing.",
        s26(close()),
        (Expect(turn26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "clear-clears-close-out",
        V26,
        "Lifecycle transitions clear every pending phase.",
        s26(close(), "pending"),
        (Expect({"type": "clear"}, s26(), "none"),),
    ),
    Scenario(
        "abort-clears-tool-request",
        V26,
        "An abort clears every pending phase.",
        s26(tool(), "spent"),
        (Expect({"type": "abort"}, s26(), "none"),),
    ),
    Scenario(
        "overflow-recovery-armed-and-spent-once",
        V26,
        "Overflow recovery is armed at turn_end, spent exactly once at settle, and bounded.",
        s26(),
        (
            Expect(turn26(overflow=True, failed=True), s26(None, "pending"), "none", OVERFLOW_LAZY),
            Expect(settle26(), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),
            Expect(settle26(), s26(None, "spent"), "none"),
            Expect(turn26(overflow=True, failed=True), s26(None, "pending-spent"), "none"),
            Expect(settle26(), s26(None, "spent"), "none"),
        ),
    ),
    Scenario(
        "queued-turn-defers-recovery-and-its-success-supersedes",
        V26,
        "A queued turn defers recovery; its success clears the failure chain.",
        s26(),
        (
            Expect(turn26(overflow=True, failed=True), s26(None, "pending"), "none"),
            Expect(settle26(queued=True), s26(None, "pending"), "none", ("queued",)),
            Expect(turn26(), s26(), "none"),
            Expect(settle26(), s26(), "none"),
        ),
    ),
    Scenario(
        "disabled-settle-disarms-overflow",
        V26,
        "Disabled mode disarms the pending recovery without resetting.",
        s26(None, "pending"),
        (Expect(settle26(enabled=False), s26(), "none"),),
    ),
    Scenario(
        "automatic-off-settle-disarms-overflow",
        V26,
        "Automatic resets off disarm the pending recovery.",
        s26(None, "pending"),
        (Expect(settle26(automaticResetEnabled=False), s26(), "none"),),
    ),
    Scenario(
        "aborted-settle-disarms-overflow",
        V26,
        "An aborted run disarms the pending recovery.",
        s26(None, "pending"),
        (Expect(settle26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "overflow-turn-never-consults-hard-reserve",
        V26,
        "Overflow checks read queued then automaticResetEnabled, never hardReserveDue.",
        s26(),
        (
            Expect(
                turn26(overflow=True, failed=True, hardReserveDue=True),
                s26(None, "pending"),
                "none",
                OVERFLOW_LAZY,
            ),
        ),
    ),
    Scenario(
        "queued-settle-checks-no-further-policy",
        V26,
        "With an overflow pending and work queued, settle reads only queued.",
        s26(None, "pending"),
        (Expect(settle26(queued=True), s26(None, "pending"), "none", ("queued",)),),
    ),
    Scenario(
        "requests-are-window-scoped",
        V26,
        "A close-out of an earlier window is dropped at the next window's turn, and a new "
        "window's close-out replaces a stale one.",
        s26(close(OTHER)),
        (
            Expect(close_out(W, "automatic"), s26(close(W, "automatic")), "close-out-armed"),
            Expect(turn26(OTHER), s26(), "none"),
        ),
    ),
    Scenario(
        "tool-request-dedupes-per-window",
        V26,
        "Repeated wipe_memory calls in one window deduplicate.",
        s26(),
        (
            Expect(tool_request(), s26(tool()), "none"),
            Expect(tool_request(), s26(tool()), "already-pending"),
        ),
    ),
    Scenario(
        "queued-work-runs-before-the-fallback",
        V26,
        "Queued steering/follow-up work runs once in the old window before the close-out "
        "fallback commits.",
        s26(close()),
        (
            Expect(settle26(queued=True), s26(close()), "none", ("queued",)),
            Expect(turn26(), s26(close()), "none"),
            Expect(settle26(), s26(), "commit-boundary"),
        ),
    ),
)


def _other_families() -> dict[str, tuple[Scenario, ...]]:
    # Other spec families keep their scenarios in their own modules (imported here, after
    # Scenario and Expect exist, so they can build on them).
    from pi_context.statemachine.handoff_scenarios import SCENARIOS_HANDOFF_06, V_HANDOFF

    return {V_HANDOFF: SCENARIOS_HANDOFF_06}


SCENARIOS: dict[str, tuple[Scenario, ...]] = {
    V25: SCENARIOS_025,
    V26: SCENARIOS_026,
    **_other_families(),
}
