"""The reset-control reducer as the runtime drives it: one adapter per supported spec.

The runtime never decides a reset itself. It gathers facts (lazily: each lazy fact is a
callable evaluated at most once, when and if the reducer reads it, so the reducer's consultation
order is the spec's), hands one event to the generated reducer and performs the named effect.
Each step is recorded with the row that fired, so a host can tell *why* a boundary committed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pi_context.statemachine.generated import reset_control_0_25 as rc25
from pi_context.statemachine.generated import reset_control_0_26 as rc26

SPECS = ("reset-control@0.26", "reset-control@0.25")
DEFAULT_SPEC = "reset-control@0.26"

Source = Literal["manual", "automatic"]
Lazy = Callable[[], bool]


def _snake(name: str) -> str:
    return (
        re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("threshold_due", "hard_reserve_due")
    )


# The facts each event declares lazy (0.25's thresholdDue is 0.26's hardReserveDue).
LAZY_FACTS: dict[str, frozenset[str]] = {
    event: frozenset(_snake(name) for name in names)
    for event, names in {**rc25.LAZY_ORDER, **rc26.LAZY_ORDER}.items()
}


class Facts:
    """Turn-end / before-settle facts; lazy ones are computed on first read, then memoised.

    ``consulted`` lists the facts the spec declares lazy for ``event``, in the order the
    reducer read them.
    """

    def __init__(
        self,
        event: str,
        *,
        window_id: str,
        aborted: bool = False,
        overflow: bool = False,
        failed: bool = False,
        enabled: bool | Lazy = True,
        queued: bool | Lazy = False,
        automatic_reset_enabled: bool | Lazy = True,
        hard_reserve_due: bool | Lazy = False,
    ) -> None:
        self._window_id = window_id
        self._aborted = aborted
        self._overflow = overflow
        self._failed = failed
        self._lazy: dict[str, bool | Lazy] = {
            "enabled": enabled,
            "queued": queued,
            "automatic_reset_enabled": automatic_reset_enabled,
            "hard_reserve_due": hard_reserve_due,
        }
        self._values: dict[str, bool] = {}
        self._declared = LAZY_FACTS[event]
        self.consulted: list[str] = []

    def _read(self, name: str) -> bool:
        if name not in self._values:
            source = self._lazy[name]
            self._values[name] = bool(source() if callable(source) else source)
            if name in self._declared:
                self.consulted.append(name)
        return self._values[name]

    @property
    def window_id(self) -> str:
        return self._window_id

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def overflow(self) -> bool:
        return self._overflow

    @property
    def failed(self) -> bool:
        return self._failed

    @property
    def enabled(self) -> bool:
        return self._read("enabled")

    @property
    def queued(self) -> bool:
        return self._read("queued")

    @property
    def automatic_reset_enabled(self) -> bool:
        return self._read("automatic_reset_enabled")

    @property
    def hard_reserve_due(self) -> bool:
        return self._read("hard_reserve_due")

    @property
    def threshold_due(self) -> bool:
        """0.25's name for the hard-reserve line."""
        return self._read("hard_reserve_due")


@dataclass(frozen=True)
class Step:
    """One reducer step: the event, the effect named and the row that fired."""

    event: str
    effect: str
    row: str
    source: Source | None = None
    """For a committed close-out: who asked for it."""
    consulted: tuple[str, ...] = ()
    """The lazy facts the reducer read for this step, in the order it read them."""


@dataclass
class Control:
    """The live reducer state of one runtime for one spec."""

    spec: str = DEFAULT_SPEC
    state: Any = field(init=False)
    history: list[Step] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if self.spec not in SPECS:
            raise ValueError(f"unknown reset-control spec {self.spec!r}; expected one of {SPECS}")
        self.state = self._module.initial_state()

    @property
    def _module(self) -> Any:
        return rc26 if self.spec == "reset-control@0.26" else rc25

    @property
    def has_close_out(self) -> bool:
        """0.26 has window-scoped close-out phases; 0.25 has only an explicit request."""
        return self.spec == "reset-control@0.26"

    def _step(self, event: Any, name: str) -> Step:
        pre = self.state
        self.state, effect, row = self._module.step(pre, event)
        source = getattr(getattr(pre, "request", None), "source", None)
        facts = getattr(event, "facts", None)
        consulted = tuple(facts.consulted) if isinstance(facts, Facts) else ()
        step = Step(name, effect, row, source, consulted)
        self.history.append(step)
        return step

    def pending_window(self) -> str | None:
        """The window a pending request belongs to (0.26), else None."""
        request = getattr(self.state, "request", None)
        return getattr(request, "window_id", None)

    # --- events --------------------------------------------------------------------------------

    def close_out(self, window_id: str, source: Source) -> Step:
        if not self.has_close_out:
            raise ValueError("reset-control@0.25 has no close-out phase")
        return self._step(rc26.CloseOutEvent(window_id=window_id, source=source), "close_out")

    def tool_request(self, window_id: str) -> Step:
        """wipe_memory (0.25: the window-less explicit request)."""
        if self.has_close_out:
            return self._step(rc26.ToolRequestEvent(window_id=window_id), "tool_request")
        return self._step(rc25.RequestEvent(), "request")

    def turn_end(self, facts: Facts) -> Step:
        event = (rc26 if self.has_close_out else rc25).TurnEndEvent(facts=facts)
        return self._step(event, "turn_end")

    def before_settle(self, facts: Facts) -> Step:
        event = (rc26 if self.has_close_out else rc25).BeforeSettleEvent(facts=facts)
        return self._step(event, "before_settle")

    def settled(self) -> Step:
        return self._step(self._module.SettledEvent(), "settled")

    def abort(self) -> Step:
        return self._step(self._module.AbortEvent(), "abort")

    def clear(self) -> Step:
        return self._step(self._module.ClearEvent(), "clear")


def is_duplicate(step: Step) -> bool:
    return step.effect in ("already-pending", "already-requested")


def reset_cause(step: Step) -> str:
    """A short human name for why a boundary committed (or ``""`` if it did not)."""
    if step.effect == "recover-overflow":
        return "overflow recovery"
    if step.effect != "commit-boundary":
        return ""
    if step.row in ("turn_end.tool-commit", "turn_end.explicit-commit"):
        return "wipe_memory"
    if "hard-reserve" in step.row or "threshold" in step.row:
        return "hard reserve"
    if step.row.endswith("fallback"):
        return "manual close-out" if step.source == "manual" else "close-out at stop"
    return step.row
