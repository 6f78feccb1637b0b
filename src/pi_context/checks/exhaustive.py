"""Exhaustive agreement: every (state, event) of the finite abstraction through the generated
``reduce``, the ``transitions`` machine and the spec interpreter.

All three must agree on the next state, the effect, the row that fired and the order in
which lazy facts were consulted; that order must also follow the spec's ``lazy_order``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_context.checks.observe import lazy_attributes, recorded
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import render_event, render_state
from pi_context.statemachine.reset_control import ResetControl
from pi_context.support.progress import Progress


@dataclass
class ExhaustiveResult:
    cases: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def lazy_order_ok(order: tuple[str, ...], consulted: tuple[str, ...]) -> bool:
    positions = [order.index(name) for name in consulted]
    return positions == sorted(positions)


def check_exhaustive(gen: ResetControl, *, show: bool = True, limit: int = 10) -> ExhaustiveResult:
    spec = gen.spec
    machine = gen.machine
    lazy = lazy_attributes(spec)
    states = all_states(spec)
    events = all_events(spec)
    result = ExhaustiveResult()
    progress = Progress(f"{spec.id} exhaustive", len(states) * len(events)) if show else None
    for wire_state in states:
        typed_state = gen.wire.state_from_wire(wire_state)
        for wire_event in events:
            result.cases += 1
            ref = interpret.step(spec, wire_state, wire_event)
            event_spec = spec.event(wire_event["type"])
            assert event_spec is not None
            problems: list[str] = []
            if event_spec.lazy_order_fixed and not lazy_order_ok(
                event_spec.lazy_order, ref.consulted
            ):
                problems.append(f"spec consults {list(ref.consulted)} out of lazy_order")
            typed_event = gen.wire.event_from_wire(wire_event)
            for name, runner in (("reduce", gen.reducer.step), ("transitions", machine.step)):
                event, recorder = recorded(typed_event, lazy[wire_event["type"]])
                next_state, effect, row = runner(typed_state, event)
                consulted = tuple(recorder.consulted) if recorder else ()
                got = (gen.wire.state_to_wire(next_state), effect, row, consulted)
                want = (ref.state, ref.effect, ref.row, ref.consulted)
                if got != want:
                    problems.append(f"{name} gave {_show(got)}, spec says {_show(want)}")
                if name == "transitions" and machine.shape != gen.table.shape(next_state):
                    problems.append(
                        f"the machine reached {machine.shape!r} but the next state has shape "
                        f"{gen.table.shape(next_state)!r}"
                    )
            carried = getattr(gen.reducer, "carried", None)
            if carried is not None:  # the values the effect carries (a follow-up prompt)
                got_carried = tuple(carried(ref.row, typed_state).items())
                if got_carried != ref.carried:
                    problems.append(
                        f"the effect carries {dict(got_carried)}, spec says {dict(ref.carried)}"
                    )
            if problems and len(result.mismatches) < limit:
                result.mismatches.append(
                    f"{render_state(spec, wire_state)} + {render_event(wire_event)}: "
                    + "; ".join(problems)
                )
            elif problems:
                result.mismatches.append("…")
            if progress:
                progress.advance()
    if progress:
        progress.finish("" if result.ok else f", {len(result.mismatches)} mismatches")
    return result


def _show(outcome: tuple[Any, ...]) -> str:
    state, effect, row, consulted = outcome
    return f"{state} / {effect} by {row} consulting {list(consulted)}"
