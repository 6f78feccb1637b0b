"""Literal scenarios for ``reset-control@0.26``: the seeds' window-scoped close-out, and
what published 0.26.0 decides where the seeds are silent (written from reading its reducer).
The cases later generations share live in :mod:`.reset_control`."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control import (
    ARM_MANUAL,
    OTHER,
    SETTLE_NO_CHAIN_LAZY,
    close,
    close_out,
    s26,
    seed_close_out_cases,
    settle26,
    tool,
    tool_request,
    turn26,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario

SPEC_ID = "reset-control@0.26"

# The seeds' cases as only published 0.26 decides them: recording a tool request is reported
# as armed, and a settle without a chain reads the switch before the queue.
SEEDS = seed_close_out_cases(
    recorded="close-out-armed",
    settle_reads=SETTLE_NO_CHAIN_LAZY,
    queued_reads=SETTLE_NO_CHAIN_LAZY,
    fallback_why="A successful, unqueued stop commits a manual close-out at before_settle.",
    dedupe_why="Repeated wipe_memory calls in one window deduplicate.",
    queued_why="Queued steering/follow-up work runs once in the old window before the close-out "
    "fallback commits.",
)

# Published-0.26 cases no later generation keeps.
UPSTREAM: tuple[Scenario, ...] = (
    Scenario(
        "upstream-tool-request-reports-armed",
        "A tool request is reported as armed, whether fresh, over its window's close-out or "
        "over another window's request.",
        s26(close(OTHER)),
        (
            Expect(tool_request(), s26(tool()), "close-out-armed"),
            Expect(
                close_out(OTHER, "automatic"), s26(close(OTHER, "automatic")), "close-out-armed"
            ),
            ARM_MANUAL,
            Expect(tool_request(), s26(tool()), "close-out-armed"),
        ),
    ),
    Scenario(
        "upstream-close-out-under-tool-request-is-duplicate",
        "A close-out while the window's own tool request is pending is a duplicate.",
        s26(tool(), "pending"),
        (Expect(close_out(source="automatic"), s26(tool(), "pending"), "already-pending"),),
    ),
    Scenario(
        "upstream-queued-chain-keeps-window-request",
        "Behind a pending spent chain with queued work, the window's tool request waits.",
        s26(tool(), "pending-spent"),
        (Expect(settle26(queued=True), s26(tool(), "pending-spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-settle-drops-uncommitted-tool-request",
        "A tool request that did not commit at its turn is dropped at settle, not committed; "
        "the switch is read first.",
        s26(tool(), "spent"),
        (Expect(settle26(queued=True), s26(None, "spent"), "none", ("enabled",)),),
    ),
    Scenario(
        "upstream-error-turn-keeps-chain",
        "A non-overflow error drops the request but keeps the armed chain for settle.",
        s26(tool(), "pending"),
        (Expect(turn26(failed=True, hardReserveDue=True), s26(None, "pending"), "none", ()),),
    ),
)

SCENARIOS = SEEDS + rc.WINDOW_CASES + rc.BEFORE_027_CASES + rc.UPSTREAM_KEPT_IN_027 + UPSTREAM
