"""Literal scenarios for ``reset-control@6bcd8b5``, the reducer of upstream commit ``6bcd8b5``
(the same as 0.38.0's ``48be3d3``): the user's close-out may carry a follow-up prompt, kept
trimmed and only when something remains; with one, the commits that stop the run in a508f68
commit and continue. Without a prompt every case is a508f68's, so its scenarios all hold.

The prompt cases restate upstream's lifecycle test "reset construction failure preserves
incoming and budget drafts" (a manual close-out given ``AFTER_RESET`` reaches the settle's
commit with it) and the rules the reducer's ``close_out`` and ``manualCommit`` spell out."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control import (
    SETTLE_NO_CHAIN_LAZY,
    W,
    close,
    s26,
    settle26,
    tool_request,
    turn26,
)
from pi_context.checks.scenarios.reset_control_stop import (
    CHANGED_IN_A508F68,
    HOOK,
    KEPT,
    OWN,
    SINCE_A508F68,
    stop_pending,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire

SPEC_ID = "reset-control@6bcd8b5"

PROMPT = "AFTER_RESET"


def close_with(prompt: str | None, source: str = "manual", window: str = W) -> Wire:
    """A close-out request as the state keeps it (a prompt only when given)."""
    request = close(window, source)
    return request if prompt is None else {**request, "prompt": prompt}


def close_out(prompt: str | None, source: str = "manual", window: str = W) -> Wire:
    """The close_out event (``prompt`` left out when None)."""
    event = rc.close_out(window, source)
    return event if prompt is None else {**event, "prompt": prompt}


PROMPT_CASES: tuple[Scenario, ...] = (
    Scenario(
        "upstream-follow-up-prompt-reaches-the-settle-commit",
        "A manual close-out with a follow-up prompt spans the turn and commits at the settle, "
        "continuing the run (the commit carries the prompt) instead of stopping it.",
        s26(),
        (
            Expect(close_out(PROMPT), s26(close_with(PROMPT)), "close-out-armed"),
            Expect(turn26(), s26(close_with(PROMPT)), "none", ("hardReserveDue",)),
            Expect(settle26(), s26(), "commit-boundary", SETTLE_NO_CHAIN_LAZY),
        ),
    ),
    Scenario(
        "prompt-is-trimmed",
        "The prompt is kept trimmed.",
        s26(),
        (Expect(close_out("  next task \n"), s26(close_with("next task")), "close-out-armed"),),
    ),
    Scenario(
        "blank-prompt-is-no-prompt",
        "A prompt of only whitespace is no prompt: the settle commits and stops.",
        s26(),
        (
            Expect(close_out(" \t "), s26(close()), "close-out-armed"),
            Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),
        ),
    ),
    Scenario(
        "budget-close-out-keeps-no-prompt",
        "An automatic close-out never keeps a prompt.",
        s26(),
        (
            Expect(
                close_out(PROMPT, "automatic"),
                s26(close_with(None, "automatic")),
                "close-out-armed",
            ),
        ),
    ),
    Scenario(
        "duplicate-manual-keeps-the-first-prompt",
        "A second /clear-memory of the window is a duplicate: the first prompt stays.",
        s26(close_with("first")),
        (
            Expect(close_out("second"), s26(close_with("first")), "already-pending"),
            Expect(close_out(None), s26(close_with("first")), "already-pending"),
        ),
    ),
    Scenario(
        "upgrade-to-manual-takes-the-new-prompt",
        "A manual close-out over the budget's close-out of the window takes its own prompt.",
        s26(close_with(None, "automatic")),
        (Expect(close_out("second"), s26(close_with("second")), "close-out-armed"),),
    ),
    Scenario(
        "upgrade-to-manual-without-a-prompt",
        "An upgrade without a prompt leaves none.",
        s26(close_with(None, "automatic")),
        (Expect(close_out(None), s26(close()), "close-out-armed"),),
    ),
    Scenario(
        "manual-over-tool-takes-the-prompt",
        "The user's close-out over the model's pending request of the window keeps its prompt.",
        s26(rc.tool27("tool")),
        (Expect(close_out(PROMPT), s26(close_with(PROMPT)), "close-out-armed"),),
    ),
    Scenario(
        "tool-call-keeps-the-prompt",
        "The model's call during the user's close-out is only acknowledged; the prompt stays.",
        s26(close_with(PROMPT)),
        (Expect(tool_request(), s26(close_with(PROMPT)), "already-pending"),),
    ),
    Scenario(
        "hard-reserve-with-a-prompt-continues",
        "The safety reset during a close-out with a prompt commits and continues: no stop "
        "intent is kept.",
        s26(close_with(PROMPT)),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
    ),
    Scenario(
        "hard-reserve-without-a-prompt-keeps-the-stop-intent",
        "Without a prompt the safety reset still commits, stops and keeps the stop intent.",
        s26(close()),
        (
            Expect(
                turn26(hardReserveDue=True),
                s26(stop_pending()),
                "commit-boundary-stop",
                ("hardReserveDue",),
            ),
        ),
    ),
    Scenario(
        "manual-overflow-with-a-prompt-continues",
        "Behind a pending chain the user's close-out with a prompt commits and continues, even "
        "after an error and with automatic resets off.",
        s26(close_with(PROMPT), "pending"),
        (
            Expect(
                settle26(failed=True, automaticResetEnabled=False),
                s26(),
                "commit-boundary",
                ("queued", "enabled"),
            ),
        ),
    ),
    Scenario(
        "overflow-keeps-the-prompt",
        "An overflow turn keeps the user's close-out and its prompt armed.",
        s26(close_with(PROMPT)),
        (
            Expect(
                turn26(overflow=True, failed=True),
                s26(close_with(PROMPT), "pending"),
                "none",
            ),
        ),
    ),
)

SCENARIOS = (
    rc.WINDOW_CASES
    + tuple(
        s
        for s in rc.UPSTREAM_KEPT_IN_027
        if s.id not in rc.CHANGED_IN_034 and s.id not in CHANGED_IN_A508F68
    )
    + rc.MANUAL_STOP_CASES
    + rc.SINCE_033_CASES
    + OWN
    + KEPT
    + HOOK
    + SINCE_A508F68
    + PROMPT_CASES
)
