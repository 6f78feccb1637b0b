"""Literal scenarios for ``reset-control@0.26``: the seeds' window-scoped close-out, and
what published 0.26.0 decides where the seeds are silent (written from reading its reducer).
The cases later generations share live in :mod:`.reset_control`."""

from __future__ import annotations

from pi_context.statemachine.scenarios.reset_control import (
    BEFORE_027_CASES,
    OTHER,
    SETTLE_NO_CHAIN_LAZY,
    UPSTREAM_KEPT_IN_027,
    WINDOW_CASES,
    close,
    close_out,
    s26,
    settle26,
    tool,
    tool_request,
    turn26,
)
from pi_context.statemachine.scenarios.scenario import Expect, Scenario

SPEC_ID = "reset-control@0.26"

# The seeds' cases only published 0.26 decides this way.
SEEDS: tuple[Scenario, ...] = (
    Scenario(
        "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
        "A close-out deduplicates, survives note/tool turns, and a tool request commits it.",
        s26(),
        (
            Expect(close_out(), s26(close()), "close-out-armed"),
            Expect(close_out(), s26(close()), "already-pending"),
            Expect(turn26(), s26(close()), "none"),
            Expect(tool_request(), s26(tool()), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary"),
        ),
    ),
    Scenario(
        "manual-close-out-falls-back-at-a-normal-stop",
        "A successful, unqueued stop commits a manual close-out at before_settle.",
        s26(close()),
        (Expect(settle26(), s26(), "commit-boundary", SETTLE_NO_CHAIN_LAZY),),
    ),
    Scenario(
        "tool-request-dedupes-per-window",
        "Repeated wipe_memory calls in one window deduplicate.",
        s26(),
        (
            Expect(tool_request(), s26(tool()), "close-out-armed"),
            Expect(tool_request(), s26(tool()), "already-pending"),
        ),
    ),
    Scenario(
        "queued-work-runs-before-the-fallback",
        "Queued steering/follow-up work runs once in the old window before the close-out "
        "fallback commits.",
        s26(close()),
        (
            Expect(settle26(queued=True), s26(close()), "none", SETTLE_NO_CHAIN_LAZY),
            Expect(turn26(), s26(close()), "none"),
            Expect(settle26(), s26(), "commit-boundary"),
        ),
    ),
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
            Expect(close_out(), s26(close()), "close-out-armed"),
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

SCENARIOS = SEEDS + WINDOW_CASES + BEFORE_027_CASES + UPSTREAM_KEPT_IN_027 + UPSTREAM
