"""The automatic handoff lifecycle as literal scenarios for ``handoff@0.6-auto`` — written from
the seed's handoff.ts and the automatic rules docs/handoff.md documents, independently of the
spec file.

A manual handoff is 0.6's (every ending carries its result code). An automatic one is started
by pressure while armed (never while off, paused or cooling down, never beyond the attempt
limit); it takes an attempt, runs the same stages with the switch guarded by assertReady, and
starts the cooldown only once its destination is verified. Before that, every failure and
every cancel returns to the source and records the attempt there; a cancel also pauses. A
failed continuation pauses it in the destination (continuation_failed). Replays set the state
from the record; the user's commands change it only while no handoff runs.
"""

from __future__ import annotations

from pi_context.checks.scenarios.scenario import Expect, Scenario, Wire

SPEC_ID = "handoff@0.6-auto"
RUNNING = ("preparing", "generating", "quality", "saving", "switching", "validating", "continuing")
BEFORE_VERIFIED = RUNNING[:-1]
TERMINAL = ("idle", "done", "failed", "cancelled")
STATUSES = ("off", "armed", "cooling", "paused", "exhausted")


def st(
    stage: str = "idle",
    offer: str = "none",
    active: str = "source",
    code: str = "reported",
    *,
    trigger: str = "manual",
    automatic: str = "off",
) -> Wire:
    """A state on the wire; only the end stages record offer, open session and result code."""
    handoff: Wire = {"stage": stage}
    if stage in ("failed", "cancelled"):
        handoff = {"stage": stage, "offer": offer, "active": active, "code": code}
    return {"handoff": handoff, "trigger": trigger, "automatic": automatic}


def ev(kind: str, **facts: bool) -> Wire:
    return {"type": kind, "facts": facts} if facts else {"type": kind}


def pressure(
    due: bool = True, available: bool = True, cooled: bool = True, attempts: bool = True
) -> Wire:
    return ev("pressure", due=due, available=available, cooled=cooled, attemptsLeft=attempts)


def restore(
    enabled: bool = True, paused: bool = False, cooling: bool = False, attempts: bool = True
) -> Wire:
    return ev("restore", enabled=enabled, paused=paused, cooling=cooling, attemptsLeft=attempts)


START = ev("start", available=True)
# Each running stage's report and the facts it sets to its outcome (the host stays ready).
REPORTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "preparing": ("source_read", ("ok",)),
    "generating": ("notes_generated", ("ok",)),
    "quality": ("quality_checked", ("ok",)),
    "saving": ("offer_saved", ("written", "verified")),
    "switching": ("destination_created", ("created",)),
    "validating": ("destination_verified", ("ok",)),
    "continuing": ("continued", ("ok",)),
}


def _report(stage: str, ok: bool) -> Wire:
    kind, facts = REPORTED[stage]
    ready = {"ready": True} if kind == "offer_saved" else {}
    return ev(kind, **dict.fromkeys(facts, ok), **ready)


REPORTS: dict[str, Wire] = {stage: _report(stage, True) for stage in RUNNING}
FAILING: dict[str, Wire] = {stage: _report(stage, False) for stage in RUNNING}
COMMANDS = (ev("enable"), ev("disable"), ev("pause"), ev("resume"))


def _next_stage(stage: str) -> str:
    return RUNNING[RUNNING.index(stage) + 1] if stage != "continuing" else "done"


def _running(stage: str, trigger: str, automatic: str) -> Wire:
    return st(stage, trigger=trigger, automatic=automatic)


def _happy_effect(stage: str, trigger: str) -> str:
    """The effect that follows a successful report at ``stage``."""
    if stage == "switching":
        return "verify-destination-automatic" if trigger == "automatic" else "verify-destination"
    return {
        "preparing": "generate-notes",
        "generating": "check-quality",
        "quality": "save-offer",
        "saving": "create-destination",
        "validating": "send-continuation",
        "continuing": "none",
    }[stage]


def _status_during(stage: str, trigger: str, status: str) -> str:
    """The automatic state while ``stage`` runs: an automatic run is armed until its
    destination is verified, then cooling; a manual run leaves the state alone."""
    if trigger == "automatic":
        return "cooling" if stage in ("continuing", "done") else "armed"
    return status


def _starts(reads: tuple[str, ...] | None = None, **facts: bool) -> Expect:
    """Pressure that starts an automatic handoff (armed, an attempt taken)."""
    started = st("preparing", trigger="automatic", automatic="armed")
    return Expect(pressure(**facts), started, "begin-automatic", reads)


def _exhausts(before: Wire, reads: tuple[str, ...] | None = None) -> Expect:
    """Pressure beyond the attempt limit: the user is told, and only the automatic state of
    the record ``before`` changes."""
    return Expect(
        pressure(attempts=False), before | {"automatic": "exhausted"}, "report-exhausted", reads
    )


def _begin(trigger: str, status: str) -> Expect:
    if trigger == "automatic":
        return _starts()
    return Expect(START, _running("preparing", "manual", status), "read-source")


def _path_to(stage: str, trigger: str, status: str) -> list[Expect]:
    steps = [_begin(trigger, status)]
    for name in RUNNING:
        if name == stage:
            return steps
        after = _next_stage(name)
        steps.append(
            Expect(
                REPORTS[name],
                _running(after, trigger, _status_during(after, trigger, status)),
                _happy_effect(name, trigger),
            )
        )
    raise ValueError(stage)


def _failure(stage: str, trigger: str, status: str) -> tuple[Wire, str]:
    """Where a failing report at ``stage`` leaves the handoff, and the effect."""
    auto = trigger == "automatic"
    if stage == "continuing":
        state = st("failed", "verified", "destination", "continuation_failed", trigger=trigger)
        state["automatic"] = "paused" if auto else status
        return state, "pause-destination" if auto else "fail-continuation"
    if stage in ("switching", "validating"):
        state = st(
            "failed",
            "verified",
            "source",
            "handoff_setup_failed",
            trigger=trigger,
            automatic=status,
        )
        if stage == "switching":
            return state, "abandon-attempt" if auto else "abandon-destination"
        return state, "return-from-attempt" if auto else "return-to-source"
    return st("failed", trigger=trigger, automatic=status), "fail-attempt" if auto else "fail"


def _cancel(stage: str, trigger: str, status: str) -> tuple[Wire, str]:
    auto = trigger == "automatic"
    if stage == "continuing":
        after = "cooling" if auto else status
        state = st("cancelled", "verified", "destination", "aborted", trigger=trigger)
        return state | {"automatic": after}, "none"
    paused = "paused" if auto else status
    if stage == "switching":
        state = st("cancelled", "verified", "source", "switch_cancelled", trigger=trigger)
        return state | {"automatic": paused}, "abandon-attempt" if auto else "abandon-destination"
    if stage == "validating":
        state = st("cancelled", "verified", "source", "aborted", trigger=trigger)
        return state | {"automatic": paused}, "return-from-attempt" if auto else "return-to-source"
    state = st("cancelled", "none", "source", "aborted", trigger=trigger)
    return state | {"automatic": paused}, "fail-attempt" if auto else "none"


def _stage_scenarios(trigger: str, status: str) -> list[Scenario]:
    label = f"{trigger}-{status}" if trigger == "manual" else trigger
    start = st(automatic=status)
    out: list[Scenario] = []
    happy = _path_to("continuing", trigger, status)
    happy.append(
        Expect(
            REPORTS["continuing"],
            st("done", trigger=trigger, automatic=_status_during("done", trigger, status)),
            "none",
        )
    )
    out.append(
        Scenario(
            f"{label}-completes",
            "Every stage in order; the host ends in the verified destination"
            + (" with the cooldown started." if trigger == "automatic" else "."),
            start,
            tuple(happy),
        )
    )
    for stage in RUNNING:
        prefix = _path_to(stage, trigger, status)
        here = prefix[-1].state
        failed, effect = _failure(stage, trigger, status)
        out.append(
            Scenario(
                f"{label}-fails-at-{stage}",
                f"A failure while {stage} ends the handoff with its result code.",
                start,
                (*prefix, Expect(FAILING[stage], failed, effect)),
            )
        )
        cancelled, cancel_effect = _cancel(stage, trigger, status)
        out.append(
            Scenario(
                f"{label}-cancelled-at-{stage}",
                f"A cancel while {stage} is honoured"
                + ("; an automatic handoff pauses." if trigger == "automatic" else "."),
                start,
                (*prefix, Expect(ev("cancel"), cancelled, cancel_effect)),
            )
        )
        others = [r for name, r in {**REPORTS, **FAILING}.items() if name != stage]
        stray = [r for r in others if r["type"] != REPORTS[stage]["type"]]
        out.append(
            Scenario(
                f"{label}-ignores-others-at-{stage}",
                f"While {stage}: other stages' reports, a second start, pressure, replays "
                "and commands change nothing.",
                here,
                (
                    Expect(START, here, "busy"),
                    Expect(pressure(), here, "none"),
                    Expect(restore(enabled=False), here, "none"),
                    Expect(restore(paused=True), here, "none"),
                    *(Expect(c, here, "busy") for c in COMMANDS),
                    *(Expect(r, here, "none") for r in stray),
                ),
            )
        )
    return out


def _offer_saved(
    name: str,
    why: str,
    saving: tuple[str, str, bool, bool],
    outcome: tuple[str, str, str, tuple[str, ...] | None],
) -> Scenario:
    """One report of a written offer while saving: ``saving`` is the trigger, the automatic
    state and whether the offer is verified and the host ready; ``outcome`` the stage and
    offer it leaves, the effect and the reads."""
    trigger, status, verified, ready = saving
    stage, offer, effect, consulted = outcome
    return Scenario(
        name,
        why,
        st("saving", trigger=trigger, automatic=status),
        (
            Expect(
                ev("offer_saved", written=True, verified=verified, ready=ready),
                st(stage, offer, trigger=trigger, automatic=status),
                effect,
                consulted,
            ),
        ),
    )


def _automatic_scenarios() -> list[Scenario]:
    armed = st(automatic="armed")
    out = [
        _offer_saved(*case)
        for case in (
            (
                "not-ready-stops-before-switch",
                "assertReady failing after the verified offer stops an automatic handoff on "
                "the source, the offer kept and the attempt recorded.",
                ("automatic", "armed", True, False),
                ("failed", "verified", "fail-attempt", None),
            ),
            (
                "manual-switch-ignores-ready",
                "A manual handoff is not guarded by assertReady (the seed calls it only with "
                "automatic options).",
                ("manual", "armed", True, False),
                ("switching", "none", "create-destination", ()),
            ),
            (
                "unverified-offer-automatic",
                "An automatic offer written but not proven on disk stops before any switch.",
                ("automatic", "armed", False, True),
                ("failed", "unverified", "fail-attempt", ()),
            ),
            (
                "unverified-offer-manual",
                "A manual offer written but not proven on disk stops before any switch.",
                ("manual", "cooling", False, True),
                ("failed", "unverified", "fail", ()),
            ),
        )
    ]
    out += [
        Scenario(
            "armed-under-pressure-starts",
            "Armed and under pressure with attempts left, an automatic handoff starts.",
            armed,
            (_starts(("attemptsLeft",)),),
        ),
        Scenario(
            "calm-or-unavailable-does-nothing",
            "Below the threshold, or without a saved session and model, nothing starts.",
            armed,
            (
                Expect(pressure(due=False), armed, "none", ()),
                Expect(pressure(available=False), armed, "none", ()),
                Expect(pressure(due=False, attempts=False), armed, "none", ()),
            ),
        ),
        Scenario(
            "off-and-paused-never-start",
            "Switched off or paused, pressure never starts an automatic handoff.",
            st(automatic="off"),
            (
                Expect(pressure(), st(automatic="off"), "none", ()),
                Expect(ev("enable"), armed, "record-automatic"),
                Expect(ev("pause"), st(automatic="paused"), "record-automatic"),
                Expect(pressure(), st(automatic="paused"), "none", ()),
                Expect(pressure(attempts=False), st(automatic="paused"), "none", ()),
                Expect(ev("pause"), st(automatic="paused"), "none"),
                Expect(ev("enable"), st(automatic="paused"), "none"),
                Expect(ev("resume"), armed, "record-resume"),
                Expect(ev("resume"), armed, "none"),
            ),
        ),
        Scenario(
            "cooling-waits-for-the-cooldown",
            "While cooling down nothing starts; once the cooldown passed, pressure starts one.",
            st("done", trigger="automatic", automatic="cooling"),
            (
                Expect(
                    pressure(cooled=False),
                    st("done", trigger="automatic", automatic="cooling"),
                    "none",
                    ("cooled",),
                ),
                _starts(("cooled", "attemptsLeft"), cooled=True),
            ),
        ),
        Scenario(
            "resume-does-not-lift-a-cooldown",
            "Resume clears a pause or an exhausted count, not a cooldown; enable is a no-op.",
            st(automatic="cooling"),
            (
                Expect(ev("resume"), st(automatic="cooling"), "none"),
                Expect(ev("enable"), st(automatic="cooling"), "none"),
                Expect(ev("pause"), st(automatic="paused"), "record-automatic"),
            ),
        ),
        Scenario(
            "attempt-limit",
            "Beyond the attempt limit pressure exhausts automatic handoff once (the user is "
            "told), then stays quiet; attempts freed again start one; resume also frees them.",
            armed,
            (
                _exhausts(armed, ("attemptsLeft",)),
                Expect(
                    pressure(attempts=False), st(automatic="exhausted"), "none", ("attemptsLeft",)
                ),
                _starts(("attemptsLeft",), attempts=True),
            ),
        ),
        Scenario(
            "exhausted-resume-and-pause",
            "An exhausted automatic handoff can be paused, resumed (a fresh count) or "
            "switched off.",
            st(automatic="exhausted"),
            (
                Expect(ev("resume"), armed, "record-resume"),
                _exhausts(armed),
                Expect(ev("pause"), st(automatic="paused"), "record-automatic"),
                Expect(ev("disable"), st(automatic="off"), "record-automatic"),
                Expect(ev("disable"), st(automatic="off"), "none"),
                Expect(ev("resume"), st(automatic="off"), "none"),
                Expect(ev("pause"), st(automatic="off"), "none"),
            ),
        ),
        Scenario(
            "cooling-exhausted-after-cooldown",
            "A cooled-down session at the attempt limit is exhausted, not started.",
            st(automatic="cooling"),
            (_exhausts(st(automatic="cooling"), ("cooled", "attemptsLeft")),),
        ),
    ]
    for end, status in (("done", "cooling"), ("failed", "paused"), ("cancelled", "exhausted")):
        after = st(end, "none", "source", "aborted", trigger="automatic", automatic=status)
        if end == "failed":
            after = st(end, "verified", "destination", "continuation_failed", trigger="automatic")
            after["automatic"] = status
        quiet = [
            pressure(due=False),
            pressure(available=False),
            pressure(cooled=False, attempts=False),
        ]
        if status == "exhausted":
            quiet.append(pressure(attempts=False))
        out.append(
            Scenario(
                f"pressure-after-automatic-{end}",
                "Pressure that starts nothing leaves the last handoff's record (stage, "
                "trigger, automatic state) as it was; a manual start makes the next run manual.",
                after,
                (
                    *(Expect(p, after, "none") for p in quiet),
                    Expect(ev("start", available=False), st("failed", automatic=status), "fail"),
                ),
            )
        )
    done = st("done", trigger="automatic", automatic="cooling")
    out.append(
        Scenario(
            "exhausted-after-automatic-done",
            "Reaching the attempt limit after a completed automatic handoff keeps its record.",
            done,
            (_exhausts(done),),
        )
    )
    manual_end = st("failed", "unverified", "source", "reported", automatic="cooling")
    out.append(
        Scenario(
            "pressure-after-manual-failure",
            "Cooling down, or reaching the attempt limit, leaves the last manual handoff's "
            "record as it was; only the automatic state changes.",
            manual_end,
            (
                Expect(pressure(cooled=False), manual_end, "none", ("cooled",)),
                _exhausts(manual_end, ("cooled", "attemptsLeft")),
            ),
        )
    )
    for status in ("off", "paused"):
        out.append(
            Scenario(
                f"unavailable-pressure-keeps-{status}",
                "Pressure on an unsaved session, or below the threshold, changes nothing.",
                st(automatic=status),
                (
                    Expect(pressure(available=False), st(automatic=status), "none"),
                    Expect(pressure(due=False), st(automatic=status), "none"),
                ),
            )
        )
    for status in STATUSES:
        here = st("failed", "verified", "source", "handoff_setup_failed", automatic=status)
        out.append(
            Scenario(
                f"replay-from-{status}",
                "A replay sets the automatic state from the record: off, paused, cooling, "
                "exhausted, else armed (in that order of precedence); nothing else changes.",
                here,
                (
                    Expect(
                        restore(enabled=False, paused=True, cooling=True),
                        here | {"automatic": "off"},
                        "none",
                    ),
                    Expect(
                        restore(paused=True, cooling=True, attempts=False),
                        here | {"automatic": "paused"},
                        "none",
                    ),
                    Expect(
                        restore(cooling=True, attempts=False),
                        here | {"automatic": "cooling"},
                        "none",
                    ),
                    Expect(restore(attempts=False), here | {"automatic": "exhausted"}, "none"),
                    Expect(restore(), here | {"automatic": "armed"}, "none"),
                ),
            )
        )
        out.append(
            Scenario(
                f"commands-from-{status}",
                "Each command from rest: on arms an off state, off switches anything off, "
                "pause holds an armed, cooling or exhausted one, resume frees a paused or "
                "exhausted one.",
                st(automatic=status),
                tuple(_command_steps(status)),
            )
        )
    for terminal in TERMINAL:
        for status in ("armed", "paused"):
            state = st(terminal, "verified", "destination", "continuation_failed", automatic=status)
            if terminal == "cancelled":
                state = st(terminal, "none", "source", "aborted", automatic=status)
            out.append(
                Scenario(
                    f"inert-when-{terminal}-{status}",
                    "After the end only a start, pressure, a replay or a command does anything.",
                    state,
                    (
                        *(Expect(r, state, "none") for r in (*REPORTS.values(), *FAILING.values())),
                        Expect(ev("cancel"), state, "none"),
                        Expect(
                            ev("start", available=False), st("failed", automatic=status), "fail"
                        ),
                        Expect(START, st("preparing", automatic=status), "read-source"),
                    ),
                )
            )
    return out


def _command_steps(status: str) -> list[Expect]:
    def at(s: str) -> Wire:
        return st(automatic=s)

    steps = {
        "enable": (at("armed"), "record-automatic") if status == "off" else (at(status), "none"),
        "disable": (at("off"), "record-automatic") if status != "off" else (at(status), "none"),
        "pause": (at("paused"), "record-automatic")
        if status in ("armed", "cooling", "exhausted")
        else (at(status), "none"),
        "resume": (at("armed"), "record-resume")
        if status in ("paused", "exhausted")
        else (at(status), "none"),
    }
    # Each command from the same starting state (the scenario restores it in between).
    out: list[Expect] = []
    for name, (state, effect) in steps.items():
        out.append(Expect(ev(name), state, effect))
        out.append(Expect(_back_to(status), at(status), "none"))
    return out


def _back_to(status: str) -> Wire:
    """A replay that restores ``status`` (nothing is running)."""
    return {
        "off": restore(enabled=False),
        "armed": restore(),
        "cooling": restore(cooling=True),
        "paused": restore(paused=True),
        "exhausted": restore(attempts=False),
    }[status]


def _scenarios() -> tuple[Scenario, ...]:
    out: list[Scenario] = []
    for status in STATUSES:
        out += _stage_scenarios("manual", status)
    out += _stage_scenarios("automatic", "armed")
    out += _automatic_scenarios()
    out.append(
        Scenario(
            "unavailable-without-saved-session",
            "An unsaved session or no active model fails at once (handoff_unavailable).",
            st(automatic="cooling"),
            (Expect(ev("start", available=False), st("failed", automatic="cooling"), "fail"),),
        )
    )
    return tuple(out)


SCENARIOS: tuple[Scenario, ...] = _scenarios()
