"""Literal scenarios for ``reset-control@0.26-proposal``: our semantics — the seeds, and our
own answers where we deviate from published 0.26."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control import (
    MANUAL_AGAIN,
    close,
    s26,
    seed_close_out_cases,
    settle26,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario

SPEC_ID = "reset-control@0.26-proposal"

# The seeds' cases as the proposal decides them: recording a tool request is silent, and the
# queue is read first.
SEEDS = seed_close_out_cases(
    recorded="none",
    settle_reads=("queued", "enabled"),
    queued_reads=("queued",),
    fallback_why="A successful, unqueued stop commits a manual close-out; the queue is read first.",
    dedupe_why="Repeated wipe_memory calls in one window deduplicate; recording one is silent.",
    queued_why="Queued work runs once in the old window before the close-out fallback commits.",
)

# Where else the proposal deviates from published 0.26, and what it adds.
OWN: tuple[Scenario, ...] = (
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
        (MANUAL_AGAIN,),
    ),
)

SCENARIOS = rc.WINDOW_CASES + rc.BEFORE_027_CASES + SEEDS + OWN
