"""Literal scenarios for ``reset-control@0.25``: the seeds' behaviours of the explicit
request and overflow recovery, and what published 0.25.1 decides where the seeds are silent
(written from reading its reducer)."""

from __future__ import annotations

from pi_context.checks.scenarios.reset_control import (
    OVERFLOW_LAZY,
    SETTLE_FACTS,
    SETTLE_LAZY,
    TURN_FACTS,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire, facts_event

SPEC_ID = "reset-control@0.25"


def s25(request: str = "none", overflow: str = "idle") -> Wire:
    return {"request": request, "overflow": overflow}


def turn25(**overrides: bool) -> Wire:
    return facts_event("turn_end", TURN_FACTS, {"thresholdDue": False}, **overrides)


def settle25(**overrides: bool) -> Wire:
    return facts_event("before_settle", SETTLE_FACTS, **overrides)


REQUEST = {"type": "request"}
SETTLED = {"type": "settled"}
ABORT = {"type": "abort"}
CLEAR = {"type": "clear"}
# Published 0.25.1 also hands the settle boundary its abort flag lazily and reads it last.
SETTLE_LAZY_25 = (*SETTLE_LAZY, "aborted")


SEEDS: tuple[Scenario, ...] = (
    Scenario(
        "explicit-request-dedupes-and-is-consumed",
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
        "A completed, enabled turn whose usage is due commits without a request.",
        s25(),
        (Expect(turn25(thresholdDue=True), s25(), "commit-boundary", ("thresholdDue",)),),
    ),
    Scenario(
        "completed-turn-consults-only-threshold",
        "A completed turn with no trigger commits nothing and reads only thresholdDue.",
        s25(),
        (Expect(turn25(), s25(), "none", ("thresholdDue",)),),
    ),
    Scenario(
        "disabled-turn-drops-request",
        "A disabled turn drops the explicit request without committing or reading policy.",
        s25("explicit"),
        (Expect(turn25(enabled=False, thresholdDue=True), s25(), "none", ()),),
    ),
    Scenario(
        "failed-turn-drops-request",
        "A failed turn drops the request, commits nothing and reads no threshold.",
        s25("explicit"),
        (Expect(turn25(failed=True, thresholdDue=True), s25(), "none", ()),),
    ),
    Scenario(
        "aborted-turn-clears-both-axes",
        "An abort manufactures no continuation and consults no policy guard.",
        s25("explicit", "pending"),
        (Expect(turn25(aborted=True), s25(), "none", ()),),
    ),
    Scenario(
        "settlement-keeps-only-the-request",
        "Settlement ends the failure chain but keeps a pending explicit request.",
        s25("explicit", "pending"),
        (Expect(SETTLED, s25("explicit"), "none"),),
    ),
    Scenario(
        "clear-resets-both-axes",
        "Lifecycle transitions reset both axes.",
        s25("explicit", "pending"),
        (Expect(CLEAR, s25(), "none"),),
    ),
    Scenario(
        "abort-resets-both-axes",
        "An abort resets both axes.",
        s25("explicit", "pending-spent"),
        (Expect(ABORT, s25(), "none"),),
    ),
    Scenario(
        "overflow-recovery-armed-and-spent-once",
        "An overflow arms recovery at turn_end; the first settle spends it; a later failure "
        "in the chain is bounded.",
        s25(),
        (
            Expect(
                turn25(overflow=True, failed=True), s25("none", "pending"), "none", OVERFLOW_LAZY
            ),
            Expect(settle25(), s25("none", "spent"), "recover-overflow", SETTLE_LAZY_25),
            Expect(settle25(), s25("none", "spent"), "none"),
            Expect(turn25(overflow=True, failed=True), s25("none", "pending-spent"), "none"),
            Expect(settle25(), s25("none", "spent"), "none"),
        ),
    ),
    Scenario(
        "queued-success-supersedes-the-failure",
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
        "An overflow with queued work cannot recover and reads no further policy.",
        s25(),
        (Expect(turn25(overflow=True, failed=True, queued=True), s25(), "none", ("queued",)),),
    ),
    Scenario(
        "disabled-settle-disarms",
        "Disabled mode never spends overflow recovery.",
        s25("none", "pending"),
        (Expect(settle25(enabled=False), s25(), "none"),),
    ),
    Scenario(
        "automatic-off-settle-disarms",
        "Without automatic resets the pending recovery is disarmed.",
        s25("none", "pending"),
        (Expect(settle25(automaticResetEnabled=False), s25(), "none"),),
    ),
    Scenario(
        "aborted-settle-disarms",
        "An aborted run disarms the pending recovery.",
        s25("none", "pending"),
        (Expect(settle25(aborted=True), s25(), "none"),),
    ),
)

# What published 0.25.1 decides where the seeds are silent.
UPSTREAM: tuple[Scenario, ...] = (
    Scenario(
        "upstream-overflow-probes-queue-before-switch",
        "At an overflowing turn the queue is probed first, even in disabled mode; the policy "
        "is read only when the switch is on.",
        s25("explicit", "spent"),
        (Expect(turn25(overflow=True, enabled=False), s25("none", "spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-overflow-queued-reads-nothing-else",
        "A queued overflow disarms after reading only the queue.",
        s25("none", "pending"),
        (Expect(turn25(overflow=True, queued=True), s25(), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-queued-settle-ignores-abort",
        "With a pending chain and queued work, settle waits even for an aborted run; the "
        "abort is never read.",
        s25("explicit", "pending"),
        (
            Expect(
                settle25(queued=True, aborted=True), s25("explicit", "pending"), "none", ("queued",)
            ),
        ),
    ),
    Scenario(
        "upstream-spent-chain-waits-for-queue",
        "A second failure in a spent chain still waits for queued work before it is closed.",
        s25("none", "pending-spent"),
        (
            Expect(settle25(queued=True), s25("none", "pending-spent"), "none", ("queued",)),
            Expect(settle25(), s25("none", "spent"), "none", SETTLE_LAZY_25),
        ),
    ),
    Scenario(
        "upstream-abort-read-last-at-settle",
        "The run's abort flag is read only after the switch and the policy allow recovery.",
        s25("none", "pending"),
        (Expect(settle25(aborted=True), s25(), "none", SETTLE_LAZY_25),),
    ),
    Scenario(
        "upstream-disabled-settle-reads-switch-only",
        "A disabled settle reads the queue and the switch, not the policy or the abort.",
        s25("none", "pending-spent"),
        (Expect(settle25(enabled=False), s25("none", "spent"), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-idle-settle-reads-nothing",
        "Without a pending chain the settle boundary reads no fact and keeps the request.",
        s25("explicit", "spent"),
        (Expect(settle25(queued=True, aborted=True), s25("explicit", "spent"), "none", ()),),
    ),
)

SCENARIOS = SEEDS + UPSTREAM
