"""The reset-control reducer as the runtime drives it: one generated package behind one typed
interface, and each step read straight from that package's tables.

The runtime never decides a reset itself. It gathers facts into the event's host facts class,
generated from the specs' fact declarations (:mod:`pi_context.statemachine.host_facts`; lazily:
each lazy fact is a callable evaluated at most once, when and if the reducer reads it, so the
reducer's consultation order is the spec's), hands one event to the generated reducer and
performs the named effect.
A :class:`Step` carries the row that fired, the effect, the host action the spec declares for
it, the cause the user is told (the spec's ``cause`` of that row) and whether the effect answers
a duplicate request (the effect's ``duplicate``): the runtime compares no phases, effects or
row ids of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pi_context.spec.model import HOST_ACTION_MEANINGS, HostAction, HostActionMeaning
from pi_context.statemachine.host_facts import (
    LAZY,
    BeforeSettleHostFacts,
    HostEvent,
    HostFacts,
    ProviderContextHostFacts,
    TurnEndHostFacts,
)
from pi_context.statemachine.lazy_facts import EventFacts

# The newest published generation; any committed spec (a proposal too) can be selected.
from pi_context.statemachine.reset_control import DEFAULT_SPEC as DEFAULT_SPEC
from pi_context.statemachine.reset_control import ResetControl, reset_control, spec_ids

from .via import Via

Source = Literal["manual", "automatic"]
"""Who asked for a close-out: the user (``/wipe-memory``) or the budget (its final warning).
These are values the host reports in the ``close_out`` event, part of its interface."""


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


@dataclass(frozen=True)
class Step:
    """One reducer step, read from the generated tables: the event, the effect named, the row
    that fired, the effect's host action, the row's cause and the effect's duplicate flag."""

    event: str
    effect: str
    row: str
    host: HostAction
    """What the host does for the effect, as the spec declares it."""
    cause: str = ""
    """What the user is told caused the boundary (the row's ``cause``); empty otherwise."""
    duplicate: bool = False
    """The effect answers a request that was already pending (the effect's ``duplicate``)."""
    consulted: tuple[str, ...] = ()
    """The lazy facts the reducer read for this step, in the order it read them."""
    prompt: str | None = None
    """The user's follow-up prompt the effect carries (from 6bcd8b5 on): the boundary ends
    with it and the run goes on with it."""

    @property
    def meaning(self) -> HostActionMeaning:
        return HOST_ACTION_MEANINGS[self.host]

    commits = Via[bool](
        "meaning.commits", "The host builds and appends a reset boundary for this step."
    )
    continues = Via[bool](
        "meaning.continues",
        "After a committed boundary the run goes on (the continuation is the prompt).",
    )
    stops = Via[bool](
        "meaning.stops", "The run ends with this step (after its boundary, when it commits one)."
    )
    retries = Via[bool](
        "meaning.retries", "After a committed boundary the failed request is re-run."
    )


@dataclass
class Control:
    """The live reducer state of one runtime for one spec, reached only through the spec's
    :class:`ResetControl` handle: steps in, :class:`Step` records out."""

    spec: str = DEFAULT_SPEC
    state: Any = field(init=False)
    history: list[Step] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        known = bindings()
        if self.spec not in known:
            raise ValueError(f"unknown reset-control spec {self.spec!r}; expected one of {specs()}")
        self.binding = known[self.spec]
        lazy = LAZY.get(self.spec)
        if lazy is None:
            raise ValueError(
                f"{self.spec} has no host facts in pi_context.statemachine.host_facts: run "
                "`pi-context generate`"
            )
        self._lazy = lazy
        self.state = self.binding.initial_state()

    def accepts(self, event: str) -> bool:
        """The running spec has ``event``."""
        return self.binding.accepts(event)

    @property
    def reset_tool(self) -> str:
        """The model's reset tool as this generation names it (``wipe_memory`` up to 0.34,
        ``clear_memory`` from a508f68 on): the spec's trigger of its tool request."""
        return self._trigger(("tool_request", "request"), "wipe_memory")

    @property
    def reset_command(self) -> str:
        """The user's reset command as this generation names it (``/wipe-memory`` up to
        0.34, ``/clear-memory`` from a508f68 on): the spec's trigger of its close-out."""
        return self._trigger(("close_out", "manual_reset"), "/wipe-memory")

    def _trigger(self, events: tuple[str, ...], fallback: str) -> str:
        spec = self.binding.spec
        for name in events:
            event = spec.event(name)
            if event is not None and event.trigger:
                return event.trigger
        return fallback

    @property
    def has_close_out(self) -> bool:
        """The spec has window-scoped close-out phases (a ``close_out`` event)."""
        return self.binding.accepts("close_out")

    def state_wire(self) -> dict[str, Any]:
        """The reducer state in its wire form (what a mirror of the spec compares)."""
        return self.binding.state_to_wire(self.state)

    def _decide(self, facts: HostFacts) -> Step:
        """Step the event ``facts`` are for, recording the reads of the facts this spec
        declares lazy for it."""
        facts.watch(self._lazy.get(facts.EVENT, ()))
        return self._step(facts.EVENT, facts=facts)

    def _step(self, name: HostEvent, **fields: Any) -> Step:
        """Step the event ``name``; ``fields`` are its payload (or its ``facts``)."""
        event = self.binding.event(name, **fields)
        pre = self.state
        self.state, effect, row = self.binding.step(pre, event)
        facts = fields.get("facts")
        step = Step(
            name,
            effect,
            row,
            self.binding.host(effect),
            self.binding.cause(row, pre),
            self.binding.duplicate(effect),
            tuple(facts.consulted) if isinstance(facts, EventFacts) else (),
            self.binding.carried(row, pre).get("prompt"),
        )
        self.history.append(step)
        return step

    # --- events --------------------------------------------------------------------------------

    @property
    def takes_prompt(self) -> bool:
        """The user's close-out may carry a follow-up prompt (from 6bcd8b5 on)."""
        event = self.binding.spec.event("close_out")
        return event is not None and event.field("prompt") is not None

    def close_out(self, window_id: str, source: Source, prompt: str | None = None) -> Step:
        if not self.has_close_out:
            raise ValueError(f"{self.spec} has no close-out phase")
        if prompt is None:
            return self._step("close_out", window_id=window_id, source=source)
        if not self.takes_prompt:
            raise ValueError(f"{self.spec} has no follow-up prompt")
        return self._step("close_out", window_id=window_id, source=source, prompt=prompt)

    def tool_request(self, window_id: str) -> Step:
        """wipe_memory (a window-less ``request`` where the spec has no ``tool_request``)."""
        if self.binding.accepts("tool_request"):
            return self._step("tool_request", window_id=window_id)
        return self._step("request")

    def manual_reset(self) -> Step:
        """The user's ``/wipe-memory`` where the spec commits it at once (0.25)."""
        return self._step("manual_reset")

    def turn_end(self, facts: TurnEndHostFacts) -> Step:
        return self._decide(facts)

    def before_settle(self, facts: BeforeSettleHostFacts) -> Step:
        return self._decide(facts)

    def provider_context(self, facts: ProviderContextHostFacts) -> Step:
        """A provider request is about to be sent (a spec whose extension decides there)."""
        return self._decide(facts)

    def settled(self) -> Step:
        return self._step("settled")

    def abort(self) -> Step:
        return self._step("abort")

    def clear(self) -> Step:
        return self._step("clear")
