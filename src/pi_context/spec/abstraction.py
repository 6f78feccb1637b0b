"""The finite abstraction of a spec: every state and every event instance.

Id types are represented by their declared representatives (two suffice: the table only
compares ids for equality and copies them), enums by their values, bools by both.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from pi_context.spec.interpret import Wire
from pi_context.spec.model import (
    BOOL,
    EnumAxis,
    EnumType,
    Event,
    Field,
    FieldType,
    IdType,
    Loc,
    Spec,
    TextType,
    VariantAxis,
)

MAX_CASES = 250_000
"""States x event instances a spec's abstraction may have (the published specs have at most
about 41,000); every load checks the table over all of them."""


def domain(t: FieldType) -> tuple[object, ...]:
    if t == BOOL:
        return (False, True)
    if isinstance(t, EnumType):
        return t.values
    if isinstance(t, TextType):
        return (None, t.representative)  # absent, present
    assert isinstance(t, IdType)
    return t.abstraction


def _records(fields: tuple[Field, ...]) -> Iterator[dict[str, object]]:
    names = [f.name for f in fields]
    for combo in itertools.product(*(domain(f.type) for f in fields)):
        # (an absent text is a key left out, as on the wire)
        yield {n: v for n, v in zip(names, combo, strict=True) if v is not None}


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


# --- the abstraction's size, counted without enumerating it ----------------------------------


def _product(fields: tuple[Field, ...]) -> int:
    count = 1
    for f in fields:
        count *= len(domain(f.type))
    return count


def state_count(spec: Spec) -> int:
    count = 1
    for axis in spec.axes:
        if isinstance(axis, EnumAxis):
            count *= len(axis.type.values)
        else:
            count *= sum(_product(v.fields) for v in axis.variants)
    return count


def instance_count(event: Event) -> int:
    return _product(event.fields) * _product(event.facts)


def _fields(spec: Spec) -> list[tuple[str, Field]]:
    """(where, field) of every field the abstraction multiplies over."""
    found: list[tuple[str, Field]] = []
    for axis in spec.axes:
        if isinstance(axis, VariantAxis):
            for variant in axis.variants:
                found += [(f"{axis.name}.{variant.tag}.{f.name}", f) for f in variant.fields]
    for event in spec.events:
        found += [(f"events.{event.name}.{f.name}", f) for f in event.fields]
        found += [(f"events.{event.name}.facts.{f.name}", f) for f in event.facts]
    return found


def size_problem(spec: Spec, limit: int | None = None) -> tuple[Loc | None, str] | None:
    """Where and why the abstraction is too large to enumerate (``None`` when it is not):
    the product that crossed ``limit`` (default ``MAX_CASES``) and the field type that
    multiplies it most."""
    limit = MAX_CASES if limit is None else limit
    states = state_count(spec)
    instances = sum(instance_count(e) for e in spec.events)
    cases = states * instances
    if cases <= limit:
        return None
    uses: dict[str, list[str]] = {}
    types: dict[str, FieldType] = {}
    for where, f in _fields(spec):
        uses.setdefault(f.type.name, []).append(where)
        types[f.type.name] = f.type
    name = max(uses, key=lambda n: (len(domain(types[n])), len(uses[n])))
    kind = types[name]
    size = len(domain(kind))
    listed = "abstraction ids" if isinstance(kind, IdType) else "values"
    shown = ", ".join(uses[name][:3]) + (
        f" and {len(uses[name]) - 3} more" if len(uses[name]) > 3 else ""
    )
    message = (
        f"the finite abstraction is too large to check: {states:,} states x {instances:,} "
        f"event instances = {cases:,} cases (the limit is {limit:,}); type {name!r} has "
        f"{size} {listed}, multiplied in by {shown}"
    )
    if isinstance(kind, IdType):
        message += "; list fewer representatives (ids only compared for equality need two)"
    loc = kind.loc if isinstance(kind, IdType | EnumType) else None
    return loc, message
