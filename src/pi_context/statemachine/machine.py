"""The reset-control table as a `transitions` machine.

Triggers are the spec's events, conditions are the row guards and the ``after`` callbacks
perform the row's update and record its named effect. Machine states are *shapes* (the tag
or value of each axis); the data a shape abstracts (window ids, sources) lives on the model.
The machine is flat, has no auto transitions and is built once per spec and shared: stepping
sets the model's state directly and fires one trigger.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from transitions import Machine, Transition

from pi_context.statemachine.patterns import spell_out


class NoTransition(Exception):
    """No row of the table matched (impossible for a spec the loader accepted)."""


class GuardFirstTransition(Transition):
    """Evaluate the guard before any other transition bookkeeping.

    `transitions` runs prepare callbacks and debug logging for every candidate transition;
    most candidates of a trigger fail their guard, so failing fast keeps a step near the
    library's own cost for one flat trigger. Semantics are unchanged: a transition whose
    conditions pass is executed by the library as usual (conditions are pure, and lazy
    facts are memoised per step, so evaluating them twice reads nothing twice).
    """

    def execute(self, event_data: Any) -> bool:
        for condition in self.conditions:
            func: Any = condition.func  # always a callable here, never a method name
            if func(event_data) != condition.target:
                return False
        return bool(super().execute(event_data))

    def _eval_conditions(self, event_data: Any) -> bool:
        return True  # already evaluated by execute() above


class FlatMachine(Machine):
    transition_cls = GuardFirstTransition


class _Model:
    """The object `transitions` drives; it carries the full typed state."""

    def __init__(self) -> None:
        self.state = ""
        self.current: Any = None
        self.event: Any = None
        self.memo: dict[str, bool] = {}
        self.next: Any = None
        self.effect = ""
        self.row = ""


class ResetControlMachine:
    """The ``transitions`` machine of one generated table (a spec's generated ``machine``
    module)."""

    def __init__(self, table: ModuleType) -> None:
        self.table = table
        self._shape: Callable[[Any], str] = table.shape
        self._model = _Model()
        transitions: list[dict[str, Any]] = []
        for (trigger, source), rows in spell_out(table.TABLE, table.STATES).items():
            for row, dest in rows:
                effect, guard, apply = table.ROWS[row]
                transitions.append(
                    {
                        "trigger": trigger,
                        "source": source,
                        # same shape: an internal transition (no exit/enter of the shape)
                        "dest": None if dest == source else dest,
                        "conditions": [_condition(guard)],
                        "after": [_effect(effect, apply, row)],
                    }
                )
        self.machine = FlatMachine(
            model=self._model,
            states=list(table.STATES),
            transitions=transitions,
            initial=table.INITIAL_SHAPE,
            auto_transitions=False,
            send_event=True,
            ignore_invalid_triggers=False,
        )
        # the model's per-event trigger methods, looked up once
        self._triggers: dict[str, Callable[..., bool]] = {
            name: getattr(self._model, name) for name in self.machine.events
        }

    def step(self, state: Any, event: Any) -> tuple[Any, str, str]:
        """Fire ``event`` from ``state``: (next state, effect, row id)."""
        model = self._model
        model.state = self._shape(state)
        model.current = state
        model.event = event
        model.memo = {}
        model.next = None
        self._triggers[event.type](event=event)
        if model.next is None:
            raise NoTransition(f"no transition for {event!r} from {state!r}")
        return model.next, model.effect, model.row

    @property
    def shape(self) -> str:
        """The machine state after the last step (checkers compare it with the next state's
        shape, which proves the generated table's destinations)."""
        return str(self._model.state)


def _condition(guard: Callable[[Any, Any, dict[str, bool]], bool]) -> Callable[[Any], bool]:
    def condition(event_data: Any) -> bool:
        model = event_data.model
        return guard(model.current, model.event, model.memo)

    return condition


def _effect(effect: str, apply: Callable[[Any, Any], Any], row: str) -> Callable[[Any], None]:
    """The row's callback: perform its update and name its effect."""

    def perform(event_data: Any) -> None:
        model = event_data.model
        model.next = apply(model.current, model.event)
        model.effect = effect
        model.row = row

    perform.__name__ = f"on_{effect.replace('-', '_')}"
    return perform


_machines: dict[str, ResetControlMachine] = {}


def shared_machine(table: ModuleType) -> ResetControlMachine:
    """The one machine for this generated table (built on first use)."""
    key = table.__name__  # the committed package's, or the one generated for this process
    if key not in _machines:
        _machines[key] = ResetControlMachine(table)
    return _machines[key]
