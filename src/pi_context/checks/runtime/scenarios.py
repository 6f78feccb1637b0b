"""The named host scenarios every runtime-conformance run starts with (so a failure says which),
before the randomly generated runs."""

from __future__ import annotations

from typing import Any

from .harness import Op, Scenario
from .host import AWAIT_POINTS, INTERRUPTIONS
from .machine import RuntimeConformance


def _turn(**given: Any) -> Op:
    values: dict[str, Any] = {
        "band": "low",
        "outcome": "completed",
        "wipes": 0,
        "queued": False,
        "interrupt": None,
        "then_settle": None,
    }
    values.update(given)
    return ("turn", values)


def _settle(queued: bool = False) -> Op:
    return ("settle", {"queued": queued, "interrupt": None})


def _change(change: str, at: int = 0) -> Op:
    return ("lifecycle", {"change": change, "at": at})


_WIPE: Op = ("wipe_command", {})
# with a follow-up prompt (a generation without one takes the plain command)
_WIPE_PROMPT: Op = ("wipe_command", {"prompt": "  follow up "})
_FAIL: Op = ("failing_builder", {})

SCENARIOS: tuple[Scenario, ...] = (
    ("wipe_memory commits, twice", (_turn(wipes=1), _turn(), _WIPE, _turn(wipes=1), _turn())),
    ("a duplicate wipe_memory", (_turn(wipes=2),)),
    ("the hard reserve", (_turn(band="hard"), _turn(band="hard", then_settle=False))),
    ("no hard reserve while automatic resets are off",
     (_change("automatic-off"), _turn(band="hard"), _settle())),
    ("overflow recovery", (_turn(outcome="overflow"), _settle(), _turn(), _settle())),
    ("a spent chain", (_turn(outcome="overflow"), _settle(), _turn(outcome="overflow"), _settle())),
    ("overflow with work queued",
     (_turn(outcome="overflow"), _settle(queued=True), _turn(outcome="overflow"), _settle())),
    ("overflow without automatic resets",
     (_turn(outcome="overflow"), _change("automatic-off"), _settle())),
    ("overflow while off", (_change("off"), _turn(outcome="overflow"), _settle(), _change("on"))),
    ("a silent overflow without automatic resets",
     (_turn(outcome="silent-overflow"), _change("automatic-off"), _settle())),
    ("a silent overflow with work queued", (_turn(outcome="silent-overflow"), _settle(queued=True),
                                            _turn(), _settle())),
    ("a close-out behind a silent overflow",
     (_turn(), _turn(outcome="silent-overflow"), _WIPE, _settle(queued=True),
      _change("automatic-off"), _settle(), _change("automatic-on"), _turn(), _settle())),
    ("the budget's close-out",
     (_turn(band="warning"), _turn(band="warning"), _settle(), _turn(band="warning"), _settle())),
    ("the budget's close-out, queued and without automatic resets",
     (_turn(band="warning"), _turn(band="warning"), _settle(queued=True),
      _change("automatic-off"), _settle())),
    ("/wipe-memory, then a stop", (_turn(), _WIPE, _WIPE, _turn(), _settle())),
    ("/wipe-memory, then wipe_memory", (_turn(), _WIPE, _turn(wipes=1), _settle())),
    ("/wipe-memory under the hard reserve, then the empty follow-up",
     (_turn(), _WIPE, _turn(band="hard"), _turn(), _settle())),
    ("/wipe-memory under the hard reserve, then queued input and the settle",
     (_turn(), _WIPE, _turn(band="hard"), _turn(queued=True, wipes=1), _WIPE,
      _settle(queued=True), _turn(), _settle())),
    ("/wipe-memory under the hard reserve whose boundary fails, then the settle",
     (_turn(), _WIPE, _FAIL, _turn(band="hard"), _settle())),
    ("/wipe-memory under the hard reserve whose boundary fails, then an error",
     (_turn(), _WIPE, _FAIL, _turn(band="hard"), _turn(queued=True, outcome="error"), _settle())),
    ("/wipe-memory, then an overflow turn and the settle",
     (_turn(), _WIPE, _turn(outcome="overflow"), _settle())),
    ("wipe_memory during the budget's close-out",
     (_turn(band="warning"), _turn(band="warning", wipes=1), _settle())),
    ("/wipe-memory over the budget's close-out",
     (_turn(band="warning"), _turn(band="warning"), _WIPE, _turn(), _settle())),
    ("/clear-memory with a follow-up prompt, then the settle", (_turn(), _WIPE_PROMPT, _settle())),
    ("/clear-memory with a follow-up prompt under the hard reserve",
     (_turn(), _WIPE_PROMPT, _turn(band="hard"), _settle())),
    ("/clear-memory with a follow-up prompt behind an overflow",
     (_turn(), _WIPE_PROMPT, _turn(outcome="overflow"), _settle())),
    ("/clear-memory with a follow-up prompt over the budget's close-out",
     (_turn(band="warning"), _turn(band="warning"), _WIPE_PROMPT, _turn(), _settle())),
    ("/clear-memory with a follow-up prompt whose boundary fails",
     (_turn(), _WIPE_PROMPT, _FAIL, _settle())),
    ("/wipe-memory after an error, then the settle",
     (_turn(outcome="error", then_settle=False), _WIPE, _settle())),
    ("/wipe-memory while off, then on", (_turn(), _change("off"), _WIPE, _turn(wipes=1),
                                         _change("on"), _WIPE)),
    ("an error and an aborted turn", (_turn(outcome="error"), _settle(), _turn(outcome="aborted"),
                                      _settle(), _turn(wipes=1, outcome="aborted"), _settle())),
    ("an abort between turns", (_turn(wipes=1, then_settle=False), _change("abort"),
                                _turn(outcome="overflow"), _change("abort"), _settle())),
    *(
        (f"{what} during a boundary build (await point {point})",
         (_turn(wipes=1, interrupt=(what, point)), _turn(band="hard", interrupt=(what, point)),
          _turn(outcome="overflow"), ("settle", {"queued": False, "interrupt": (what, point)})))
        for what in INTERRUPTIONS
        for point in range(AWAIT_POINTS + 1)
    ),
    ("tree navigation, a switch and a shutdown",
     (_turn(wipes=1), _change("tree", 3), _turn(), _change("switch"), _turn(wipes=1),
      _change("switch"), _change("shutdown"), _turn(band="hard"))),
)  # fmt: skip
"""Host scenarios every run starts with (named, so a failure says which), before the
randomly generated runs."""


def run_scenarios(machine: type[RuntimeConformance]) -> str | None:
    """Run every scenario on a fresh machine; the first failure, named, or None."""
    return machine.run_scenarios(SCENARIOS)
