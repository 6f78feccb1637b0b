"""Literal scenarios for ``reset-control@0.27``, the newest stored generation: 0.26 plus
commit-boundary-stop for the user's own close-out, and tool requests that remember the source
of the close-out they upgrade."""

from __future__ import annotations

from pi_context.statemachine.scenarios.reset_control import (
    OTHER,
    SETTLE_NO_CHAIN_LAZY,
    UPSTREAM_KEPT_IN_027,
    WINDOW_CASES,
    W,
    close,
    close_out,
    s26,
    settle26,
    tool_request,
    turn26,
)
from pi_context.statemachine.scenarios.scenario import Expect, Scenario, Wire

SPEC_ID = "reset-control@0.27"


def tool27(source: str, window: str = W) -> Wire:
    return {"phase": "tool-requested", "windowId": window, "source": source}


# What 0.27 decides differently from 0.26: no tool request in any state, the manual stop.
OWN: tuple[Scenario, ...] = (
    Scenario(
        "manual-wipe-memory-commits-and-stops",
        "/wipe-memory arms a manual close-out; the model checkpoints and calls wipe_memory; "
        "its turn commits the boundary and the run stops.",
        s26(),
        (
            Expect(close_out(), s26(close()), "close-out-armed"),
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(tool_request(), s26(tool27("manual")), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary-stop", ()),
        ),
    ),
    Scenario(
        "manual-close-out-fallback-stops",
        "A manual close-out the model simply stops on commits at settle and stays stopped, "
        "even with automatic resets off.",
        s26(close()),
        (
            Expect(
                settle26(automaticResetEnabled=False),
                s26(),
                "commit-boundary-stop",
                SETTLE_NO_CHAIN_LAZY,
            ),
        ),
    ),
    Scenario(
        "model-wipe-memory-continues",
        "The model's own wipe_memory is recorded with source tool and commits, then continues.",
        s26(),
        (
            Expect(tool_request(), s26(tool27("tool")), "close-out-armed"),
            Expect(tool_request(), s26(tool27("tool")), "already-pending"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "budget-close-out-upgraded-continues",
        "A tool request over the budget's close-out keeps source automatic and continues.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(tool_request(), s26(tool27("automatic"), "spent"), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "tool-request-takes-another-windows-source",
        "A tool request takes over the source of a close-out even from another window.",
        s26(close(OTHER)),
        (
            Expect(tool_request(), s26(tool27("manual")), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary-stop", ()),
        ),
    ),
    Scenario(
        "hard-reserve-over-manual-close-out-continues",
        "The hard reserve commits over a pending manual close-out and continues: only a tool "
        "request or the settle fallback stops.",
        s26(close()),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
    ),
    Scenario(
        "manual-close-out-under-model-request-continues",
        "/wipe-memory while the model's own wipe_memory is pending is a duplicate, so the "
        "commit continues.",
        s26(tool27("tool")),
        (
            Expect(close_out(), s26(tool27("tool")), "already-pending"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "manual-fallback-forgets-spent-chain",
        "The stopping fallback also starts a fresh window that ends a spent chain.",
        s26(close(), "spent"),
        (Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),),
    ),
    Scenario(
        "stale-manual-tool-request-dropped",
        "A manual tool request of another window is dropped at this window's turn, "
        "without a commit.",
        s26(tool27("manual", OTHER), "pending"),
        (Expect(turn26(), s26(), "none", ("hardReserveDue",)),),
    ),
)

SCENARIOS = WINDOW_CASES + UPSTREAM_KEPT_IN_027 + OWN
