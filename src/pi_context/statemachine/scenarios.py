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
from dataclasses import dataclass, replace
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
# Published 0.25.1 also hands the settle boundary its abort flag lazily and reads it last.
SETTLE_LAZY_25 = (*SETTLE_LAZY, "aborted")

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
            Expect(settle25(), s25("none", "spent"), "recover-overflow", SETTLE_LAZY_25),
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


# Without a pending chain, published 0.26 reads the enabled switch before the queue.
SETTLE_NO_CHAIN_LAZY = ("enabled", "queued")

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
            Expect(tool_request(), s26(tool()), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary"),
        ),
    ),
    Scenario(
        "manual-close-out-falls-back-at-a-normal-stop",
        V26,
        "A successful, unqueued stop commits a manual close-out at before_settle.",
        s26(close()),
        (Expect(settle26(), s26(), "commit-boundary", SETTLE_NO_CHAIN_LAZY),),
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
            Expect(tool_request(), s26(tool()), "close-out-armed"),
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
            Expect(settle26(queued=True), s26(close()), "none", SETTLE_NO_CHAIN_LAZY),
            Expect(turn26(), s26(close()), "none"),
            Expect(settle26(), s26(), "commit-boundary"),
        ),
    ),
)


# ---------------------------------------------------------------- published-reducer cases
# What published pi-context decides where the seeds are silent. Each is literal and written
# from reading the published reducers; they pin a spec to upstream (0.25.1, 0.26.0).

UPSTREAM_025: tuple[Scenario, ...] = (
    Scenario(
        "upstream-overflow-probes-queue-before-switch",
        V25,
        "At an overflowing turn the queue is probed first, even in disabled mode; the policy "
        "is read only when the switch is on.",
        s25("explicit", "spent"),
        (Expect(turn25(overflow=True, enabled=False), s25("none", "spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-overflow-queued-reads-nothing-else",
        V25,
        "A queued overflow disarms after reading only the queue.",
        s25("none", "pending"),
        (Expect(turn25(overflow=True, queued=True), s25(), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-queued-settle-ignores-abort",
        V25,
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
        V25,
        "A second failure in a spent chain still waits for queued work before it is closed.",
        s25("none", "pending-spent"),
        (
            Expect(settle25(queued=True), s25("none", "pending-spent"), "none", ("queued",)),
            Expect(settle25(), s25("none", "spent"), "none", SETTLE_LAZY_25),
        ),
    ),
    Scenario(
        "upstream-abort-read-last-at-settle",
        V25,
        "The run's abort flag is read only after the switch and the policy allow recovery.",
        s25("none", "pending"),
        (Expect(settle25(aborted=True), s25(), "none", SETTLE_LAZY_25),),
    ),
    Scenario(
        "upstream-disabled-settle-reads-switch-only",
        V25,
        "A disabled settle reads the queue and the switch, not the policy or the abort.",
        s25("none", "pending-spent"),
        (Expect(settle25(enabled=False), s25("none", "spent"), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-idle-settle-reads-nothing",
        V25,
        "Without a pending chain the settle boundary reads no fact and keeps the request.",
        s25("explicit", "spent"),
        (Expect(settle25(queued=True, aborted=True), s25("explicit", "spent"), "none", ()),),
    ),
)

UPSTREAM_026: tuple[Scenario, ...] = (
    Scenario(
        "upstream-tool-request-reports-armed",
        V26,
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
        "upstream-manual-over-automatic-rearms",
        V26,
        "A manual close-out over its window's automatic one is re-armed as manual and reported "
        "armed; an automatic one over a manual one is a duplicate.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(close_out(), s26(close(), "spent"), "close-out-armed"),
            Expect(close_out(source="automatic"), s26(close(), "spent"), "already-pending"),
        ),
    ),
    Scenario(
        "upstream-close-out-under-tool-request-is-duplicate",
        V26,
        "A close-out while the window's own tool request is pending is a duplicate.",
        s26(tool(), "pending"),
        (Expect(close_out(source="automatic"), s26(tool(), "pending"), "already-pending"),),
    ),
    Scenario(
        "upstream-aborted-settle-forgets-spent-chain",
        V26,
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
        V26,
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
        V26,
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
        "upstream-queued-chain-keeps-window-request",
        V26,
        "Behind a pending spent chain with queued work, the window's tool request waits.",
        s26(tool(), "pending-spent"),
        (Expect(settle26(queued=True), s26(tool(), "pending-spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-spent-chain-drops-request-without-commit",
        V26,
        "A second failure in a spent chain closes it at settle and drops the pending "
        "close-out without any commit.",
        s26(close(), "pending-spent"),
        (Expect(settle26(), s26(None, "spent"), "none", SETTLE_LAZY),),
    ),
    Scenario(
        "upstream-recovery-serves-close-out",
        V26,
        "The one recovery also consumes a pending close-out of the window.",
        s26(close(source="automatic"), "pending"),
        (Expect(settle26(), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),),
    ),
    Scenario(
        "upstream-settle-drops-uncommitted-tool-request",
        V26,
        "A tool request that did not commit at its turn is dropped at settle, not committed; "
        "the switch is read first.",
        s26(tool(), "spent"),
        (Expect(settle26(queued=True), s26(None, "spent"), "none", ("enabled",)),),
    ),
    Scenario(
        "upstream-settle-disabled-reads-switch-only",
        V26,
        "Without a chain, a disabled settle reads only the switch and drops the close-out.",
        s26(close()),
        (Expect(settle26(enabled=False, queued=True), s26(), "none", ("enabled",)),),
    ),
    Scenario(
        "upstream-failed-settle-reads-nothing",
        V26,
        "Without a chain, an errored run drops the close-out before reading any fact.",
        s26(close()),
        (Expect(settle26(failed=True), s26(), "none", ()),),
    ),
    Scenario(
        "upstream-fallback-forgets-spent-chain",
        V26,
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
        V26,
        "At an overflowing turn the queue is probed before the switch; disabled mode never "
        "reads the policy.",
        s26(close(), "spent"),
        (Expect(turn26(overflow=True, enabled=False), s26(None, "spent"), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-error-turn-keeps-chain",
        V26,
        "A non-overflow error drops the request but keeps the armed chain for settle.",
        s26(tool(), "pending"),
        (Expect(turn26(failed=True, hardReserveDue=True), s26(None, "pending"), "none", ()),),
    ),
    Scenario(
        "upstream-errored-run-still-recovers",
        V26,
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
        V26,
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
        V26,
        "Without a pending chain, queued work keeps both the close-out and a spent chain.",
        s26(close(), "spent"),
        (Expect(settle26(queued=True), s26(close(), "spent"), "none", SETTLE_NO_CHAIN_LAZY),),
    ),
)

# ---------------------------------------------------------------- reset-control@0.26-proposal
# Our semantics: the same seeds, and our own answers where we deviate from published 0.26.

VP = "reset-control@0.26-proposal"
_DEVIATING = {
    "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
    "manual-close-out-falls-back-at-a-normal-stop",
    "tool-request-dedupes-per-window",
    "queued-work-runs-before-the-fallback",
}

PROPOSAL_SCENARIOS: tuple[Scenario, ...] = tuple(
    replace(s, spec=VP) for s in SCENARIOS_026 if s.id not in _DEVIATING
) + (
    Scenario(
        "close-out-dedupes-spans-turns-and-upgrades-to-tool-commit",
        VP,
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
        VP,
        "A successful, unqueued stop commits a manual close-out; the queue is read first.",
        s26(close()),
        (Expect(settle26(), s26(), "commit-boundary", ("queued", "enabled")),),
    ),
    Scenario(
        "tool-request-dedupes-per-window",
        VP,
        "Repeated wipe_memory calls in one window deduplicate; recording one is silent.",
        s26(),
        (
            Expect(tool_request(), s26(tool()), "none"),
            Expect(tool_request(), s26(tool()), "already-pending"),
        ),
    ),
    Scenario(
        "queued-work-runs-before-the-fallback",
        VP,
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
        VP,
        "Behind a pending chain that cannot recover, a manual close-out is committed at "
        "settle instead of being lost.",
        s26(close(), "pending"),
        (Expect(settle26(automaticResetEnabled=False), s26(), "commit-boundary"),),
    ),
    Scenario(
        "proposal-aborted-settle-keeps-spent-chain",
        VP,
        "An aborted run does not give a spent chain a second recovery.",
        s26(close(), "spent"),
        (Expect(settle26(aborted=True), s26(None, "spent"), "none"),),
    ),
    Scenario(
        "proposal-manual-upgrade-is-a-duplicate",
        VP,
        "A manual close-out over its window's automatic one upgrades it silently.",
        s26(close(source="automatic")),
        (Expect(close_out(), s26(close()), "already-pending"),),
    ),
)

# ---------------------------------------------------------------- reset-control@0.27
# The newest stored generation: 0.26 plus commit-boundary-stop for the user's own close-out,
# and tool requests that remember the source of the close-out they upgrade.

V27 = "reset-control@0.27"


def tool27(source: str, window: str = W) -> Wire:
    return {"phase": "tool-requested", "windowId": window, "source": source}


# 0.26 cases 0.27 decides the same way (no tool request in any state, no manual commit).
_SAME_IN_027 = (
    "automatic-close-out-needs-automatic-resets",
    "hard-reserve-is-the-safety-commit",
    "failed-stop-is-not-a-close-out",
    "aborted-stop-is-not-a-close-out",
    "settled-clears-close-out",
    "aborted-turn-clears-close-out",
    "clear-clears-close-out",
    "overflow-recovery-armed-and-spent-once",
    "queued-turn-defers-recovery-and-its-success-supersedes",
    "disabled-settle-disarms-overflow",
    "automatic-off-settle-disarms-overflow",
    "aborted-settle-disarms-overflow",
    "overflow-turn-never-consults-hard-reserve",
    "queued-settle-checks-no-further-policy",
    "requests-are-window-scoped",
    "upstream-manual-over-automatic-rearms",
    "upstream-aborted-settle-forgets-spent-chain",
    "upstream-unrecoverable-chain-drops-manual-close-out",
    "upstream-queued-chain-failed-run-drops-request",
    "upstream-spent-chain-drops-request-without-commit",
    "upstream-recovery-serves-close-out",
    "upstream-settle-disabled-reads-switch-only",
    "upstream-failed-settle-reads-nothing",
    "upstream-fallback-forgets-spent-chain",
    "upstream-overflow-probes-queue-before-switch",
    "upstream-errored-run-still-recovers",
    "upstream-unrecoverable-chain-keeps-automatic-close-out",
    "upstream-queued-settle-keeps-spent-chain",
)

SCENARIOS_027: tuple[Scenario, ...] = tuple(
    replace(s, spec=V27) for s in SCENARIOS_026 + UPSTREAM_026 if s.id in _SAME_IN_027
) + (
    Scenario(
        "manual-wipe-memory-commits-and-stops",
        V27,
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
        V27,
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
        V27,
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
        V27,
        "A tool request over the budget's close-out keeps source automatic and continues.",
        s26(close(source="automatic"), "spent"),
        (
            Expect(tool_request(), s26(tool27("automatic"), "spent"), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "tool-request-takes-another-windows-source",
        V27,
        "A tool request takes over the source of a close-out even from another window.",
        s26(close(OTHER)),
        (
            Expect(tool_request(), s26(tool27("manual")), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary-stop", ()),
        ),
    ),
    Scenario(
        "hard-reserve-over-manual-close-out-continues",
        V27,
        "The hard reserve commits over a pending manual close-out and continues: only a tool "
        "request or the settle fallback stops.",
        s26(close()),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ("hardReserveDue",)),),
    ),
    Scenario(
        "manual-close-out-under-model-request-continues",
        V27,
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
        V27,
        "The stopping fallback also starts a fresh window that ends a spent chain.",
        s26(close(), "spent"),
        (Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),),
    ),
    Scenario(
        "stale-manual-tool-request-dropped",
        V27,
        "A manual tool request of another window is dropped at this window's turn, "
        "without a commit.",
        s26(tool27("manual", OTHER), "pending"),
        (Expect(turn26(), s26(), "none", ("hardReserveDue",)),),
    ),
)


# ---------------------------------------------------------------- reset-control@0.33
# pi-context 0.33.1: a manual close-out always reaches the settle (the model's call during one
# is only acknowledged, and /wipe-memory takes over the model's pending request of its
# window); a tool request remembers only whether it upgraded the budget's close-out of its
# own window.

V33 = "reset-control@0.33"


# 0.27 cases 0.33 decides the same way. Not kept: the three whose tool request 0.33 decides
# otherwise, and the stale manual tool request (0.33's tool requests have no manual source).
_SAME_IN_033 = tuple(
    s.id
    for s in SCENARIOS_027
    if s.id
    not in (
        "manual-wipe-memory-commits-and-stops",
        "tool-request-takes-another-windows-source",
        "manual-close-out-under-model-request-continues",
        "stale-manual-tool-request-dropped",
    )
)

# Each class of case where 0.33 decides something 0.27 did not, and its contrast.
UPSTREAM_033: tuple[Scenario, ...] = (
    Scenario(
        "upstream-model-call-only-acknowledges-manual-close-out",
        V33,
        "During /wipe-memory the model's wipe_memory is a duplicate: the close-out spans its "
        "turn and commits at the settle, which stops the run.",
        s26(),
        (
            Expect(close_out(), s26(close()), "close-out-armed"),
            Expect(close_out(), s26(close()), "already-pending"),
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(tool_request(), s26(close()), "already-pending"),
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),
        ),
    ),
    Scenario(
        "upstream-manual-close-out-outranks-model-request",
        V33,
        "/wipe-memory over the model's pending wipe_memory of the same window turns it into a "
        "manual close-out: the turn no longer commits, the settle commits and stops.",
        s26(tool27("tool")),
        (
            Expect(close_out(), s26(close()), "close-out-armed"),
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),
        ),
    ),
    Scenario(
        "upstream-budget-close-out-keeps-model-request",
        V33,
        "The budget's close-out over the model's pending request of its window is still a "
        "duplicate; the turn commits and continues.",
        s26(tool27("tool"), "spent"),
        (
            Expect(close_out(source="automatic"), s26(tool27("tool"), "spent"), "already-pending"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "upstream-model-call-upgrades-budget-close-out",
        V33,
        "The model's call during the budget's close-out of its window becomes a tool request "
        "with source automatic and commits at turn_end, continuing.",
        s26(close(source="automatic")),
        (
            Expect(tool_request(), s26(tool27("automatic")), "close-out-armed"),
            Expect(tool_request(), s26(tool27("automatic")), "already-pending"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
    Scenario(
        "upstream-model-call-replaces-other-windows-close-out",
        V33,
        "A close-out of another window is not taken over: the model's call in this window is "
        "its own request (source tool) and its commit continues.",
        s26(close(OTHER)),
        (
            Expect(tool_request(), s26(tool27("tool")), "close-out-armed"),
            Expect(turn26(), s26(), "commit-boundary", ()),
        ),
    ),
)

SCENARIOS_033: tuple[Scenario, ...] = (
    tuple(replace(s, spec=V33) for s in SCENARIOS_027 if s.id in _SAME_IN_033) + UPSTREAM_033
)

# ---------------------------------------------------------------- reset-control@0.34
# pi-context 0.34.0: the user's stop intent survives the hard-reserve safety reset across
# windows (the stop-pending phase and the plain stop effect); a manual close-out survives an
# overflow turn and, behind a pending chain, commits and stops instead of recovering.

V34 = "reset-control@0.34"
FRESH = OTHER  # the window the safety reset opened


def stop_pending(window: str = W) -> Wire:
    return {"phase": "stop-pending", "windowId": window}


# 0.33 cases 0.34 decides otherwise: the hard reserve over a manual close-out now keeps a
# stop intent, and a manual close-out now survives an overflow turn.
_CHANGED_IN_034 = (
    "hard-reserve-over-manual-close-out-continues",
    "upstream-unrecoverable-chain-drops-manual-close-out",
    "upstream-queued-chain-failed-run-drops-request",
    "upstream-spent-chain-drops-request-without-commit",
    "upstream-overflow-probes-queue-before-switch",
)

# Each class of case where 0.34 decides something 0.33 did not.
UPSTREAM_034: tuple[Scenario, ...] = (
    Scenario(
        "upstream-manual-stop-survives-safety-reset",
        V34,
        "The hard reserve commits the user's close-out and stops, leaving a stop intent; in the "
        "fresh window requests are duplicates, queued input runs, turns commit nothing (and "
        "read nothing), and the settle only stops.",
        s26(close()),
        (
            Expect(
                turn26(hardReserveDue=True),
                s26(stop_pending()),
                "commit-boundary-stop",
                ("hardReserveDue",),
            ),
            Expect(tool_request(FRESH), s26(stop_pending()), "already-pending"),
            Expect(close_out(FRESH, "automatic"), s26(stop_pending()), "already-pending"),
            Expect(settle26(FRESH, queued=True), s26(stop_pending()), "none", ("queued",)),
            Expect(turn26(FRESH, hardReserveDue=True), s26(stop_pending()), "none", ()),
            Expect(settle26(FRESH), s26(), "stop", ("queued",)),
        ),
    ),
    Scenario(
        "upstream-stop-after-safety-ignores-a-failed-run",
        V34,
        "Once the safety boundary committed, even a run that stopped on an error settles with "
        "the plain stop, never a second wipe.",
        s26(stop_pending()),
        (Expect(settle26(FRESH, failed=True), s26(), "stop", ("queued",)),),
    ),
    Scenario(
        "upstream-uncommitted-safety-reset-retried",
        V34,
        "Still in the window of the request (the safety boundary's construction failed), the "
        "settle retries the commit and stops.",
        s26(stop_pending()),
        (Expect(settle26(), s26(), "commit-boundary-stop", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-uncommitted-safety-reset-dropped-when-disabled",
        V34,
        "Still in the window of the request, a disabled run drops the stop intent without a "
        "commit.",
        s26(stop_pending()),
        (Expect(settle26(enabled=False), s26(), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-errored-retry-reads-no-switch",
        V34,
        "An errored run in the request's window drops the stop intent; the switch is not read.",
        s26(stop_pending()),
        (Expect(settle26(failed=True), s26(), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-stop-intent-survives-every-turn",
        V34,
        "An overflow (recoverable or queued), an error, disabled mode or a plain completed "
        "turn leaves the stop intent as it is, and reads nothing.",
        s26(stop_pending()),
        (
            Expect(turn26(FRESH, overflow=True, failed=True), s26(stop_pending()), "none", ()),
            Expect(turn26(FRESH, overflow=True, queued=True), s26(stop_pending()), "none", ()),
            Expect(turn26(FRESH, failed=True), s26(stop_pending()), "none", ()),
            Expect(turn26(FRESH, enabled=False), s26(stop_pending()), "none", ()),
            Expect(turn26(FRESH), s26(stop_pending()), "none", ()),
        ),
    ),
    Scenario(
        "upstream-abort-clears-stop-intent",
        V34,
        "An aborted turn clears the stop intent like every other phase.",
        s26(stop_pending()),
        (Expect(turn26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "upstream-manual-overflow-stops-instead-of-recovering",
        V34,
        "An overflow keeps the user's close-out armed and arms the chain without reading the "
        "queue or the policy; the settle then commits and stops instead of spending the "
        "chain's recovery.",
        s26(close()),
        (
            Expect(turn26(overflow=True), s26(close(), "pending"), "none", ()),
            Expect(settle26(), s26(), "commit-boundary-stop", ("queued", "enabled")),
        ),
    ),
    Scenario(
        "upstream-manual-overflow-in-spent-chain-stops",
        V34,
        "In a chain whose recovery is spent, an overflow still keeps the user's close-out, and "
        "the settle commits and stops (0.33 closed the chain without a commit).",
        s26(close(), "spent"),
        (
            Expect(turn26(overflow=True), s26(close(), "pending-spent"), "none", ()),
            Expect(settle26(), s26(), "commit-boundary-stop", ("queued", "enabled")),
        ),
    ),
    Scenario(
        "upstream-manual-overflow-keeps-stop-intent",
        V34,
        "Whatever the queue and the policy say, an overflow keeps the user's close-out armed; "
        "queued work runs first, and the settle commits and stops even after an error.",
        s26(close()),
        (
            Expect(
                turn26(overflow=True, failed=True, queued=True, automaticResetEnabled=False),
                s26(close(), "pending"),
                "none",
                (),
            ),
            Expect(
                settle26(failed=True, queued=True, automaticResetEnabled=False),
                s26(close(), "pending"),
                "none",
                ("queued",),
            ),
            Expect(
                settle26(failed=True, automaticResetEnabled=False),
                s26(),
                "commit-boundary-stop",
                ("queued", "enabled"),
            ),
        ),
    ),
    Scenario(
        "upstream-queued-success-keeps-manual-close-out",
        V34,
        "A successful queued turn after a manual overflow clears only the chain; the settle "
        "then commits the close-out and stops.",
        s26(close(), "pending"),
        (
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(settle26(), s26(), "commit-boundary-stop", SETTLE_NO_CHAIN_LAZY),
        ),
    ),
    Scenario(
        "upstream-manual-overflow-disabled-disarms-only-the-chain",
        V34,
        "A disabled overflow turn disarms the chain but keeps the user's close-out; nothing "
        "lazy is read.",
        s26(close(), "pending"),
        (Expect(turn26(overflow=True, enabled=False), s26(close()), "none", ()),),
    ),
    Scenario(
        "upstream-manual-close-out-behind-chain-stops-with-automatic-resets-off",
        V34,
        "Behind a pending chain, the user's close-out commits and stops even with automatic "
        "resets off.",
        s26(close(), "spent"),
        (
            Expect(
                turn26(overflow=True, automaticResetEnabled=False),
                s26(close(), "pending-spent"),
                "none",
                (),
            ),
            Expect(
                settle26(automaticResetEnabled=False),
                s26(),
                "commit-boundary-stop",
                ("queued", "enabled"),
            ),
        ),
    ),
    Scenario(
        "upstream-budget-close-out-still-dropped-by-overflow",
        V34,
        "The budget's close-out is still dropped by an overflow turn, whose recovery is itself "
        "a reset.",
        s26(close(source="automatic")),
        (
            Expect(turn26(overflow=True), s26(None, "pending"), "none", OVERFLOW_LAZY),
            Expect(settle26(), s26(None, "spent"), "recover-overflow", SETTLE_LAZY),
        ),
    ),
    Scenario(
        "upstream-hard-reserve-over-model-request-continues",
        V34,
        "The model's own request still commits at its turn and continues, hard reserve or not.",
        s26(tool27("tool")),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ()),),
    ),
)

# What 0.34 keeps from 0.33 where the dropped scenarios above pinned it, and what the
# published reducer does off the reachable path.
KEPT_034: tuple[Scenario, ...] = (
    Scenario(
        "disabled-settle-keeps-manual-close-out-behind-chain",
        V34,
        "Behind a pending chain, a disabled settle disarms the chain (or closes a spent one) "
        "and keeps the user's close-out as it is.",
        s26(close(), "pending"),
        (
            Expect(settle26(enabled=False), s26(close()), "none", ("queued", "enabled")),
            Expect(turn26(overflow=True), s26(close(), "pending"), "none", ()),
            Expect(turn26(), s26(close()), "none", ("hardReserveDue",)),
            Expect(turn26(overflow=True), s26(close(), "pending"), "none", ()),
            Expect(settle26(), s26(), "commit-boundary-stop", ("queued", "enabled")),
        ),
    ),
    Scenario(
        "disabled-settle-closes-spent-chain-keeping-manual-close-out",
        V34,
        "In a spent chain a disabled settle leaves the chain spent and the close-out armed.",
        s26(close(), "pending-spent"),
        (Expect(settle26(enabled=False), s26(close(), "spent"), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-stop-intent-meeting-a-chain",
        V34,
        "No run holds a stop intent next to an armed chain (the hard reserve clears the chain "
        "as it records the intent), but a host that restores such a state gets what the "
        "published reducer does: requests and a queued settle leave the chain, a turn or any "
        "other settle clears it.",
        s26(stop_pending(), "pending"),
        (
            Expect(close_out(FRESH), s26(stop_pending(), "pending"), "already-pending"),
            Expect(tool_request(FRESH), s26(stop_pending(), "pending"), "already-pending"),
            Expect(
                settle26(FRESH, queued=True), s26(stop_pending(), "pending"), "none", ("queued",)
            ),
            Expect(turn26(FRESH, overflow=True), s26(stop_pending()), "none", ()),
        ),
    ),
    Scenario(
        "upstream-stop-after-safety-clears-a-chain",
        V34,
        "The plain stop after the safety reset also ends an armed chain.",
        s26(stop_pending(), "pending-spent"),
        (Expect(settle26(FRESH), s26(), "stop", ("queued",)),),
    ),
    Scenario(
        "upstream-retried-stop-clears-a-chain",
        V34,
        "The retried commit of a stop intent ends an armed chain.",
        s26(stop_pending(), "pending"),
        (Expect(settle26(), s26(), "commit-boundary-stop", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-dropped-stop-clears-a-chain",
        V34,
        "The dropped retry of a stop intent ends an armed chain.",
        s26(stop_pending(), "pending"),
        (Expect(settle26(enabled=False), s26(), "none", ("queued", "enabled")),),
    ),
)

SCENARIOS_034: tuple[Scenario, ...] = (
    tuple(replace(s, spec=V34) for s in SCENARIOS_033 if s.id not in _CHANGED_IN_034)
    + UPSTREAM_034
    + KEPT_034
)


def _other_families() -> dict[str, tuple[Scenario, ...]]:
    # Other spec families keep their scenarios in their own modules (imported here, after
    # Scenario and Expect exist, so they can build on them).
    from pi_context.statemachine.handoff_scenarios import SCENARIOS_HANDOFF_06, V_HANDOFF

    return {V_HANDOFF: SCENARIOS_HANDOFF_06}


SCENARIOS: dict[str, tuple[Scenario, ...]] = {
    V25: SCENARIOS_025 + UPSTREAM_025,
    V26: SCENARIOS_026 + UPSTREAM_026,
    VP: PROPOSAL_SCENARIOS,
    V27: SCENARIOS_027,
    V33: SCENARIOS_033,
    V34: SCENARIOS_034,
    **_other_families(),
}
