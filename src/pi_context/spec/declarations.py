"""The declarations of a spec: its types, state axes, events and effects, each read from
its YAML node into the model, with every problem at its ``file:line:col``."""

from __future__ import annotations

import re

import yaml

from pi_context.spec.model import (
    BOOL,
    EVENT_SCOPES,
    HOST_ACTIONS,
    Axis,
    Effect,
    EnumAxis,
    EnumType,
    Event,
    Field,
    FieldType,
    IdType,
    TextType,
    Variant,
    VariantAxis,
)
from pi_context.spec.nodes import Ctx, Entries, Node

NamedTypes = EnumType | IdType | TextType


def parse_type(ctx: Ctx, name: str, knode: Node, node: Node) -> EnumType | IdType | TextType:
    m = ctx.keys(node, f"type {name}", ("kind",), ("values", "abstraction", "why"))
    kind = ctx.scalar(m["kind"][1], "kind")
    if kind == "enum":
        values = _listed(ctx, node, m, "values", f"type {name}", "an enum needs 'values'")
        return EnumType(name, values, why=ctx.why(m), loc=ctx.loc(knode))
    if kind == "id":
        missing = "an id type needs 'abstraction' representatives"
        reps = _listed(ctx, node, m, "abstraction", f"type {name}", missing)
        if len(reps) < 2:
            raise ctx.fail(m["abstraction"][1], f"type {name}: equality needs two representatives")
        return IdType(name, reps, why=ctx.why(m), loc=ctx.loc(knode))
    if kind == "text":
        if "values" in m:
            raise ctx.fail(m["values"][1], f"type {name}: a text has no values")
        reps = ("follow up",)
        if "abstraction" in m:
            reps = _listed(ctx, node, m, "abstraction", f"type {name}", "")
            if len(reps) != 1 or not reps[0].strip() or reps[0] != reps[0].strip():
                raise ctx.fail(
                    m["abstraction"][1],
                    f"type {name}: a text's abstraction is one trimmed, non-empty"
                    " representative of a present text",
                )
        return TextType(name, why=ctx.why(m), loc=ctx.loc(knode), representative=reps[0])
    raise ctx.fail(m["kind"][1], f"type {name}: unknown kind {kind!r} (enum, id, text)")


def _listed(ctx: Ctx, node: Node, m: Entries, key: str, what: str, missing: str) -> tuple[str, ...]:
    """The distinct names listed under ``key`` (at least one); ``missing`` is the message
    when there is no ``key``."""
    if key not in m:
        raise ctx.fail(node, f"{what}: {missing}")
    lnode = m[key][1]
    values = ctx.names(lnode, f"{what} {key}")
    if not values:
        raise ctx.fail(lnode, f"{what}: needs at least one value")
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise ctx.fail(lnode, f"{what}: duplicate value {v!r}")
        seen.add(v)
    return tuple(values)


def _field_type(ctx: Ctx, node: Node, types: dict[str, NamedTypes], what: str) -> FieldType:
    name = ctx.scalar(node, what)
    if name == "bool":
        return BOOL
    if name in types:
        return types[name]
    known = ", ".join(["bool", *types])
    raise ctx.fail(node, f"{what}: unknown type {name!r} (known: {known})")


def parse_axis(ctx: Ctx, name: str, knode: Node, node: Node, types: dict[str, NamedTypes]) -> Axis:
    m = ctx.keys(node, f"axis {name}", ("kind",), ("values", "tag", "variants", "why"))
    kind = ctx.scalar(m["kind"][1], "kind")
    if kind == "enum":
        values = _listed(ctx, node, m, "values", f"axis {name}", "an enum axis needs 'values'")
        return EnumAxis(name, EnumType(name, values), ctx.why(m), ctx.loc(knode))
    if kind == "variant":
        if "tag" not in m or "variants" not in m:
            raise ctx.fail(node, f"axis {name}: a variant axis needs 'tag' and 'variants'")
        tag = ctx.scalar(m["tag"][1], "tag")
        variants: list[Variant] = []
        for vname, (_key, vnode) in ctx.mapping(m["variants"][1], f"axis {name} variants").items():
            fields: list[Field] = []
            if isinstance(vnode, yaml.ScalarNode) and vnode.value in ("", "null", "~"):
                vmap: Entries = {}
            else:
                vmap = ctx.mapping(vnode, f"variant {vname}")
            for fname, (fk, fnode) in vmap.items():
                if fname == tag:
                    raise ctx.fail(fk, f"variant {vname}: field {fname!r} clashes with the tag")
                ftype = _field_type(ctx, fnode, types, f"variant {vname} field {fname}")
                fields.append(Field(fname, ftype, loc=ctx.loc(fk)))
            variants.append(Variant(vname, tuple(fields)))
        if not variants:
            raise ctx.fail(m["variants"][1], f"axis {name}: needs at least one variant")
        axis = VariantAxis(name, tag, tuple(variants), ctx.why(m), ctx.loc(knode))
        for fname in axis.field_names():
            _check_widening(ctx, knode, axis, fname)
        return axis
    raise ctx.fail(m["kind"][1], f"axis {name}: unknown kind {kind!r} (enum, variant)")


def _check_widening(ctx: Ctx, knode: Node, axis: VariantAxis, fname: str) -> None:
    """A field shared by variants has one type, or enum types (read across variants as their
    union)."""
    types = [f.type for v in axis.variants if (f := v.field(fname)) is not None]
    if all(t == types[0] for t in types) or all(isinstance(t, EnumType) for t in types):
        return
    raise ctx.fail(
        knode,
        f"axis {axis.name}: field {fname!r} has different types "
        "(only enumerations may differ between variants)",
    )


def parse_event(
    ctx: Ctx, name: str, knode: Node, node: Node, types: dict[str, NamedTypes]
) -> Event:
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~"):
        return Event(name, (), (), (), "", ctx.loc(knode))
    m = ctx.keys(
        node,
        f"event {name}",
        (),
        ("fields", "facts", "lazy_order", "lazy_order_fixed", "why", "scope", "trigger"),
    )
    groups: dict[str, list[Field]] = {"fields": [], "facts": []}
    for group in ("fields", "facts"):
        if group not in m:
            continue
        for fname, (fk, fnode) in ctx.mapping(m[group][1], f"event {name} {group}").items():
            fm = ctx.keys(fnode, f"{name}.{fname}", ("type",), ("lazy", "host", "why"))
            ftype = _field_type(ctx, fm["type"][1], types, f"{name}.{fname}")
            lazy = "lazy" in fm and ctx.scalar(fm["lazy"][1], "lazy").lower() == "true"
            if lazy and group == "fields":
                raise ctx.fail(fk, f"{name}.{fname}: only facts can be lazy")
            if lazy and ftype != BOOL:
                raise ctx.fail(fk, f"{name}.{fname}: a lazy fact must be a bool guard")
            if group == "facts" and isinstance(ftype, TextType):
                raise ctx.fail(fk, f"{name}.{fname}: a text is an event field, not a fact")
            host = _host(ctx, fm, f"{name}.{fname}", group)
            groups[group].append(Field(fname, ftype, ctx.why(fm), lazy, ctx.loc(fk), host))
    names = [f.name for f in groups["fields"]]
    for f in groups["facts"]:
        if f.name in names:
            raise ctx.fail(node, f"event {name}: {f.name!r} is both a field and a fact")
    hosts: dict[str, str] = {}
    for f in groups["facts"]:
        if f.host_fact in hosts:
            raise ctx.fail(
                m["facts"][1],
                f"event {name}: facts {hosts[f.host_fact]!r} and {f.name!r} both read the host "
                f"fact {f.host_fact!r}",
            )
        hosts[f.host_fact] = f.name
    lazy_facts = [f.name for f in groups["facts"] if f.lazy]
    order: list[str] = []
    if "lazy_order" in m:
        order = ctx.names(m["lazy_order"][1], f"event {name} lazy_order")
        if sorted(order) != sorted(lazy_facts) or len(set(order)) != len(order):
            raise ctx.fail(
                m["lazy_order"][1],
                f"event {name}: lazy_order must list each lazy fact once "
                f"(lazy facts: {', '.join(lazy_facts) or 'none'})",
            )
    elif lazy_facts:
        raise ctx.fail(node, f"event {name}: lazy facts need a 'lazy_order'")
    return Event(
        name,
        tuple(groups["fields"]),
        tuple(groups["facts"]),
        tuple(order),
        ctx.why(m),
        ctx.loc(knode),
        _lazy_order_fixed(ctx, m),
        _scope(ctx, name, m),
        _trigger(ctx, name, m),
    )


_TRIGGER = re.compile(r"/?[a-z][a-z0-9_-]*")
_HOST_FACT = re.compile(r"[a-z][a-z0-9_]*")


def _host(ctx: Ctx, fm: Entries, what: str, group: str) -> str:
    """``host: hard_reserve_due``: the host fact a fact reads, where the spec names it
    differently (a snake-case identifier; facts only)."""
    if "host" not in fm:
        return ""
    node = fm["host"][1]
    if group == "fields":
        raise ctx.fail(node, f"{what}: only facts name a host fact")
    host = ctx.scalar(node, f"{what} host")
    if not _HOST_FACT.fullmatch(host):
        raise ctx.fail(node, f"{what}: host fact {host!r} is not a snake-case identifier")
    return host


def _trigger(ctx: Ctx, name: str, m: Entries) -> str:
    """``trigger: clear_memory`` (the model's tool) or ``trigger: /clear-memory`` (the user's
    command): the host's name for what raises the event."""
    if "trigger" not in m:
        return ""
    trigger = ctx.scalar(m["trigger"][1], f"event {name} trigger")
    if not _TRIGGER.fullmatch(trigger):
        raise ctx.fail(
            m["trigger"][1],
            f"event {name}: trigger {trigger!r} is neither a tool name (clear_memory) nor a "
            "command (/clear-memory)",
        )
    return trigger


def _scope(ctx: Ctx, name: str, m: Entries) -> str:
    """``scope: reducer`` (the default) or ``scope: extension`` (decided upstream by the
    extension's hooks around the reducer, not by the reducer)."""
    if "scope" not in m:
        return "reducer"
    scope = ctx.scalar(m["scope"][1], f"event {name} scope")
    if scope not in EVENT_SCOPES:
        raise ctx.fail(
            m["scope"][1], f"event {name}: scope {scope!r} is not one of: {', '.join(EVENT_SCOPES)}"
        )
    return scope


def _lazy_order_fixed(ctx: Ctx, m: Entries) -> bool:
    """``lazy_order_fixed: false`` lets the guards alone decide the consultation order."""
    if "lazy_order_fixed" not in m:
        return True
    node = m["lazy_order_fixed"][1]
    return ctx.flag(node, "lazy_order_fixed", "lazy_order_fixed must be true or false")


def parse_effect(
    ctx: Ctx, name: str, knode: Node, node: Node, types: dict[str, NamedTypes] | None = None
) -> Effect:
    """``name: meaning`` or ``name: {meaning: ..., host: ACTION, duplicate: BOOL, carries:
    {FIELD: {type: TEXT, why: ...}}}``."""
    if isinstance(node, yaml.ScalarNode):
        return Effect(name, ctx.scalar(node, f"effect {name}"), ctx.loc(knode))
    m = ctx.keys(node, f"effect {name}", ("meaning", "host"), ("duplicate", "carries"))
    host = ctx.scalar(m["host"][1], f"effect {name} host")
    if host not in HOST_ACTIONS:
        raise ctx.fail(
            m["host"][1],
            f"effect {name}: unknown host action {host!r} (one of: {', '.join(HOST_ACTIONS)})",
        )
    duplicate = False
    if "duplicate" in m:
        duplicate = ctx.flag(
            m["duplicate"][1],
            f"effect {name} duplicate",
            f"effect {name}: duplicate must be true or false",
        )
        if duplicate and host != "acknowledge":
            raise ctx.fail(
                m["duplicate"][1],
                f"effect {name}: only an acknowledged request can be a duplicate "
                f"(its host action is {host!r})",
            )
    carries: list[Field] = []
    if "carries" in m:
        for fname, (fk, fnode) in ctx.mapping(m["carries"][1], f"effect {name} carries").items():
            fm = ctx.keys(fnode, f"effect {name} carries {fname}", ("type",), ("why",))
            ftype = _field_type(ctx, fm["type"][1], types or {}, f"effect {name} carries {fname}")
            if not isinstance(ftype, TextType):
                raise ctx.fail(
                    fm["type"][1], f"effect {name} carries {fname}: only a text can be carried"
                )
            carries.append(Field(fname, ftype, ctx.why(fm), False, ctx.loc(fk)))
    return Effect(
        name,
        ctx.scalar(m["meaning"][1], f"effect {name} meaning"),
        ctx.loc(knode),
        host,
        duplicate,
        tuple(carries),
    )
