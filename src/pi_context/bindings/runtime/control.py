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
from functools import cache
from typing import Any, Literal

from pi_context.spec.model import HostAction

# The newest published generation; any committed spec (a proposal too) can be selected.
from pi_context.statemachine.reset_control import DEFAULT_SPEC as DEFAULT_SPEC
from pi_context.statemachine.reset_control import ResetControl, reset_control, spec_ids

Source = Literal["manual", "automatic"]
COMMITS: frozenset[str] = frozenset({"commit-continue", "commit-stop", "recover"})
Lazy = Callable[[], bool]


@cache
def bindings() -> dict[str, ResetControl]:
    """Every committed reset-control spec's generated core, keyed by spec id (other spec
    families, such as the handoff lifecycle, are driven by their own bindings)."""
    found: dict[str, ResetControl] = {}
    for spec_id in spec_ids():
        binding = reset_control(spec_id)
        missing = binding.undeclared_hosts()
        if missing:
            raise ValueError(
                f"{spec_id} declares no host action for {', '.join(missing)}; the runtime "
                "acts only on declared host actions"
            )
        found[spec_id] = binding
    return found


def specs() -> tuple[str, ...]:
    return tuple(sorted(bindings()))


def _snake(name: str) -> str:
    return (
        re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("threshold_due", "hard_reserve_due")
    )


def lazy_facts(binding: ResetControl) -> dict[str, frozenset[str]]:
    """The facts each event declares lazy (0.25's thresholdDue is later hardReserveDue)."""
    return {
        event: frozenset(_snake(name) for name in names)
        for event, names in binding.lazy_order.items()
    }


class Facts:
    """Turn-end / before-settle facts; lazy ones are computed on first read, then memoised.

    ``consulted`` lists the facts in ``declared`` (what the running spec declares lazy for
    ``event``; ``Control`` fills it in) in the order the reducer read them.
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
        declared: frozenset[str] = frozenset(),
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
        self._declared = declared
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
    """One reducer step: the event, the effect named, its host action and the row that fired."""

    event: str
    effect: str
    row: str
    source: Source | None = None
    """For a committed close-out: who asked for it."""
    consulted: tuple[str, ...] = ()
    """The lazy facts the reducer read for this step, in the order it read them."""
    host: HostAction = "none"
    """What the host does for the effect, as the spec declares it."""
    changed: bool = True
    """The step changed the reducer state (an acknowledged request that did not is a duplicate)."""
    tool_requested: bool = False
    """A tool request of this window was pending (so a turn-end commit serves wipe_memory)."""


@dataclass
class Control:
    """The live reducer state of one runtime for one spec, reached only through the spec's
    :class:`ResetControl` handle and its declared host actions."""

    spec: str = DEFAULT_SPEC
    state: Any = field(init=False)
    history: list[Step] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        known = bindings()
        if self.spec not in known:
            raise ValueError(f"unknown reset-control spec {self.spec!r}; expected one of {specs()}")
        self.binding = known[self.spec]
        self._lazy = lazy_facts(self.binding)
        self.state = self.binding.initial_state()

    @property
    def has_close_out(self) -> bool:
        """The spec has window-scoped close-out phases (a ``close_out`` event)."""
        return self.binding.accepts("close_out")

    def facts(self, event: str, **values: Any) -> Facts:
        """Facts for ``event``, recording reads of the facts this spec declares lazy."""
        return Facts(event, declared=self._lazy.get(event, frozenset()), **values)

    def _step(self, event: Any, name: str) -> Step:
        pre = self.state
        request = self.binding.request_wire(pre)
        self.state, effect, row = self.binding.step(pre, event)
        facts = getattr(event, "facts", None)
        window = getattr(facts, "window_id", None)
        source = request.get("source") if isinstance(request, dict) else None
        tool = request == "explicit" or (
            isinstance(request, dict)
            and request.get("phase") == "tool-requested"
            and request.get("windowId") == window
        )
        consulted = tuple(facts.consulted) if isinstance(facts, Facts) else ()
        step = Step(
            name,
            effect,
            row,
            source if source in ("manual", "automatic") else None,
            consulted,
            self.binding.host(effect),
            self.state != pre,
            tool,
        )
        self.history.append(step)
        return step

    def pending_window(self) -> str | None:
        """The window a pending request belongs to (close-out specs), else None."""
        request = self.binding.request_wire(self.state)
        return request.get("windowId") if isinstance(request, dict) else None

    # --- events --------------------------------------------------------------------------------

    def close_out(self, window_id: str, source: Source) -> Step:
        if not self.has_close_out:
            raise ValueError(f"{self.spec} has no close-out phase")
        event = self.binding.event("close_out", window_id=window_id, source=source)
        return self._step(event, "close_out")

    def tool_request(self, window_id: str) -> Step:
        """wipe_memory (a window-less explicit ``request`` where the spec has no tool_request)."""
        if self.binding.accepts("tool_request"):
            return self._step(
                self.binding.event("tool_request", window_id=window_id), "tool_request"
            )
        return self._step(self.binding.event("request"), "request")

    def turn_end(self, facts: Facts) -> Step:
        return self._step(self.binding.event("turn_end", facts=facts), "turn_end")

    def before_settle(self, facts: Facts) -> Step:
        return self._step(self.binding.event("before_settle", facts=facts), "before_settle")

    def settled(self) -> Step:
        return self._step(self.binding.event("settled"), "settled")

    def abort(self) -> Step:
        return self._step(self.binding.event("abort"), "abort")

    def clear(self) -> Step:
        return self._step(self.binding.event("clear"), "clear")


def is_duplicate(step: Step) -> bool:
    """An acknowledged request that changed nothing: one was already pending."""
    return step.host == "acknowledge" and not step.changed


def reset_cause(step: Step) -> str:
    """A short human name for why a boundary committed (or ``""`` if it did not)."""
    if step.host == "recover":
        return "overflow recovery"
    if step.host not in COMMITS:
        return ""
    if step.event == "turn_end":
        return "wipe_memory" if step.tool_requested else "hard reserve"
    return "manual close-out" if step.source == "manual" else "close-out at stop"
