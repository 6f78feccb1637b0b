"""What the Quint export accepts and what it calls things: Quint names for spec names, the
bracketing of an operand and the one type of a name shared by events, and the totality check
that refuses a spec construct the export does not carry (a field another part of the spec
language adds is refused while it holds a value)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from pi_context.spec import expr as ex
from pi_context.spec import model as m

QUINT_DIR = "quint/generated"
"""Where ``pi-context generate`` writes the modules, from the checkout's root."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Quint keywords a record field, variable or definition cannot be called.
_RESERVED = _words(
    "module import export from as const var def val pure action run temporal nondet assume "
    "type if else all any match true false bool int str Set List Bool Int Nat and or iff "
    "implies not"
)


class ExportError(Exception):
    """The spec uses something the Quint export does not carry; the message says what."""


def qname(name: str) -> str:
    """A spec name as a Quint identifier (``request-phase`` -> ``request_phase``)."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not ident or ident[0].isdigit():
        ident = "n_" + ident
    return ident + "_" if ident in _RESERVED else ident


def type_name(name: str) -> str:
    """A spec name as a Quint type name (``toolSource`` -> ``ToolSource``)."""
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    text = "".join(p[:1].upper() + p[1:] for p in parts) or "T"
    return "T" + text if text[0].isdigit() else text


def set_name(name: str) -> str:
    """The value set of a type (``toolSource`` -> ``TOOL_SOURCE``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type_name(name)).upper()


def module_file(spec: m.Spec) -> str:
    return f"{QUINT_DIR}/{spec.module_name}.qnt"


# ---------------------------------------------------------------- totality


# Every field of the model the export reads (or knows to be commentary only). A field that
# another helper adds to the spec language is refused while it holds a value, so a spec that
# uses it never exports as if it did not.
_KNOWN: dict[type | str, frozenset[str]] = {
    m.Spec: _words(
        "id name version title path sha256 types axes initial events effects rows "
        "state_invariants transition_invariants traces expect_all_reachable reachability_why "
        "comments refines provenance progress"
    ),
    # trigger: the host's name for the tool or command that raises an event (wipe_memory,
    # /clear-memory); like why it changes no transition, so the module says it in a comment
    m.Event: _words("name fields facts lazy_order why loc lazy_order_fixed scope trigger"),
    m.Field: _words("name type why lazy loc host"),
    m.EnumAxis: _words("name type why loc"),
    m.VariantAxis: _words("name tag variants why loc"),
    m.Variant: _words("tag fields"),
    # carries/carry: what an effect hands the host (a follow-up prompt) is no part of the
    # state, so the module says it in a comment; each carried value is a text of the state
    m.Effect: _words("name meaning loc host duplicate carries"),
    m.Row: _words("id event guard guard_text next effect why loc cause carry"),
    m.StateInvariant: _words("id expr text why loc"),
    m.TransitionInvariant: _words("id events when when_text then then_text why loc"),
    m.TraceProperty: _words("id why initial steps loc"),
    m.MonitorStep: _words("source when when_text target loc"),
    m.EnumType: _words("name values why loc"),
    m.IdType: _words("name abstraction why loc"),
    # an optional text: "" (absent) or its representative (present)
    m.TextType: _words("name representative why loc"),
}


# Progress (leads-to) properties, read by duck typing: carried as Quint `temporal` definitions.
_KNOWN["ProgressProperty"] = _words("id when when_text leads_to leads_to_text fair why loc")
_KNOWN["FairEvent"] = _words("event when when_text")


def _known(obj: object) -> frozenset[str] | None:
    """The fields the export reads of ``obj``'s kind: by class, or for a kind defined outside
    the spec model (progress properties) by class name; a subclass is read as its base."""
    for cls in type(obj).__mro__:
        found = _KNOWN.get(cls, _KNOWN.get(cls.__name__))
        if found is not None:
            return found
    return None


def _check_known(obj: object, where: str) -> None:
    known = _known(obj)
    if known is None:
        raise ExportError(f"{where}: the Quint export does not know {type(obj).__name__}")
    assert dataclasses.is_dataclass(obj)
    for f in dataclasses.fields(obj):
        if f.name in known:
            continue
        value = getattr(obj, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        if value != default and value not in (None, (), "", {}, False):
            raise ExportError(
                f"{where} uses {type(obj).__name__}.{f.name}, which the Quint export does "
                f"not carry yet; teach pi_context/codegen/quint.py about it"
            )


def check_spec(spec: m.Spec) -> None:
    _check_known(spec, spec.id)
    for t in spec.types:
        _check_known(t, f"{spec.id} type {t.name}")
    for axis in spec.axes:
        _check_known(axis, f"{spec.id} axis {axis.name}")
        if isinstance(axis, m.VariantAxis):
            for v in axis.variants:
                _check_known(v, f"{spec.id} axis {axis.name} variant {v.tag}")
                for f in v.fields:
                    _check_field(f, f"{spec.id} axis {axis.name}.{v.tag}")
        else:
            _check_known(axis.type, f"{spec.id} axis {axis.name}")
    for event in spec.events:
        _check_known(event, f"{spec.id} event {event.name}")
        for f in (*event.fields, *event.facts):
            _check_field(f, f"{spec.id} event {event.name}")
    for effect in spec.effects:
        _check_known(effect, f"{spec.id} effect {effect.name}")
    for row in spec.rows:
        _check_known(row, f"{spec.id} row {row.id}")
        for _axis, nv in row.next:
            if not isinstance(nv, m.NextLiteral | m.NextCase | m.NextVariant):
                raise ExportError(f"{spec.id} row {row.id}: unknown next value {nv!r}")
    invariants: tuple[m.StateInvariant | m.TransitionInvariant | m.TraceProperty, ...] = (
        *spec.state_invariants,
        *spec.transition_invariants,
        *spec.traces,
    )
    for inv in invariants:
        _check_known(inv, f"{spec.id} invariant {inv.id}")
    for prop in spec.traces:
        for step in prop.steps:
            _check_known(step, f"{spec.id} trace {prop.id}")
    for progress in progress_properties(spec):
        _check_known(progress, f"{spec.id} progress property")
        for fair in getattr(progress, "fair", ()):
            _check_known(fair, f"{spec.id} progress property {getattr(progress, 'id', '?')}")


def progress_properties(spec: m.Spec) -> tuple[Any, ...]:
    """The spec's progress properties (``Spec.progress`` where the spec language has them)."""
    found = getattr(spec, "progress", ())
    return tuple(found) if isinstance(found, tuple | list) else ()


def type_values(t: m.EnumType | m.IdType | m.TextType) -> tuple[str, tuple[str, ...]]:
    """A named type's kind and the values the abstraction gives it (an optional text: ""
    for absent, its representative for present)."""
    if isinstance(t, m.TextType):
        return "optional text", ("", t.representative)
    if isinstance(t, m.IdType):
        return "id", t.abstraction
    return "enum", t.values


def _check_field(f: m.Field, where: str) -> None:
    _check_known(f, f"{where}.{f.name}")
    if not isinstance(f.type, m.BoolType | m.EnumType | m.IdType | m.TextType):
        raise ExportError(f"{where}.{f.name}: the Quint export does not know type {f.type!r}")
    if isinstance(f.type, m.IdType) and "" in f.type.abstraction:
        raise ExportError(f"{where}.{f.name}: an id representative may not be empty")


def atom_text(compile_expr: Callable[[ex.Expr], str], e: ex.Expr) -> str:
    """``e`` compiled as an operand of ``and``/``implies``: a chain in brackets."""
    text = compile_expr(e)
    chained = isinstance(e, ex.BoolOp) or (" and " in text and not text.startswith("("))
    return f"({text})" if chained else text


def widen(a: m.FieldType, b: m.FieldType) -> m.FieldType:
    """Two value types under one event name: a plain string type holding both."""
    values: list[str] = []
    for t in (a, b):
        values += [v for v in (t.values if isinstance(t, m.EnumType) else ()) if v not in values]
        if isinstance(t, m.IdType):
            values += [v for v in t.abstraction if v not in values]
    return m.EnumType(f"{getattr(a, 'name', 'value')}|{getattr(b, 'name', 'value')}", tuple(values))
