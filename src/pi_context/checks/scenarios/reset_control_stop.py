"""The cases of the generations from 0.34 on (the run-scoped stop intent, the manual close-out
across an overflow, the extension's provider-context decision), shared by ``reset-control@0.34``
and its successors: ``HOOK`` (the provider-context hook), ``OWN`` (what 0.34 first decides) and
``KEPT`` (0.33's cases as 0.34 keeps them), ``SINCE_A508F68`` (the settle that drops the
budget's close-out, from a508f68 on), with the helpers that write them."""

from __future__ import annotations

from pi_context.checks.scenarios.reset_control import (
    ARM_MANUAL,
    OTHER,
    OVERFLOW_LAZY,
    SETTLE_COMMITS_STOP,
    SETTLE_LAZY,
    TURN_KEEPS_MANUAL,
    W,
    close,
    close_out,
    s26,
    settle26,
    tool27,
    tool_request,
    turn26,
)
from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire, facts_event

FRESH = OTHER  # the window the safety reset opened


def stop_pending(window: str = W) -> Wire:
    return {"phase": "stop-pending", "windowId": window}


# The hard reserve commits the user's close-out and stops, leaving a stop intent for the fresh
# window; there the settle only stops (the plain ``stop``), having read the queue.
SAFETY_STOP = Expect(
    turn26(hardReserveDue=True), s26(stop_pending()), "commit-boundary-stop", ("hardReserveDue",)
)
SETTLE_ONLY_STOPS = Expect(settle26(FRESH), s26(), "stop", ("queued",))


def provider(window: str = FRESH, **overrides: bool) -> Wire:
    """The provider-context hook in ``window``, by default after a committed boundary with
    nothing queued and no user message since."""
    return facts_event(
        "provider_context",
        {"windowId": window, "queued": False, "committed": True, "userSinceBoundary": False},
        **overrides,
    )


def overflow_keeps_manual(chain: str = "pending", **facts: bool) -> Expect:
    """An overflow turn keeps the user's close-out armed next to the chain, reading nothing."""
    return Expect(turn26(W, overflow=True, **facts), s26(close(), chain), "none", ())


def settle_stops_behind_chain(**facts: bool) -> Expect:
    """The settle commits the user's close-out behind a chain (or retries the commit of a stop
    intent) and stops, having read the queue and the switch."""
    return Expect(settle26(W, **facts), s26(), "commit-boundary-stop", ("queued", "enabled"))


PROVIDER_LAZY = ("queued", "committed", "userSinceBoundary")

# The extension's decision at the provider-context hook (0.34's provider_context): Pi runs the
# tool batch's follow-up turn even after a boundary that asked to stop; it is cancelled only
# when it is that empty follow-up.
HOOK: tuple[Scenario, ...] = (
    Scenario(
        "empty-follow-up-after-committed-stop-cancelled",
        "The hard reserve commits the user's close-out and stops; the follow-up request Pi "
        "still builds in the fresh window is cancelled (the state stays, the run is aborted), "
        "and the abort that follows clears the stop intent.",
        s26(close()),
        (
            SAFETY_STOP,
            Expect(provider(), s26(stop_pending()), "cancel-follow-up", PROVIDER_LAZY),
            Expect({"type": "abort"}, s26(), "none"),
        ),
    ),
    Scenario(
        "queued-input-after-stop-reaches-the-provider",
        "Real queued input after the stop is sent and answered; only then does the settle stop.",
        s26(stop_pending()),
        (
            Expect(provider(queued=True), s26(stop_pending()), "none", ("queued",)),
            Expect(turn26(FRESH), s26(stop_pending()), "none", ()),
            SETTLE_ONLY_STOPS,
        ),
    ),
    Scenario(
        "request-in-the-stop-window-reaches-the-provider",
        "Still in the window of the stop intent (its boundary never committed), a request is "
        "sent; the marker is not consulted further.",
        s26(stop_pending()),
        (Expect(provider(W), s26(stop_pending()), "none", ("queued",)),),
    ),
    Scenario(
        "uncommitted-boundary-follow-up-reaches-the-provider",
        "A fresh window whose boundary is not committed (its boot not written) does not cancel.",
        s26(stop_pending()),
        (Expect(provider(committed=False), s26(stop_pending()), "none", ("queued", "committed")),),
    ),
    Scenario(
        "user-message-after-boundary-reaches-the-provider",
        "A user message after the boundary is real input: its request is sent.",
        s26(stop_pending()),
        (Expect(provider(userSinceBoundary=True), s26(stop_pending()), "none", PROVIDER_LAZY),),
    ),
    Scenario(
        "requests-without-stop-intent-read-nothing",
        "Without a stop intent every request is sent and nothing lazy is read.",
        s26(close()),
        (
            Expect(provider(), s26(close()), "none", ()),
            Expect(provider(W), s26(close()), "none", ()),
            Expect(provider(committed=False, queued=True), s26(close()), "none", ()),
        ),
    ),
)


# Each class of case where 0.34 decides something 0.33 did not.
OWN: tuple[Scenario, ...] = (
    Scenario(
        "upstream-manual-stop-survives-safety-reset",
        "The hard reserve commits the user's close-out and stops, leaving a stop intent; in the "
        "fresh window requests are duplicates, queued input runs, turns commit nothing (and "
        "read nothing), and the settle only stops.",
        s26(close()),
        (
            SAFETY_STOP,
            Expect(tool_request(FRESH), s26(stop_pending()), "already-pending"),
            Expect(close_out(FRESH, "automatic"), s26(stop_pending()), "already-pending"),
            Expect(settle26(FRESH, queued=True), s26(stop_pending()), "none", ("queued",)),
            Expect(turn26(FRESH, hardReserveDue=True), s26(stop_pending()), "none", ()),
            SETTLE_ONLY_STOPS,
        ),
    ),
    Scenario(
        "upstream-stop-after-safety-ignores-a-failed-run",
        "Once the safety boundary committed, even a run that stopped on an error settles with "
        "the plain stop, never a second wipe.",
        s26(stop_pending()),
        (Expect(settle26(FRESH, failed=True), s26(), "stop", ("queued",)),),
    ),
    Scenario(
        "upstream-uncommitted-safety-reset-retried",
        "Still in the window of the request (the safety boundary's construction failed), the "
        "settle retries the commit and stops.",
        s26(stop_pending()),
        (settle_stops_behind_chain(),),
    ),
    Scenario(
        "upstream-uncommitted-safety-reset-dropped-when-disabled",
        "Still in the window of the request, a disabled run drops the stop intent without a "
        "commit.",
        s26(stop_pending()),
        (Expect(settle26(enabled=False), s26(), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-errored-retry-reads-no-switch",
        "An errored run in the request's window drops the stop intent; the switch is not read.",
        s26(stop_pending()),
        (Expect(settle26(failed=True), s26(), "none", ("queued",)),),
    ),
    Scenario(
        "upstream-stop-intent-survives-every-turn",
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
        "An aborted turn clears the stop intent like every other phase.",
        s26(stop_pending()),
        (Expect(turn26(aborted=True), s26(), "none", ()),),
    ),
    Scenario(
        "upstream-manual-overflow-stops-instead-of-recovering",
        "An overflow keeps the user's close-out armed and arms the chain without reading the "
        "queue or the policy; the settle then commits and stops instead of spending the "
        "chain's recovery.",
        s26(close()),
        (
            overflow_keeps_manual(),
            settle_stops_behind_chain(),
        ),
    ),
    Scenario(
        "upstream-manual-overflow-in-spent-chain-stops",
        "In a chain whose recovery is spent, an overflow still keeps the user's close-out, and "
        "the settle commits and stops (0.33 closed the chain without a commit).",
        s26(close(), "spent"),
        (
            overflow_keeps_manual("pending-spent"),
            settle_stops_behind_chain(),
        ),
    ),
    Scenario(
        "upstream-manual-overflow-keeps-stop-intent",
        "Whatever the queue and the policy say, an overflow keeps the user's close-out armed; "
        "queued work runs first, and the settle commits and stops even after an error.",
        s26(close()),
        (
            overflow_keeps_manual(failed=True, queued=True, automaticResetEnabled=False),
            Expect(
                settle26(failed=True, queued=True, automaticResetEnabled=False),
                s26(close(), "pending"),
                "none",
                ("queued",),
            ),
            settle_stops_behind_chain(failed=True, automaticResetEnabled=False),
        ),
    ),
    Scenario(
        "upstream-queued-success-keeps-manual-close-out",
        "A successful queued turn after a manual overflow clears only the chain; the settle "
        "then commits the close-out and stops.",
        s26(close(), "pending"),
        (TURN_KEEPS_MANUAL, SETTLE_COMMITS_STOP),
    ),
    Scenario(
        "upstream-manual-overflow-disabled-disarms-only-the-chain",
        "A disabled overflow turn disarms the chain but keeps the user's close-out; nothing "
        "lazy is read.",
        s26(close(), "pending"),
        (Expect(turn26(overflow=True, enabled=False), s26(close()), "none", ()),),
    ),
    Scenario(
        "upstream-manual-close-out-behind-chain-stops-with-automatic-resets-off",
        "Behind a pending chain, the user's close-out commits and stops even with automatic "
        "resets off.",
        s26(close(), "spent"),
        (
            overflow_keeps_manual("pending-spent", automaticResetEnabled=False),
            settle_stops_behind_chain(automaticResetEnabled=False),
        ),
    ),
    Scenario(
        "upstream-budget-close-out-still-dropped-by-overflow",
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
        "The model's own request still commits at its turn and continues, hard reserve or not.",
        s26(tool27("tool")),
        (Expect(turn26(hardReserveDue=True), s26(), "commit-boundary", ()),),
    ),
)

KEPT: tuple[Scenario, ...] = (
    Scenario(
        "disabled-settle-keeps-manual-close-out-behind-chain",
        "Behind a pending chain, a disabled settle disarms the chain (or closes a spent one) "
        "and keeps the user's close-out as it is.",
        s26(close(), "pending"),
        (
            Expect(settle26(enabled=False), s26(close()), "none", ("queued", "enabled")),
            overflow_keeps_manual(),
            TURN_KEEPS_MANUAL,
            overflow_keeps_manual(),
            settle_stops_behind_chain(),
        ),
    ),
    Scenario(
        "disabled-settle-closes-spent-chain-keeping-manual-close-out",
        "In a spent chain a disabled settle leaves the chain spent and the close-out armed.",
        s26(close(), "pending-spent"),
        (Expect(settle26(enabled=False), s26(close(), "spent"), "none", ("queued", "enabled")),),
    ),
    Scenario(
        "upstream-stop-intent-meeting-a-chain",
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
        "The plain stop after the safety reset also ends an armed chain.",
        s26(stop_pending(), "pending-spent"),
        (SETTLE_ONLY_STOPS,),
    ),
    Scenario(
        "upstream-retried-stop-clears-a-chain",
        "The retried commit of a stop intent ends an armed chain.",
        s26(stop_pending(), "pending"),
        (settle_stops_behind_chain(),),
    ),
    Scenario(
        "upstream-dropped-stop-clears-a-chain",
        "The dropped retry of a stop intent ends an armed chain.",
        s26(stop_pending(), "pending"),
        (Expect(settle26(enabled=False), s26(), "none", ("queued", "enabled")),),
    ),
)


# ---------------------------------------------------------------- from a508f68 on

# What 0.34 decided and a508f68 (and its successors) no longer do: the budget's close-out
# committing at the settle.
CHANGED_IN_A508F68 = frozenset({"upstream-fallback-forgets-spent-chain"})

BUDGET = close(source="automatic")
DROPPED = ("enabled",)  # the switch is read; the queue and the policy are not

SINCE_A508F68: tuple[Scenario, ...] = (
    Scenario(
        "upstream-fallback-is-normal-stop-only",
        "The user's close-out commits at the settle and stops; the budget's close-out the model "
        "ignored is dropped without a wipe, with automatic resets on or off.",
        s26(BUDGET),
        (
            Expect(settle26(), s26(), "none", DROPPED),
            Expect(close_out(source="automatic"), s26(BUDGET), "close-out-armed"),
            Expect(settle26(automaticResetEnabled=False), s26(), "none", DROPPED),
            ARM_MANUAL,
            SETTLE_COMMITS_STOP,
        ),
    ),
    Scenario(
        "budget-close-out-dropped-even-with-queued-work",
        "Queued work no longer keeps the budget's close-out for a later settle: it is dropped "
        "and the queue is not probed.",
        s26(BUDGET),
        (Expect(settle26(queued=True), s26(), "none", DROPPED),),
    ),
    Scenario(
        "dropped-budget-close-out-keeps-a-spent-chain",
        "Dropping the budget's close-out starts no fresh window, so a spent chain stays spent "
        "(0.34's committed fallback reset it to idle).",
        s26(BUDGET, "spent"),
        (Expect(settle26(), s26(None, "spent"), "none", DROPPED),),
    ),
    Scenario(
        "disabled-settle-drops-the-budget-close-out-reading-the-switch",
        "With pi-context off the budget's close-out is dropped as before, reading only the switch.",
        s26(BUDGET),
        (Expect(settle26(enabled=False), s26(), "none", DROPPED),),
    ),
)
