"""The finite abstraction of a spec: every state and every event instance.

Id types are represented by their declared representatives (two suffice: the table only
compares ids for equality and copies them), enums by their values, bools by both.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from pi_context.spec.interpret import Wire
from pi_context.spec.model import BOOL, EnumAxis, EnumType, Event, Field, FieldType, IdType, Spec


def domain(t: FieldType) -> tuple[object, ...]:
    if t == BOOL:
        return (False, True)
    if isinstance(t, EnumType):
        return t.values
    assert isinstance(t, IdType)
    return t.abstraction


def _records(fields: tuple[Field, ...]) -> Iterator[dict[str, object]]:
    names = [f.name for f in fields]
    for combo in itertools.product(*(domain(f.type) for f in fields)):
        yield dict(zip(names, combo, strict=True))


def all_states(spec: Spec) -> list[Wire]:
    per_axis: list[list[object]] = []
    for axis in spec.axes:
        if isinstance(axis, EnumAxis):
            per_axis.append(list(axis.type.values))
        else:
            values: list[object] = []
            for variant in axis.variants:
                for rec in _records(variant.fields):
                    values.append({axis.tag: variant.tag, **rec})
            per_axis.append(values)
    names = [a.name for a in spec.axes]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*per_axis)]


def event_instances(event: Event) -> list[Wire]:
    out: list[Wire] = []
    for fields in _records(event.fields):
        if event.facts:
            for facts in _records(event.facts):
                out.append({"type": event.name, **fields, "facts": facts})
        else:
            out.append({"type": event.name, **fields})
    return out


def all_events(spec: Spec) -> list[Wire]:
    return [inst for event in spec.events for inst in event_instances(event)]


def case_count(spec: Spec) -> int:
    return len(all_states(spec)) * len(all_events(spec))
