"""Literal scenarios for ``reset-control@0.27``, the newest stored generation: 0.26 plus
commit-boundary-stop for the user's own close-out, and tool requests that remember the source
of the close-out they upgrade."""

from __future__ import annotations

from pi_context.checks.scenarios import reset_control as rc
from pi_context.checks.scenarios.reset_control import (
    ARM_MANUAL,
    OTHER,
    TURN_COMMITS,
    TURN_KEEPS_MANUAL,
    close,
    close_out,
    s26,
    tool27,
    tool_request,
    turn26,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario

SPEC_ID = "reset-control@0.27"


# What 0.27 decides differently from 0.26 and no later generation keeps (the cases its
# successors share are MANUAL_STOP_CASES and HARD_RESERVE_OVER_MANUAL in the family module).
OWN: tuple[Scenario, ...] = (
    Scenario(
        "manual-wipe-memory-commits-and-stops",
        "/wipe-memory arms a manual close-out; the model checkpoints and calls wipe_memory; "
        "its turn commits the boundary and the run stops.",
        s26(),
        (
            ARM_MANUAL,
            TURN_KEEPS_MANUAL,
            Expect(tool_request(), s26(tool27("manual")), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary-stop", ()),
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
        "manual-close-out-under-model-request-continues",
        "/wipe-memory while the model's own wipe_memory is pending is a duplicate, so the "
        "commit continues.",
        s26(tool27("tool")),
        (
            Expect(close_out(), s26(tool27("tool")), "already-pending"),
            TURN_COMMITS,
        ),
    ),
    Scenario(
        "stale-manual-tool-request-dropped",
        "A manual tool request of another window is dropped at this window's turn, "
        "without a commit.",
        s26(tool27("manual", OTHER), "pending"),
        (Expect(turn26(), s26(), "none", ("hardReserveDue",)),),
    ),
)

SCENARIOS = (
    rc.WINDOW_CASES
    + rc.UPSTREAM_KEPT_IN_027
    + OWN
    + rc.MANUAL_STOP_CASES
    + (rc.HARD_RESERVE_OVER_MANUAL,)
)
