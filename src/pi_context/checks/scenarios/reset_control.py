"""Wire builders and cases shared by the reset-control generations.

``OVERFLOW_LAZY``/``SETTLE_LAZY`` are the reads every generation makes in that order, and
``TURN_FACTS``/``SETTLE_FACTS`` the facts every generation's boundaries carry. The rest
serves the window-scoped close-out generations (published 0.26, the 0.26 proposal, 0.27,
0.33, 0.34): states and events built from a few arguments, and the cases written for one
generation that a later one decides the same way, grouped by which generations share them.
Each version's module picks its groups; no version module imports another.
"""

from __future__ import annotations

from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire, facts_event

OVERFLOW_LAZY = ("queued", "automaticResetEnabled")
SETTLE_LAZY = ("queued", "enabled", "automaticResetEnabled")

W = "pcw:test:window"
OTHER = "pcw:test:other"
NONE: Wire = {"phase": "none"}


def close(window: str = W, source: str = "manual") -> Wire:
    return {"phase": "close-out", "windowId": window, "source": source}


def tool(window: str = W) -> Wire:
    return {"phase": "tool-requested", "windowId": window}


def s26(request: Wire | None = None, overflow: str = "idle") -> Wire:
    return {"request": dict(request or NONE), "overflow": overflow}


# The facts every generation's turn_end and before_settle carry (0.25's too), in the order
# they are sent; each generation's builders add its own facts and a case's overrides.
TURN_FACTS: Wire = {
    "aborted": False,
    "overflow": False,
    "failed": False,
    "enabled": True,
    "queued": False,
    "automaticResetEnabled": True,
}
SETTLE_FACTS: Wire = {
    "queued": False,
    "enabled": True,
    "automaticResetEnabled": True,
    "aborted": False,
}


def turn26(window: str = W, **overrides: bool) -> Wire:
    return facts_event(
        "turn_end", {"windowId": window}, TURN_FACTS, {"hardReserveDue": False}, **overrides
    )


def settle26(window: str = W, **overrides: bool) -> Wire:
    return facts_event(
        "before_settle", {"windowId": window}, SETTLE_FACTS, {"failed": False}, **overrides
    )


def close_out(window: str = W, source: str = "manual") -> Wire:
    return {"type": "close_out", "windowId": window, "source": source}


def tool_request(window: str = W) -> Wire:
    return {"type": "tool_request", "windowId": window}


# Without a pending chain, published 0.26 reads the enabled switch before the queue.
SETTLE_NO_CHAIN_LAZY = ("enabled", "queued")


# The user's /wipe-memory arms a manual close-out of the window; a second one is a duplicate.
ARM_MANUAL = Expect(close_out(), s26(close()), "close-out-armed")
MANUAL_AGAIN = Expect(close_out(), s26(close()), "already-pending")


# The seeds' 0.26 cases every close-out generation decides alike.
WINDOW_CASES: tuple[Scenario, ...] = (
    Scenario(
        "automatic-close-out-needs-automatic-resets",
        "An automatic close-out is dropped, not committed, while automatic resets are off.",
        s26(close(source="automatic")),
        (Expect(settle26(automaticResetEnabled=False), s26(), "none"),),
    ),
    Scenario(
        "hard-reserve-is-the-safety-commit",
        "The hard reserve commits without any request.",
        s26(),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
    ),
    Scenario(
        "failed-stop-is-not-a-close-out",
        "A run that stopped on an error never counts as a successful close-out.",
        s26(close()),
        (Expect(settle26(failed=True), s26(), "none"),),
    ),
    Scenario(
        "aborted-stop-is-not-a-close-out",
        "An aborted run never counts as a successful close-out.",
        s26(close()),
        (Expect(settle26(aborted=True), s26(), "none"),),
    ),
    Scenario(
        "settled-clears-close-out",
        "Settlement clears every close-out phase.",
        s26(close()),
        (Expect({"type": "settled"}, s26(), "none"),),
    ),
    Scenario(
        "aborted-turn-clears-close-out",
        "An aborted turn clears the pending close-out and manufactures nothing.",
        s26(close()),
        (Expect(turn26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "clear-clears-close-out",
        "Lifecycle transitions clear every pending phase.",
        s26(close(), "pending"),
        (Expect({"type": "clear"}, s26(), "none"),),
    ),
    Scenario(
        "overflow-recovery-armed-and-spent-once",
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
        "Disabled mode disarms the pending recovery without resetting.",
        s26(None, "pending"),
        (Expect(settle26(enabled=False), s26(), "none"),),
    ),
    Scenario(
        "automatic-off-settle-disarms-overflow",
        "Automatic resets off disarm the pending recovery.",
        s26(None, "pending"),
        (Expect(settle26(automaticResetEnabled=False), s26(), "none"),),
    ),
    Scenario(
        "aborted-settle-disarms-overflow",
        "An aborted run disarms the pending recovery.",
        s26(None, "pending"),
        (Expect(settle26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "overflow-turn-never-consults-hard-reserve",
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
        "With an overflow pending and work queued, settle reads only queued.",
        s26(None, "pending"),
        (Expect(settle26(queued=True), s26(None, "pending"), "none", ("queued",)),),
    ),
    Scenario(
        "requests-are-window-scoped",
        "A close-out of an earlier window is dropped at the next window's turn, and a new "
        "window's close-out replaces a stale one.",
        s26(close(OTHER)),
        (
            Expect(close_out(W, "automatic"), s26(close(W, "automatic")), "close-out-armed"),
            Expect(turn26(OTHER), s26(), "none"),
        ),
    ),
)


def seed_close_out_cases(
    *,
    recorded: str,
    settle_reads: tuple[str, ...],
    queued_reads: tuple[str, ...],
    fallback_why: str,
    dedupe_why: str,
    queued_why: str,
) -> tuple[Scenario, ...]:
    """The seeds' four close-out cases as published 0.26 and the proposal each decide them:
    alike but for the effect of recording a window's tool request (``recorded``) and the
    reads of a settle without a chain (``settle_reads``, or ``queued_reads`` when work is
    queued), and each says why in its own words."""
    return (
        Scenario(
            "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
            "A close-out deduplicates, survives note/tool turns, and a tool request commits it.",
            s26(),
            (
                ARM_MANUAL,
                MANUAL_AGAIN,
                Expect(turn26(), s26(close()), "none"),
                Expect(tool_request(), s26(tool()), recorded),
                Expect(turn26(), s26(), "commit-boundary"),
            ),
        ),
        Scenario(
            "manual-close-out-falls-back-at-a-normal-stop",
            fallback_why,
            s26(close()),
            (Expect(settle26(), s26(), "commit-boundary", settle_reads),),
        ),
        Scenario(
            "tool-request-dedupes-per-window",
            dedupe_why,
            s26(),
            (
                Expect(tool_request(), s26(tool()), recorded),
                Expect(tool_request(), s26(tool()), "already-pending"),
            ),
        ),
        Scenario(
            "queued-work-runs-before-the-fallback",
            queued_why,
            s26(close()),
            (
                Expect(settle26(queued=True), s26(close()), "none", queued_reads),
                Expect(turn26(), s26(close()), "none"),
                Expect(settle26(), s26(), "commit-boundary"),
            ),
        ),
    )


# The seeds' 0.26 cases the proposal keeps and 0.27 decides differently (its manual commit stops).
BEFORE_027_CASES: tuple[Scenario, ...] = (
    Scenario(
        "manual-close-out-ignores-automatic-setting",
        "A manual close-out works even when automatic resets are disabled.",
        s26(close()),
        (Expect(settle26(automaticResetEnabled=False), s26(), "commit-boundary"),),
    ),
    Scenario(
        "abort-clears-tool-request",
        "An abort clears every pending phase.",
        s26(tool(), "spent"),
        (Expect({"type": "abort"}, s26(), "none"),),
    ),
)

# Published-0.26 cases (written from reading the published reducer) that 0.27 keeps.
UPSTREAM_KEPT_IN_027: tuple[Scenario, ...] = (
    Scenario(
        "upstream-manual-over-automatic-rearms",
        "A manual close-out over its window's automatic one is re-armed as manual and reported "
        "armed; an automatic one over a manual one is a duplicate.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(close_out(), s26(close(), "spent"), "close-out-armed"),
            Expect(close_out(source="automatic"), s26(close(), "spent"), "already-pending"),
        ),
    ),
    Scenario(
        "upstream-aborted-settle-forgets-spent-chain",
        "An aborted run returns to the initial state, forgetting a spent chain, so the next "
        "overflow may recover again.",
        s26(close(), "spent"),
        (
            Expect(settle26(aborted=True, queued=True), s26(), "none", ()),
            Expect(turn26(overflow=True), s26(None, "pending"), "none", OVERFLOW_LAZY),
            Expect(settle26(), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),
        ),
    ),
    Scenario(
        "upstream-unrecoverable-chain-drops-manual-close-out",
        "Behind a pending chain that cannot recover, a manual close-out stays armed but is not "
        "committed at settle, and settlement then clears it: the close-out is lost.",
        s26(close(), "pending"),
        (
            Expect(settle26(automaticResetEnabled=False), s26(close()), "none", SETTLE_LAZY),
            Expect({"type": "settled"}, s26(), "none"),
        ),
    ),
    Scenario(
        "upstream-queued-chain-failed-run-drops-request",
        "Behind a pending chain, queued work waits; an errored run drops the request but keeps "
        "the chain, and a request of another window is dropped too.",
        s26(close(), "pending"),
        (
            Expect(settle26(queued=True, failed=True), s26(None, "pending"), "none", ("queued",)),
            Expect(close_out(OTHER), s26(close(OTHER), "pending"), "close-out-armed"),
            Expect(settle26(queued=True), s26(None, "pending"), "none", ("queued",)),
        ),
    ),
    Scenario(
        "upstream-spent-chain-drops-request-without-commit",
        "A second failure in a spent chain closes it at settle and drops the pending "
        "close-out without any commit.",
        s26(close(), "pending-spent"),
        (Expect(settle26(), s26(None, "spent"), "none", SETTLE_LAZY),),
    ),
    Scenario(
        "upstream-recovery-serves-close-out",
        "The one recovery also consumes a pending close-out of the window.",
        s26(close(source="automatic"), "pending"),
        (Expect(settle26(), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),),
    ),
    Scenario(
        "upstream-settle-disabled-reads-switch-only",
        "Without a chain, a disabled settle reads only the switch and drops the close-out.",
        s26(close()),
        (Expect(settle26(enabled=False, queued=True), s26(), "none", ("enabled",)),),
    ),
    Scenario(
        "upstream-failed-settle-reads-nothing",
        "Without a chain, an errored run drops the close-out before reading any fact.",
        s26(close()),
        (Expect(settle26(failed=True), s26(), "none", ()),),
    ),
    Scenario(
        "upstream-fallback-forgets-spent-chain",
        "A committed fallback boundary starts a fresh window and ends a spent chain.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(
                settle26(),
                s26(),
                "commit-boundary",
                ("enabled", "queued", "automaticResetEnabled"),
            ),
        ),
    ),
    Scenario(
        "upstream-overflow-probes-queue-before-switch",
        "At an overflowing turn the queue is probed before the switch; disabled mode never "
        "reads the policy.",
        s26(close(), "spent"),
        (Expect(turn26(overflow=True, enabled=False), s26(None, "spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-errored-run-still-recovers",
        "Behind a pending chain an errored run is not what decides recovery: with the switch "
        "and the policy on it recovers; with the switch off it ends the chain.",
        s26(None, "pending"),
        (
            Expect(settle26(failed=True), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),
            Expect(turn26(overflow=True), s26(None, "pending-spent"), "none", OVERFLOW_LAZY),
            Expect(
                settle26(failed=True, enabled=False),
                s26(None, "spent"),
                "none",
                ("queued", "enabled"),
            ),
        ),
    ),
    Scenario(
        "upstream-unrecoverable-chain-keeps-automatic-close-out",
        "Behind a chain that cannot recover, the window's automatic close-out stays armed as "
        "it was (not upgraded).",
        s26(close(source="automatic"), "pending"),
        (
            Expect(
                settle26(automaticResetEnabled=False),
                s26(close(source="automatic")),
                "none",
                SETTLE_LAZY,
            ),
        ),
    ),
    Scenario(
        "upstream-queued-settle-keeps-spent-chain",
        "Without a pending chain, queued work keeps both the close-out and a spent chain.",
        s26(close(), "spent"),
        (Expect(settle26(queued=True), s26(close(), "spent"), "none", SETTLE_NO_CHAIN_LAZY),),
    ),
)


# ---------------------------------------------------------------- 0.27 and later


def tool27(source: str, window: str = W) -> Wire:
    """A tool request from 0.27 on: it remembers who is behind it."""
    return {"phase": "tool-requested", "windowId": window, "source": source}


# Steps many cases take from 0.27 on: a plain turn keeps the user's close-out armed (it
# reads only the hard reserve), and the settle then commits it without a chain and stops; a
# turn commits the model's own request, reading nothing, and the run continues.
TURN_KEEPS_MANUAL = Expect(turn26(), s26(close()), "none", ("hardReserveDue",))
SETTLE_COMMITS_STOP = Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY)
TURN_COMMITS = Expect(turn26(), s26(), "commit-boundary", ())

# 0.27's own cases (the user's close-out commits and stops) that 0.33 and 0.34 keep.
MANUAL_STOP_CASES: tuple[Scenario, ...] = (
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
            TURN_COMMITS,
        ),
    ),
    Scenario(
        "budget-close-out-upgraded-continues",
        "A tool request over the budget's close-out keeps source automatic and continues.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(tool_request(), s26(tool27("automatic"), "spent"), "close-out-armed"),
            TURN_COMMITS,
        ),
    ),
    Scenario(
        "manual-fallback-forgets-spent-chain",
        "The stopping fallback also starts a fresh window that ends a spent chain.",
        s26(close(), "spent"),
        (SETTLE_COMMITS_STOP,),
    ),
)

# The hard reserve over the user's close-out: 0.27 and 0.33 commit and continue; 0.34 keeps a
# stop intent instead.
HARD_RESERVE_OVER_MANUAL = Scenario(
    "hard-reserve-over-manual-close-out-continues",
    "The hard reserve commits over a pending manual close-out and continues: only a tool "
    "request or the settle fallback stops.",
    s26(close()),
    (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
)

# ---------------------------------------------------------------- 0.33 and later

# Each class of case where 0.33 decides something 0.27 did not, and its contrast (the
# budget's close-out is still a duplicate of the model's request); 0.34 keeps them all.
SINCE_033_CASES: tuple[Scenario, ...] = (
    Scenario(
        "upstream-model-call-only-acknowledges-manual-close-out",
        "During /wipe-memory the model's wipe_memory is a duplicate: the close-out spans its "
        "turn and commits at the settle, which stops the run.",
        s26(),
        (
            ARM_MANUAL,
            MANUAL_AGAIN,
            TURN_KEEPS_MANUAL,
            Expect(tool_request(), s26(close()), "already-pending"),
            TURN_KEEPS_MANUAL,
            SETTLE_COMMITS_STOP,
        ),
    ),
    Scenario(
        "upstream-manual-close-out-outranks-model-request",
        "/wipe-memory over the model's pending wipe_memory of the same window turns it into a "
        "manual close-out: the turn no longer commits, the settle commits and stops.",
        s26(tool27("tool")),
        (
            ARM_MANUAL,
            TURN_KEEPS_MANUAL,
            SETTLE_COMMITS_STOP,
        ),
    ),
    Scenario(
        "upstream-budget-close-out-keeps-model-request",
        "The budget's close-out over the model's pending request of its window is still a "
        "duplicate; the turn commits and continues.",
        s26(tool27("tool"), "spent"),
        (
            Expect(close_out(source="automatic"), s26(tool27("tool"), "spent"), "already-pending"),
            TURN_COMMITS,
        ),
    ),
    Scenario(
        "upstream-model-call-upgrades-budget-close-out",
        "The model's call during the budget's close-out of its window becomes a tool request "
        "with source automatic and commits at turn_end, continuing.",
        s26(close(source="automatic")),
        (
            Expect(tool_request(), s26(tool27("automatic")), "close-out-armed"),
            Expect(tool_request(), s26(tool27("automatic")), "already-pending"),
            TURN_COMMITS,
        ),
    ),
    Scenario(
        "upstream-model-call-replaces-other-windows-close-out",
        "A close-out of another window is not taken over: the model's call in this window is "
        "its own request (source tool) and its commit continues.",
        s26(close(OTHER)),
        (
            Expect(tool_request(), s26(tool27("tool")), "close-out-armed"),
            TURN_COMMITS,
        ),
    ),
)

# Cases of UPSTREAM_KEPT_IN_027 that 0.34 decides otherwise: there the user's close-out
# survives an overflow turn and, behind a pending chain, commits and stops.
CHANGED_IN_034 = frozenset(
    {
        "upstream-unrecoverable-chain-drops-manual-close-out",
        "upstream-queued-chain-failed-run-drops-request",
        "upstream-spent-chain-drops-request-without-commit",
        "upstream-overflow-probes-queue-before-switch",
    }
)
