"""The table of a spec: its initial state and its rows (each row's event, guard, effect,
cause and next values), read from YAML and checked against the declarations."""

from __future__ import annotations

import yaml

from pi_context.spec import expr as ex
from pi_context.spec import model as md
from pi_context.spec import scope as sc
from pi_context.spec.nodes import Ctx, Node, check_expr, expr_loc, parse_expr


def parse_initial(ctx: Ctx, spec: md.Spec, node: Node) -> dict[str, object]:
    m = ctx.mapping(node, "initial")
    out: dict[str, object] = {}
    for axis in spec.axes:
        if axis.name not in m:
            raise ctx.fail(node, f"initial: missing axis {axis.name!r}")
        vnode = m[axis.name][1]
        if isinstance(axis, md.EnumAxis):
            value = ctx.scalar(vnode, f"initial {axis.name}")
            if value not in axis.type.values:
                raise ctx.fail(vnode, f"initial: {value!r} is not a value of {axis.name}")
            out[axis.name] = value
        else:
            vm = ctx.mapping(vnode, f"initial {axis.name}")
            if axis.tag not in vm:
                raise ctx.fail(vnode, f"initial {axis.name}: missing {axis.tag!r}")
            tag = ctx.scalar(vm[axis.tag][1], axis.tag)
            variant = axis.variant(tag)
            if variant is None:
                raise ctx.fail(vm[axis.tag][1], f"initial: unknown {axis.name} variant {tag!r}")
            if variant.fields or len(vm) != 1:
                raise ctx.fail(vnode, f"initial {axis.name}: must be a variant without fields")
            out[axis.name] = {axis.tag: tag}
    for key, (knode, _) in m.items():
        if spec.axis(key) is None:
            raise ctx.fail(knode, f"initial: unknown axis {key!r}")
    return out


def parse_rows(ctx: Ctx, spec: md.Spec, node: Node) -> list[md.Row]:
    rows: list[md.Row] = []
    ids: set[str] = set()
    for rnode in ctx.seq(node, "rows"):
        m = ctx.keys(
            rnode, "row", ("id", "on", "when", "effect", "why"), ("next", "cause", "carry")
        )
        rid = ctx.scalar(m["id"][1], "row id")
        if rid in ids:
            ctx.error(m["id"][1], f"duplicate row id {rid!r}")
            continue
        ids.add(rid)
        event_name = ctx.scalar(m["on"][1], f"row {rid}: on")
        event = spec.event(event_name)
        if event is None:
            known = ", ".join(e.name for e in spec.events)
            ctx.error(m["on"][1], f"row {rid}: unknown event {event_name!r} (events: {known})")
            continue
        effect = ctx.scalar(m["effect"][1], f"row {rid}: effect")
        declared = spec.effect(effect)
        if declared is None:
            known = ", ".join(e.name for e in spec.effects)
            ctx.error(m["effect"][1], f"row {rid}: unknown effect {effect!r} (effects: {known})")
        cause = _cause(ctx, spec, rid, m["cause"][1]) if "cause" in m else None
        if declared is not None and declared.commits and cause is None:
            ctx.error(
                rnode,
                f"row {rid}: effect {effect!r} commits a boundary, so the row needs a 'cause' "
                "(what the user is told caused it)",
            )
        elif declared is not None and not declared.commits and cause is not None:
            ctx.error(
                m["cause"][0],
                f"row {rid}: only a row whose effect commits a boundary has a cause "
                f"({effect!r} commits nothing)",
            )
        guard, text = parse_expr(ctx, m["when"][1], f"row {rid} guard")
        scope = sc.Scope(spec, ("cur",), (event,))
        check_expr(ctx, m["when"][1], guard, scope, f"row {rid} guard")
        nexts: list[tuple[str, md.NextValue]] = []
        # An extension's decision may still move the reducer's state the way the extension
        # does around it (0.25.1's /wipe-memory handler clears the control); a spec that says
        # its hook only reads the state states so as an invariant (0.34's provider_context).
        if "next" in m:
            for aname, (ak, anode) in ctx.mapping(m["next"][1], f"row {rid}: next").items():
                axis = spec.axis(aname)
                if axis is None:
                    ctx.error(ak, f"row {rid}: unknown axis {aname!r} in next")
                    continue
                nv = _next_value(ctx, spec, event, rid, axis, anode)
                if nv is not None:
                    nexts.append((aname, nv))
        carry = _carry(ctx, spec, event, rid, declared, m["carry"][1]) if "carry" in m else ()
        rows.append(
            md.Row(
                rid,
                event_name,
                guard,
                text,
                tuple(nexts),
                effect,
                ctx.why(m),
                ctx.loc(rnode),
                cause,
                carry,
            )
        )
    for event in spec.events:
        if not any(r.event == event.name for r in rows) and not ctx.diagnostics:
            loc = event.loc or md.Loc(ctx.file, 1, 1)
            ctx.error(loc, f"event {event.name!r} has no rows")
    return rows


def _cause(ctx: Ctx, spec: md.Spec, rid: str, node: Node) -> md.Cause:
    """``cause: TEXT`` or ``cause: {by: AXIS[.FIELD], cases: {VALUE: TEXT, ...}, otherwise:
    TEXT}`` (``otherwise`` is optional)."""
    what = f"row {rid}: cause"
    if isinstance(node, yaml.ScalarNode):
        text = ctx.scalar(node, what).strip()
        if not text:
            raise ctx.fail(node, f"{what} must not be empty")
        return md.Cause(text)
    m = ctx.keys(node, what, ("by", "cases"), ("otherwise",))
    by = ctx.scalar(m["by"][1], f"{what} by")
    axis_name, _, member = by.partition(".")
    axis = spec.axis(axis_name)
    values: tuple[str, ...]
    if isinstance(axis, md.EnumAxis) and not member:
        values = axis.type.values
    elif isinstance(axis, md.VariantAxis) and member:
        ftype = axis.field_type(member)
        if not isinstance(ftype, md.EnumType):
            raise ctx.fail(
                m["by"][1], f"{what}: {by!r} is not an enumerated field of axis {axis_name!r}"
            )
        values = ftype.values
    else:
        raise ctx.fail(
            m["by"][1],
            f"{what}: by must name an enum axis or a variant axis field (AXIS.FIELD), got {by!r}",
        )
    cases: list[tuple[str, str]] = []
    for value, (vk, vnode) in ctx.mapping(m["cases"][1], f"{what} cases").items():
        if value not in values:
            raise ctx.fail(vk, f"{what}: {value!r} is not a value of {by} ({', '.join(values)})")
        text = ctx.scalar(vnode, f"{what} {value}").strip()
        if not text:
            raise ctx.fail(vnode, f"{what} {value} must not be empty")
        cases.append((value, text))
    if not cases:
        raise ctx.fail(m["cases"][1], f"{what}: cases needs at least one value")
    otherwise = None
    if "otherwise" in m:
        otherwise = ctx.scalar(m["otherwise"][1], f"{what} otherwise").strip()
        if not otherwise:
            raise ctx.fail(m["otherwise"][1], f"{what} otherwise must not be empty")
    return md.Cause(axis=axis_name, member=member or None, cases=tuple(cases), otherwise=otherwise)


def _next_value(
    ctx: Ctx, spec: md.Spec, event: md.Event, rid: str, axis: md.Axis, node: Node
) -> md.NextValue | None:
    what = f"row {rid}: next {axis.name}"
    if isinstance(axis, md.EnumAxis):
        values = axis.type.values
        if isinstance(node, yaml.ScalarNode):
            if node.value not in values:
                ctx.error(node, f"{what}: {node.value!r} is not a value of {axis.name}")
                return None
            return md.NextLiteral(node.value)
        m = ctx.keys(node, what, ("case",))
        pairs: list[tuple[str, str]] = []
        for src, (sk, snode) in ctx.mapping(m["case"][1], f"{what} case").items():
            dst = ctx.scalar(snode, f"{what} case")
            for v, n in ((src, sk), (dst, snode)):
                if v not in values:
                    ctx.error(n, f"{what}: {v!r} is not a value of {axis.name}")
                    return None
            pairs.append((src, dst))
        return md.NextCase(tuple(pairs))
    m = ctx.mapping(node, what)
    if axis.tag not in m:
        ctx.error(node, f"{what}: missing {axis.tag!r}")
        return None
    tag = ctx.scalar(m[axis.tag][1], axis.tag)
    variant = axis.variant(tag)
    if variant is None:
        known = ", ".join(v.tag for v in axis.variants)
        ctx.error(m[axis.tag][1], f"{what}: unknown variant {tag!r} ({known})")
        return None
    fields: list[tuple[str, ex.Expr]] = []
    for fname, (fk, fnode) in m.items():
        if fname == axis.tag:
            continue
        f = variant.field(fname)
        if f is None:
            ctx.error(fk, f"{what}: variant {tag!r} has no field {fname!r}")
            continue
        if (
            isinstance(f.type, md.EnumType)
            and isinstance(fnode, yaml.ScalarNode)
            and fnode.value in f.type.values
        ):
            fields.append((fname, ex.Lit(str(fnode.value), 0)))
            continue
        value, _text = parse_expr(ctx, fnode, f"{what}.{fname}")
        scope = sc.Scope(spec, ("cur",), (event,), lazy_facts=False)
        try:
            vtype = sc.check(value, scope)
        except ex.ExprError as err:
            ctx.error(expr_loc(ctx, fnode, err.offset), f"{what}.{fname}: {err.message}")
            continue
        if isinstance(f.type, md.TextType):
            ok = isinstance(value, ex.Ref) and _is_text(vtype, f.type)
        elif isinstance(value, ex.Lit):
            ok = isinstance(f.type, md.EnumType) and value.value in f.type.values
        else:
            # An optional field is accepted here; the table analysis proves it is present
            # whenever the row fires.
            ok = isinstance(value, ex.Ref) and (
                vtype == f.type or (isinstance(vtype, sc.OptType) and vtype.inner == f.type)
            )
        if not ok:
            ctx.error(fnode, f"{what}.{fname}: needs a {_type_name(f.type)} value")
            continue
        fields.append((fname, value))
    # A text the row does not give is absent in the new variant.
    missing = [
        f.name
        for f in variant.fields
        if f.name not in dict(fields) and f.name not in m and not isinstance(f.type, md.TextType)
    ]
    if missing:
        ctx.error(node, f"{what}: variant {tag!r} needs {', '.join(missing)}")
        return None
    return md.NextVariant(tag, tuple(fields))


def _is_text(vtype: sc.Type, wanted: md.TextType) -> bool:
    """A reference of the text type ``wanted`` (an optional member included)."""
    inner = vtype.inner if isinstance(vtype, sc.OptType) else vtype
    return inner == wanted


def _carry(
    ctx: Ctx,
    spec: md.Spec,
    event: md.Event,
    rid: str,
    effect: md.Effect | None,
    node: Node,
) -> tuple[tuple[str, ex.Expr], ...]:
    """``carry: {FIELD: PATH}``: where each value the row's effect carries comes from (a
    text of the current state or of the event)."""
    out: list[tuple[str, ex.Expr]] = []
    for fname, (fk, fnode) in ctx.mapping(node, f"row {rid}: carry").items():
        declared = next((f for f in effect.carries if f.name == fname), None) if effect else None
        if declared is None or not isinstance(declared.type, md.TextType):
            carried = ", ".join(f.name for f in effect.carries) if effect else ""
            ctx.error(
                fk,
                f"row {rid}: carry: its effect carries no {fname!r} "
                f"(it carries: {carried or 'nothing'})",
            )
            continue
        value, _text = parse_expr(ctx, fnode, f"row {rid}: carry {fname}")
        scope = sc.Scope(spec, ("cur",), (event,), lazy_facts=False)
        try:
            vtype = sc.check(value, scope)
        except ex.ExprError as err:
            ctx.error(expr_loc(ctx, fnode, err.offset), f"row {rid}: carry {fname}: {err.message}")
            continue
        if (
            not isinstance(value, ex.Ref)
            or not _is_text(vtype, declared.type)
            or value.target is None
            or value.target.kind != "axis"
        ):
            ctx.error(
                fnode,
                f"row {rid}: carry {fname}: needs a {declared.type.name} text of the current state",
            )
            continue
        out.append((fname, value))
    return tuple(out)


def _type_name(t: md.FieldType) -> str:
    if isinstance(t, md.EnumType):
        return f"{t.name} ({' | '.join(t.values)})"
    return t.name
