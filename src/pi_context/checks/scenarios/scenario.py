"""What a literal scenario is: a start state, wire events and the exact outcome of each.

A scenario is written independently of the spec files: it starts from an explicit state,
feeds wire events and states the exact next state, effect and (where the seeds pin it) the
lazy facts consulted. ``run_scenario`` feeds one to any stepper and lists the differences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Wire = dict[str, Any]
Stepper = Callable[[Wire, Wire], tuple[Wire, str, tuple[str, ...] | None]]


def facts_event(kind: str, *parts: Mapping[str, Any], **overrides: bool) -> Wire:
    """A fact-carrying event: the parts' facts in order, then a case's overrides."""
    facts: dict[str, Any] = {}
    for part in parts:
        facts.update(part)
    facts.update(overrides)
    return {"type": kind, "facts": facts}


@dataclass(frozen=True)
class Expect:
    event: Wire
    state: Wire
    effect: str
    consulted: tuple[str, ...] | None = None  # None: the seeds do not pin the reads


@dataclass(frozen=True)
class Scenario:
    id: str
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
