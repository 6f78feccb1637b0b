"""The handoff lifecycle pi-context-management 0.6 describes, as literal scenarios for
``handoff@0.6`` — written from the seed's handoff.ts, independently of the spec file.

The happy path is preparing → generating → quality → saving → switching → validating →
continuing → done. A failure before the switch stops with the source open (at most a verified
offer written); a failed or cancelled setup returns to the source; once the destination is
verified, only the continuation can fail and the host stays there. Every stage honours a
cancel, ignores reports meant for another stage, and refuses a second start.
"""

from __future__ import annotations

from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire

SPEC_ID = "handoff@0.6"
RUNNING = ("preparing", "generating", "quality", "saving", "switching", "validating", "continuing")
TERMINAL = ("idle", "done", "failed", "cancelled")


def st(stage: str = "idle", offer: str = "none", active: str = "source") -> Wire:
    """A state on the wire; only the end stages record the offer and the open session (the
    running stages imply them)."""
    if stage in ("failed", "cancelled"):
        return {"handoff": {"stage": stage, "offer": offer, "active": active}}
    return {"handoff": {"stage": stage}}


def ev(kind: str, **facts: bool) -> Wire:
    return {"type": kind, "facts": facts} if facts else {"type": kind}


START = ev("start", available=True)
# The successful report that ends each stage, and the state and effect it leads to.
HAPPY: tuple[tuple[str, Wire, Wire, str], ...] = (
    ("preparing", ev("source_read", ok=True), st("generating"), "generate-notes"),
    ("generating", ev("notes_generated", ok=True), st("quality"), "check-quality"),
    ("quality", ev("quality_checked", ok=True), st("saving"), "save-offer"),
    (
        "saving",
        ev("offer_saved", written=True, verified=True),
        st("switching", "verified"),
        "create-destination",
    ),
    (
        "switching",
        ev("destination_created", created=True),
        st("validating", "verified", "destination"),
        "verify-destination",
    ),
    (
        "validating",
        ev("destination_verified", ok=True),
        st("continuing", "verified", "destination"),
        "send-continuation",
    ),
    ("continuing", ev("continued", ok=True), st("done", "verified", "destination"), "none"),
)
# The failing report of each stage, and where it leaves the handoff.
FAILS: dict[str, tuple[Wire, Wire, str]] = {
    "preparing": (ev("source_read", ok=False), st("failed"), "fail"),
    "generating": (ev("notes_generated", ok=False), st("failed"), "fail"),
    "quality": (ev("quality_checked", ok=False), st("failed"), "fail"),
    "saving": (ev("offer_saved", written=False, verified=False), st("failed"), "fail"),
    "switching": (
        ev("destination_created", created=False),
        st("failed", "verified"),
        "abandon-destination",
    ),
    "validating": (
        ev("destination_verified", ok=False),
        st("failed", "verified"),
        "return-to-source",
    ),
    "continuing": (
        ev("continued", ok=False),
        st("failed", "verified", "destination"),
        "fail-continuation",
    ),
}
CANCELS: dict[str, tuple[Wire, str]] = {
    "preparing": (st("cancelled"), "none"),
    "generating": (st("cancelled"), "none"),
    "quality": (st("cancelled"), "none"),
    "saving": (st("cancelled"), "none"),
    "switching": (st("cancelled", "verified"), "abandon-destination"),
    "validating": (st("cancelled", "verified"), "return-to-source"),
    "continuing": (st("cancelled", "verified", "destination"), "none"),
}
REPORTS = tuple(e for _, e, _, _ in HAPPY) + tuple(f[0] for f in FAILS.values())


def _path_to(stage: str) -> tuple[Wire, tuple[Expect, ...]]:
    steps = [Expect(START, st("preparing"), "read-source")]
    for name, event, state, effect in HAPPY:
        if name == stage:
            return steps[-1].state, tuple(steps)
        steps.append(Expect(event, state, effect))
    raise ValueError(stage)


def _scenarios() -> tuple[Scenario, ...]:
    out: list[Scenario] = [
        Scenario(
            "handoff-completes",
            "Every stage in order; the host ends in the verified destination.",
            st(),
            (
                Expect(START, st("preparing"), "read-source"),
                *(Expect(e, s, f) for _, e, s, f in HAPPY),
            ),
        ),
        Scenario(
            "unavailable-without-saved-session",
            "An unsaved session or no active model fails at once (handoff_unavailable).",
            st(),
            (Expect(ev("start", available=False), st("failed"), "fail"),),
        ),
        Scenario(
            "unverified-offer-stops-before-switch",
            "An offer written but not proven on disk stops the handoff before any switch.",
            st("saving"),
            (
                Expect(
                    ev("offer_saved", written=True, verified=False),
                    st("failed", "unverified"),
                    "fail",
                ),
            ),
        ),
    ]
    for stage in RUNNING:
        here, prefix = _path_to(stage)
        event, failed, effect = FAILS[stage]
        out.append(
            Scenario(
                f"fails-at-{stage}",
                f"A failure while {stage} ends the handoff as the seed describes.",
                st(),
                (
                    *prefix,
                    Expect(event, failed, effect),
                    Expect(START, st("preparing"), "read-source"),
                ),
            )
        )
        cancelled, cancel_effect = CANCELS[stage]
        out.append(
            Scenario(
                f"cancelled-at-{stage}",
                f"A cancel while {stage} is honoured; setup cancels return to the source.",
                st(),
                (*prefix, Expect(ev("cancel"), cancelled, cancel_effect)),
            )
        )
        stray = [r for r in REPORTS if _owner(r) != stage]
        out.append(
            Scenario(
                f"ignores-others-at-{stage}",
                f"While {stage}, reports for other stages and a second start change nothing.",
                here,
                (Expect(START, here, "busy"), *(Expect(r, here, "none") for r in stray)),
            )
        )
    for terminal in TERMINAL:
        state = st(
            terminal,
            "verified" if terminal == "done" else "none",
            "destination" if terminal == "done" else "source",
        )
        if terminal == "idle":
            state = st()
        out.append(
            Scenario(
                f"inert-when-{terminal}",
                "After the end only a new start does anything; it starts from the open session.",
                state,
                (
                    *(Expect(r, state, "none") for r in REPORTS),
                    Expect(ev("cancel"), state, "none"),
                    Expect(START, st("preparing"), "read-source"),
                ),
            )
        )
    return tuple(out)


def _owner(report: Wire) -> str:
    for name, event, _, _ in HAPPY:
        if event["type"] == report["type"]:
            return name
    raise ValueError(report)


SCENARIOS: tuple[Scenario, ...] = _scenarios()
