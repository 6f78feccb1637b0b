"""Type-checking a guard expression against a spec: the types a path can have, the names
in scope where the expression stands, and ``check``, which resolves every reference."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pi_context.spec.expr import BoolOp, Cmp, Expr, ExprError, Lit, Not, Ref, Target
from pi_context.spec.model import (
    BOOL,
    BoolType,
    EnumAxis,
    EnumType,
    Event,
    FieldType,
    IdType,
    Spec,
    TextType,
    VariantAxis,
)


@dataclass(frozen=True)
class OptType:
    """A variant field some variants lack."""

    inner: FieldType


@dataclass(frozen=True)
class VariantValueType:
    axis: VariantAxis


@dataclass(frozen=True)
class StateType:
    pass


@dataclass(frozen=True)
class StrLitType:
    pass


Type = BoolType | EnumType | IdType | TextType | OptType | VariantValueType | StateType | StrLitType


def is_condition(t: Type) -> bool:
    """A bool, or an optional text (read as whether it is present)."""
    return isinstance(t, BoolType) or isinstance(_strip(t), TextType)


@dataclass
class Scope:
    spec: Spec
    states: tuple[str, ...]  # "cur" (bare axes) or ("pre", "post")
    events: tuple[Event, ...]  # payload/facts resolve against all of these
    allow_effect: bool = False
    allow_event_type: bool = False
    lazy_facts: bool = True  # guards: lazy facts are consulted lazily
    used_facts: list[str] = field(default_factory=list)

    def resolve(self, ref: Ref) -> tuple[Target, Type]:
        path = ref.path
        head = path[0]
        if self.states == ("cur",) and self.spec.axis(head) is not None:
            return self._axis("cur", path, ref)
        if head in self.states and self.states != ("cur",):
            if len(path) == 1:
                return Target("state", where=head), StateType()
            return self._axis(head, path[1:], ref)
        if head == "effect" and self.allow_effect and len(path) == 1:
            return Target("effect"), self.spec.effect_type
        if head == "event" and len(path) == 2:
            if path[1] == "type" and self.allow_event_type:
                return Target("event_type"), self.spec.event_type
            return self._payload("field", path[1], ref)
        if head == "facts" and len(path) == 2:
            return self._payload("fact", path[1], ref)
        raise ExprError(f"unknown name {'.'.join(path)!r}{self._hint()}", ref.offset)

    def _hint(self) -> str:
        names: list[str] = []
        if self.states == ("cur",):
            names += [a.name for a in self.spec.axes]
        else:
            names += list(self.states)
        if self.allow_effect:
            names.append("effect")
        if self.events:
            names += ["event.<field>", "facts.<fact>"]
        if self.allow_event_type:
            names.append("event.type")
        return f" (known here: {', '.join(names)})"

    def _axis(self, where: str, path: tuple[str, ...], ref: Ref) -> tuple[Target, Type]:
        axis = self.spec.axis(path[0])
        if axis is None:
            known = ", ".join(a.name for a in self.spec.axes)
            raise ExprError(f"unknown state axis {path[0]!r} (axes: {known})", ref.offset)
        if len(path) == 1:
            if isinstance(axis, EnumAxis):
                return Target("axis", where, axis.name), axis.type
            return Target("axis", where, axis.name), VariantValueType(axis)
        if isinstance(axis, EnumAxis) or len(path) > 2:
            raise ExprError(f"{'.'.join(path)!r}: {axis.name} has no members", ref.offset)
        member = path[1]
        if member == axis.tag:
            return Target("axis", where, axis.name, member), axis.tag_type
        ftype = axis.field_type(member)
        if ftype is None:
            known = ", ".join((axis.tag, *axis.field_names()))
            raise ExprError(f"{axis.name} has no field {member!r} (fields: {known})", ref.offset)
        opt: Type = ftype if len(axis.carriers(member)) == len(axis.variants) else OptType(ftype)
        return Target("axis", where, axis.name, member), opt

    def _payload(self, kind: Literal["field", "fact"], name: str, ref: Ref) -> tuple[Target, Type]:
        if not self.events:
            raise ExprError(f"no event payload is in scope for {kind} {name!r}", ref.offset)
        found: FieldType | None = None
        lazy = False
        for event in self.events:
            f = event.field(name) if kind == "field" else event.fact(name)
            if f is None:
                where = "payload field" if kind == "field" else "fact"
                raise ExprError(f"event {event.name!r} has no {where} {name!r}", ref.offset)
            if found is not None and found != f.type:
                raise ExprError(f"{kind} {name!r} has different types across events", ref.offset)
            found = f.type
            lazy = lazy or f.lazy
        assert found is not None
        if kind == "fact" and name not in self.used_facts:
            self.used_facts.append(name)
        return Target(kind, name=name, lazy=lazy and self.lazy_facts), found


def _describe(t: Type) -> str:
    if isinstance(t, BoolType):
        return "bool"
    if isinstance(t, EnumType):
        return f"{t.name} ({' | '.join(t.values)})"
    if isinstance(t, IdType):
        return f"{t.name} id"
    if isinstance(t, TextType):
        return f"{t.name} text"
    if isinstance(t, OptType):
        return f"optional {_describe(t.inner)}"
    if isinstance(t, VariantValueType):
        return f"{t.axis.name} value"
    if isinstance(t, StateType):
        return "state"
    return "string literal"


def _strip(t: Type) -> Type:
    return t.inner if isinstance(t, OptType) else t


def check(expr: Expr, scope: Scope) -> Type:
    """Type-check ``expr`` in ``scope``; resolve its references. Raises ExprError."""
    if isinstance(expr, Lit):
        return BOOL if isinstance(expr.value, bool) else StrLitType()
    if isinstance(expr, Ref):
        target, t = scope.resolve(expr)
        if isinstance(_strip(t), TextType):
            target = Target(
                target.kind, target.where, target.name, target.member, target.lazy, text=True
            )
        expr.target = target
        return t
    if isinstance(expr, Not):
        _want_bool(expr.operand, scope, "'not'")
        return BOOL
    if isinstance(expr, BoolOp):
        _want_bool(expr.left, scope, f"'{expr.op}'")
        _want_bool(expr.right, scope, f"'{expr.op}'")
        return BOOL
    if isinstance(expr, Cmp):
        lt, rt = check(expr.left, scope), check(expr.right, scope)
        _comparable(lt, expr.left, rt, expr.right, expr.offset)
        return BOOL
    # In
    ot = _strip(check(expr.operand, scope))
    if not isinstance(ot, EnumType):
        raise ExprError(f"'in' needs an enumeration, not {_describe(ot)}", expr.offset)
    for item in expr.items:
        assert isinstance(item.value, str)
        if item.value not in ot.values:
            raise ExprError(f"{item.value!r} is not a value of {_describe(ot)}", item.offset)
    return BOOL


def _want_bool(expr: Expr, scope: Scope, what: str) -> None:
    t = check(expr, scope)
    if not is_condition(t):
        raise ExprError(f"{what} needs a bool, not {_describe(t)}", expr.offset)


def _comparable(lt: Type, left: Expr, rt: Type, right: Expr, offset: int) -> None:
    if isinstance(lt, StrLitType) and isinstance(rt, StrLitType):
        raise ExprError("comparing two literals is constant", offset)
    if isinstance(lt, StrLitType):
        lt, rt, left, right = rt, lt, right, left
    base = _strip(lt)
    if isinstance(rt, StrLitType):
        assert isinstance(right, Lit) and isinstance(right.value, str)
        if not isinstance(base, EnumType):
            raise ExprError(
                f"cannot compare {_describe(lt)} with the string {right.value!r}", offset
            )
        if right.value not in base.values:
            raise ExprError(f"{right.value!r} is not a value of {_describe(base)}", right.offset)
        return
    other = _strip(rt)
    same = (
        (isinstance(base, BoolType) and isinstance(other, BoolType))
        or (
            isinstance(base, EnumType)
            and isinstance(other, EnumType)
            and base.values == other.values
        )
        or (isinstance(base, IdType) and isinstance(other, IdType) and base.name == other.name)
        or (
            isinstance(base, VariantValueType)
            and isinstance(other, VariantValueType)
            and base.axis.name == other.axis.name
        )
        or (isinstance(base, StateType) and isinstance(other, StateType))
    )
    if not same:
        raise ExprError(f"cannot compare {_describe(lt)} with {_describe(rt)}", offset)
