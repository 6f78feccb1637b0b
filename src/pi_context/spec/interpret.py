"""A direct interpretation of a spec over wire-shaped values (the conformance JSON shapes).

This is the reference semantics the generated code and the ``transitions`` machine are
checked against: rows of the event are tried in order, guards evaluate left to right with
short-circuiting, lazy facts are read at most once and their first reads are recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pi_context.spec import expr as ex
from pi_context.spec import model as m

Wire = dict[str, Any]


@dataclass(frozen=True)
class Step:
    state: Wire
    effect: str
    row: str
    consulted: tuple[str, ...]
    carried: tuple[tuple[str, str], ...] = ()
    """The values the effect hands the host (present ones only: a follow-up prompt)."""


class NoRowMatches(Exception):
    """The table is incomplete for this input (the loader rejects such specs)."""


def axis_lookup(spec: m.Spec, state: Mapping[str, Any], target: ex.Target) -> ex.Value:
    return axis_lookup_any(state, target)


def axis_lookup_any(state: Mapping[str, Any], target: ex.Target) -> ex.Value:
    """A state axis, or one member of a variant axis (absent when the variant lacks it; a
    text is read trimmed, None when absent or empty)."""
    value = state[target.name]
    if target.member is None:
        return value
    if target.text:
        return m.normalize_text(value.get(target.member))
    return value.get(target.member, ex.ABSENT)


def field_lookup(event: Mapping[str, Any], target: ex.Target) -> ex.Value:
    """An event payload field (a text read trimmed, None when absent or empty)."""
    if target.text:
        return m.normalize_text(event.get(target.name))
    return event[target.name]


def _lookup(
    state: Mapping[str, Any], event: Mapping[str, Any], consulted: list[str] | None = None
) -> Any:
    """Resolve guard references against a wire state and event, recording lazy reads."""
    facts: Mapping[str, Any] = event.get("facts", {})

    def lookup(target: ex.Target) -> ex.Value:
        if target.kind == "axis":
            return axis_lookup_any(state, target)
        if target.kind == "field":
            return field_lookup(event, target)
        if target.kind == "fact":
            if target.lazy and consulted is not None and target.name not in consulted:
                consulted.append(target.name)
            return facts[target.name]
        raise AssertionError(f"{target.kind} in a guard")

    return lookup


def guard_holds(
    spec: m.Spec,
    row: m.Row,
    state: Mapping[str, Any],
    event: Mapping[str, Any],
    consulted: list[str] | None = None,
) -> bool:
    return bool(ex.evaluate(row.guard, _lookup(state, event, consulted)))


def next_state(
    spec: m.Spec, row: m.Row, state: Mapping[str, Any], event: Mapping[str, Any]
) -> Wire:
    lookup = _lookup(state, event)
    out: Wire = {}
    for axis in spec.axes:
        nv = row.next_for(axis.name)
        current = state[axis.name]
        if nv is None:
            out[axis.name] = current
        elif isinstance(nv, m.NextLiteral):
            out[axis.name] = nv.value
        elif isinstance(nv, m.NextCase):
            out[axis.name] = nv.apply(current)
        else:
            assert isinstance(nv, m.NextVariant) and isinstance(axis, m.VariantAxis)
            value: Wire = {axis.tag: nv.tag}
            for name, given in variant_fields(axis, nv):
                field_value = ex.value_of(given, lookup)
                if field_value is not None:  # (an absent text is left out)
                    value[name] = field_value
            out[axis.name] = value
    return out


def variant_fields(axis: m.VariantAxis, nv: m.NextVariant) -> list[tuple[str, ex.Expr]]:
    """The fields of the variant a row sets ``axis`` to, in the variant's field order, each
    with the expression the row gives it (what every next-state builder walks)."""
    variant = axis.variant(nv.tag)
    assert variant is not None
    given = dict(nv.fields)
    # (a text the row does not give is absent: left out)
    return [(f.name, given[f.name]) for f in variant.fields if f.name in given]


def carried(
    row: m.Row, state: Mapping[str, Any], event: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    """The present values ``row``'s effect carries when it fires in ``state`` on ``event``."""
    lookup = _lookup(state, event)
    out: list[tuple[str, str]] = []
    for name, given in row.carry:
        value = ex.value_of(given, lookup)
        if isinstance(value, str):
            out.append((name, value))
    return tuple(out)


def cause_text(row: m.Row, state: Mapping[str, Any]) -> str | None:
    """What the user is told caused the boundary ``row`` commits when it fires in ``state``
    (a wire state): ``""`` for a row without a cause, None when its cases name no text."""
    cause = row.cause
    if cause is None:
        return ""
    if not cause.axis:
        return cause.text
    value = state[cause.axis]
    if cause.member is not None:
        value = value.get(cause.member) if isinstance(value, Mapping) else None
    return cause.for_value(value)


def step(spec: m.Spec, state: Mapping[str, Any], event: Mapping[str, Any]) -> Step:
    consulted: list[str] = []
    for row in spec.rows_for(event["type"]):
        if guard_holds(spec, row, state, event, consulted):
            return Step(
                next_state(spec, row, state, event),
                row.effect,
                row.id,
                tuple(consulted),
                carried(row, state, event) if row.carry else (),
            )
    raise NoRowMatches(f"no row of {spec.id} matches {state} with {event}")


def initial_state(spec: m.Spec) -> Wire:
    return {axis.name: _copy(spec.initial[axis.name]) for axis in spec.axes}


def _copy(value: object) -> object:
    return dict(value) if isinstance(value, dict) else value


def state_key(spec: m.Spec, state: Mapping[str, Any]) -> tuple[Any, ...]:
    """A hashable key for a wire state."""
    parts: list[Any] = []
    for axis in spec.axes:
        value = state[axis.name]
        if isinstance(axis, m.EnumAxis):
            parts.append(value)
        else:
            parts.append(tuple(value.items()))
    return tuple(parts)


def render_state(spec: m.Spec, state: Mapping[str, Any]) -> str:
    """Compact human form: ``close-out(w1, manual) / pending``."""
    parts: list[str] = []
    for axis in spec.axes:
        value = state[axis.name]
        if isinstance(axis, m.VariantAxis):
            fields = [str(v) for k, v in value.items() if k != axis.tag]
            tag = value[axis.tag]
            parts.append(f"{tag}({', '.join(fields)})" if fields else str(tag))
        else:
            parts.append(str(value))
    return " / ".join(parts)


def render_event(event: Mapping[str, Any]) -> str:
    """Compact human form: ``turn_end(windowId=w1, overflow, failed)`` (true facts only)."""
    args = [f"{k}={v}" for k, v in event.items() if k not in ("type", "facts")]
    facts = event.get("facts", {})
    args += [f"{k}={v}" for k, v in facts.items() if not isinstance(v, bool)]
    args += [k for k, v in facts.items() if v is True]
    return f"{event['type']}({', '.join(args)})" if args else str(event["type"])
