"""The one handle, typed with one spec's generated classes: what ``statemachine.typed.typed``
returns for a committed spec.

``TypedHandle[State, Event, Effect, EventType]`` wraps the spec's :class:`ResetControl`
(reached by the one discovery rule) and declares the calls a host makes with that spec's own
types, so a type checker rejects a state or event of another generation, an event name the
spec does not have, and a comparison with an effect the spec can never return.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

from pi_context.spec.model import HostAction
from pi_context.statemachine.reset_control import ResetControl

S = TypeVar("S")  # the spec's State
E = TypeVar("E")  # the spec's Event union
F = TypeVar("F", bound=str)  # the spec's Effect literal
N = TypeVar("N", bound=str)  # the spec's EventType literal


class TypedHandle(Generic[S, E, F, N]):
    """One spec's handle, typed. ``untyped`` is the :class:`ResetControl` it wraps."""

    __slots__ = ("untyped",)

    def __init__(self, untyped: ResetControl) -> None:
        self.untyped = untyped

    def __repr__(self) -> str:
        return f"<TypedHandle {self.untyped.id}>"

    @property
    def id(self) -> str:
        return self.untyped.id

    def initial_state(self) -> S:
        state: S = self.untyped.initial_state()
        return state

    def step(self, state: S, event: E) -> tuple[S, F, str]:
        """The next state, the effect and the id of the row that fired."""
        return cast("tuple[S, F, str]", self.untyped.step(state, event))

    def reduce(self, state: S, event: E) -> tuple[S, F]:
        return cast("tuple[S, F]", self.untyped.reduce(state, event))

    def accepts(self, event: str) -> bool:
        return self.untyped.accepts(event)

    def event(self, name: N, **fields: Any) -> E:
        """The event ``name`` of this spec (its fields by keyword; facts as the spec's
        ``...Facts`` object)."""
        event: E = self.untyped.event(name, **fields)
        return event

    def host(self, effect: F) -> HostAction:
        return self.untyped.host(effect)

    def duplicate(self, effect: F) -> bool:
        return self.untyped.duplicate(effect)

    def cause(self, row: str, state: S) -> str:
        return self.untyped.cause(row, state)

    def state_to_wire(self, state: S) -> dict[str, Any]:
        return self.untyped.state_to_wire(state)

    def state_from_wire(self, obj: object) -> S:
        state: S = self.untyped.state_from_wire(obj)
        return state

    def event_to_wire(self, event: E) -> dict[str, Any]:
        return self.untyped.event_to_wire(event)

    def event_from_wire(self, obj: object) -> E:
        event: E = self.untyped.event_from_wire(obj)
        return event
