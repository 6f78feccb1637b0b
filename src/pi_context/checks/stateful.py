"""A hypothesis ``RuleBasedStateMachine`` generated from a spec.

One rule per event (payload and facts drawn by strategies; window ids mix the abstraction's
representatives with arbitrary strings), stepping the generated ``reduce``, the
``transitions`` machine and the spec interpreter side by side. State invariants are
``@invariant``s; transition invariants and trace monitors are checked after every step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from pi_context.checks.observe import lazy_attributes, recorded
from pi_context.spec import expr as ex
from pi_context.spec import interpret
from pi_context.spec.interpret import render_event, render_state
from pi_context.spec.model import BOOL, EnumType, Event, Field, FieldType, Spec, TextType
from pi_context.spec.modelcheck import broken_transition_invariants, monitor_next
from pi_context.statemachine.reset_control import ResetControl


def _value_strategy(t: FieldType) -> st.SearchStrategy[Any]:
    if t == BOOL:
        return st.booleans()
    if isinstance(t, EnumType):
        return st.sampled_from(t.values)
    if isinstance(t, TextType):  # the representative, or any text (blank ones included)
        return st.one_of(st.just(t.representative), st.text(max_size=6))
    reps = st.sampled_from(t.abstraction)  # type: ignore[union-attr]
    return st.one_of(reps, reps, st.text(min_size=1, max_size=6))


def _record(fields: tuple[Field, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """Records of ``fields``; the booleans are drawn together as one bit mask (one draw
    instead of one per flag: hypothesis' cost is per draw, and events carry many flags)."""
    flags = [f.name for f in fields if f.type == BOOL]
    texts = {f.name: _value_strategy(f.type) for f in fields if isinstance(f.type, TextType)}
    others = {
        f.name: _value_strategy(f.type)
        for f in fields
        if f.type != BOOL and not isinstance(f.type, TextType)
    }
    order = [f.name for f in fields]
    # (an optional text is drawn present or left out)
    rest = st.fixed_dictionaries(others, optional=texts) if texts else st.fixed_dictionaries(others)
    if not flags:
        return rest

    def build(mask: int, rest: dict[str, Any]) -> dict[str, Any]:
        values = {name: bool(mask >> i & 1) for i, name in enumerate(flags)}
        values.update(rest)
        return {name: values[name] for name in order if name in values}

    return st.builds(build, st.integers(0, (1 << len(flags)) - 1), rest)


def event_strategy(event: Event) -> st.SearchStrategy[dict[str, Any]]:
    """Wire events of one type."""
    if event.facts:
        return st.builds(
            lambda fields, facts: {"type": event.name, **fields, "facts": facts},
            _record(event.fields),
            _record(event.facts),
        )
    return _record(event.fields).map(lambda fields: {"type": event.name, **fields})


class StepMismatch(AssertionError):
    pass


SHRINK_SECONDS = 10.0  # how long hypothesis may shrink a failing trace before we stop it
SHRINK_STALL = 2.0  # ... and how long it may go without finding a shorter one


class _StopShrinking(BaseException):
    """Ends a run that has shrunk long enough; a BaseException so hypothesis lets it through
    instead of treating it as a failure of its own."""


@dataclass
class StatefulResult:
    """What the hypothesis run did: examples and steps run, and the shortest failing trace
    (its steps rendered, and what failed) if one was found."""

    examples: int = 0
    steps: int = 0
    failure: str | None = None
    trace: list[str] = field(default_factory=list)
    shrink_runs: int = 0
    shrink_seconds: float = 0.0
    improved_at: float = 0.0  # when the failing trace last got shorter (monotonic)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def describe(self) -> str:
        lines = [f"hypothesis found a failing trace ({len(self.trace)} step(s)):"]
        lines += [f"    {i}. {step}" for i, step in enumerate(self.trace, 1)]
        lines.append(f"  {self.failure}")
        return "\n".join(lines)


def _keep(found: StatefulResult, message: str, trace: list[str]) -> None:
    """Remember a failing trace if it is the first or the shortest so far."""
    if found.failure is None or len(trace) < len(found.trace):
        found.improved_at = time.monotonic()
    if found.failure is None or len(trace) <= len(found.trace):
        found.failure, found.trace = message, list(trace)


def build_state_machine(
    gen: ResetControl,
    result: StatefulResult | None = None,
    on_run: Callable[[StatefulResult], None] | None = None,
) -> type[RuleBasedStateMachine]:
    """The state machine class; runs, steps and the shortest failure go into ``result``,
    and ``on_run`` is called at the start of every run (progress, the shrink time bound)."""
    spec: Spec = gen.spec
    machine = gen.machine
    lazy = lazy_attributes(spec)
    counter = {"steps": 0, "runs": 0}
    found = result if result is not None else StatefulResult()

    def init(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        self.wire = interpret.initial_state(spec)
        self.typed = gen.types.initial_state()
        self.monitors = {p.id: p.initial for p in spec.traces}
        self.trace = []
        counter["runs"] += 1
        if found.failure is None:
            found.examples += 1
        else:
            found.shrink_runs += 1
        if on_run is not None:
            on_run(found)

    def apply(self: Any, wire_event: dict[str, Any]) -> None:
        try:
            check(self, wire_event)
        except Exception as err:
            message = (
                str(err)
                if isinstance(err, AssertionError)
                else (f"{type(err).__name__} while stepping: {err}")
            )
            _keep(found, message, self.trace)
            raise

    def check(self: Any, wire_event: dict[str, Any]) -> None:
        counter["steps"] += 1
        found.steps += 1
        pre = self.wire
        ref = interpret.step(spec, pre, wire_event)
        typed_event = gen.wire.event_from_wire(wire_event)
        self.trace.append(f"{render_event(wire_event)} -> {render_state(spec, ref.state)}")
        for name, runner in (("reduce", gen.reducer.step), ("transitions", machine.step)):
            event, recorder = recorded(typed_event, lazy[wire_event["type"]])
            next_state, effect, row = runner(self.typed, event)
            consulted = tuple(recorder.consulted) if recorder else ()
            got = (gen.wire.state_to_wire(next_state), effect, row, consulted)
            want = (ref.state, ref.effect, ref.row, ref.consulted)
            if got != want:
                raise StepMismatch(f"{name} disagrees with the spec: {got} != {want}")
        for inv in broken_transition_invariants(spec, pre, ref.state, wire_event, ref.effect):
            raise AssertionError(f"transition invariant {inv.id!r} violated: {inv.why}")
        for prop in spec.traces:
            state = monitor_next(
                spec, prop.id, self.monitors[prop.id], pre, ref.state, wire_event, ref.effect
            )
            if state == "violation":
                raise AssertionError(f"trace property {prop.id!r} violated: {prop.why}")
            self.monitors[prop.id] = state
        self.wire = ref.state
        self.typed = gen.wire.state_from_wire(ref.state)

    namespace: dict[str, Any] = {"__init__": init, "apply": apply, "counter": counter}
    namespace["result"] = found
    for event in spec.events:

        def on_event(self: Any, payload: dict[str, Any]) -> None:
            self.apply(payload)

        on_event.__name__ = f"on_{ex.snake(event.name)}"
        namespace[on_event.__name__] = rule(payload=event_strategy(event))(on_event)

    def state_invariants(self: Any) -> None:
        state = self.wire

        def lookup(target: ex.Target) -> ex.Value:
            return interpret.axis_lookup_any(state, target)

        for inv in spec.state_invariants:
            if not ex.evaluate(inv.expr, lookup):
                message = f"state invariant {inv.id!r} violated: {inv.why}"
                _keep(found, message, self.trace)
                raise AssertionError(message)

    namespace["state_invariants"] = invariant()(state_invariants)
    name = "Spec_" + spec.module_name
    return type(name, (RuleBasedStateMachine,), namespace)


def run_stateful(
    gen: ResetControl,
    *,
    examples: int = 200,
    steps: int = 30,
    seed: int | None = None,
    on_run: Callable[[StatefulResult], None] | None = None,
    shrink_seconds: float = SHRINK_SECONDS,
) -> StatefulResult:
    """Run the generated state machine; a failing trace is shrunk for at most
    ``shrink_seconds`` and reported in the result (never raised)."""
    result = StatefulResult()
    shrink_started: list[float] = []

    def each_run(found: StatefulResult) -> None:
        if found.failure is not None:
            if not shrink_started:
                shrink_started.append(time.monotonic())
            now = time.monotonic()
            found.shrink_seconds = now - shrink_started[0]
            if found.shrink_seconds > shrink_seconds or now - found.improved_at > SHRINK_STALL:
                raise _StopShrinking
        if on_run is not None:
            on_run(found)

    cls: Any = build_state_machine(gen, result, each_run)
    config = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,  # the failing trace is reported by us, once
        print_blob=False,
    )
    if seed is not None:
        # hypothesis copies this attribute from the factory, as @seed would set it
        cls._hypothesis_internal_use_seed = seed
    try:
        run_state_machine_as_test(cls, settings=config)  # type: ignore[no-untyped-call,unused-ignore]
    except _StopShrinking:
        pass
    except Exception as err:
        if result.failure is None:  # hypothesis itself gave up; say so in our words
            text = str(err).strip().splitlines()
            result.failure = (
                f"the hypothesis run stopped: {text[0] if text else type(err).__name__}"
            )
    return result
