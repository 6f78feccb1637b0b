"""Literal scenarios for ``reset-control@0.26-proposal``: our semantics — the seeds, and our
own answers where we deviate from published 0.26."""

from __future__ import annotations

from pi_context.statemachine.scenarios.reset_control import (
    BEFORE_027_CASES,
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

SPEC_ID = "reset-control@0.26-proposal"

# Where the proposal deviates from published 0.26, and what it adds.
OWN: tuple[Scenario, ...] = (
    Scenario(
        "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
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
        "A successful, unqueued stop commits a manual close-out; the queue is read first.",
        s26(close()),
        (Expect(settle26(), s26(), "commit-boundary", ("queued", "enabled")),),
    ),
    Scenario(
        "tool-request-dedupes-per-window",
        "Repeated wipe_memory calls in one window deduplicate; recording one is silent.",
        s26(),
        (
            Expect(tool_request(), s26(tool()), "none"),
            Expect(tool_request(), s26(tool()), "already-pending"),
        ),
    ),
    Scenario(
        "queued-work-runs-before-the-fallback",
        "Queued work runs once in the old window before the close-out fallback commits.",
        s26(close()),
        (
            Expect(settle26(queued=True), s26(close()), "none", ("queued",)),
            Expect(turn26(), s26(close()), "none"),
            Expect(settle26(), s26(), "commit-boundary"),
        ),
    ),
    Scenario(
        "proposal-unrecoverable-chain-still-closes-out",
        "Behind a pending chain that cannot recover, a manual close-out is committed at "
        "settle instead of being lost.",
        s26(close(), "pending"),
        (Expect(settle26(automaticResetEnabled=False), s26(), "commit-boundary"),),
    ),
    Scenario(
        "proposal-aborted-settle-keeps-spent-chain",
        "An aborted run does not give a spent chain a second recovery.",
        s26(close(), "spent"),
        (Expect(settle26(aborted=True), s26(None, "spent"), "none"),),
    ),
    Scenario(
        "proposal-manual-upgrade-is-a-duplicate",
        "A manual close-out over its window's automatic one upgrades it silently.",
        s26(close(source="automatic")),
        (Expect(close_out(), s26(close()), "already-pending"),),
    ),
)

SCENARIOS = WINDOW_CASES + BEFORE_027_CASES + OWN
