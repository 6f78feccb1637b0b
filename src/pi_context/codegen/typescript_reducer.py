"""The reducer part of a generated TypeScript module: one function per event, one ``if`` per
row in table order, guards compiled with short-circuiting ``&&``/``||`` so that lazy facts
(which a host may supply as getters) are read at most once, only when a guard reaches them,
in spec order; plus the case tables and the helpers (optional-member accessors, ``same``,
``present``) the handlers use."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pi_context.codegen import typescript_names as ts
from pi_context.codegen.naming import pascal
from pi_context.codegen.typescript_input import lazy_check
from pi_context.spec import expr as ex
from pi_context.spec import model as m
from pi_context.spec.interpret import variant_fields


@dataclass
class _Ctx:
    """What the code being written reads: per event function, which of its parameters
    (``state``, ``event``) and ``facts`` and which lazy facts; for the module, the helpers,
    accessors and case tables (shared by every event's context)."""

    spec: m.Spec
    names: ts.Names
    uses: set[str] = field(default_factory=set)  # of "state", "event", "facts"
    lazy_used: list[str] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)  # module-level helpers needed
    accessors: set[tuple[str, str]] = field(default_factory=set)  # (axis, member)
    tables: list[str] = field(default_factory=list)  # module-level case tables


def _accessor_name(axis: str, member: str) -> str:
    return ts.camel(axis) + pascal(member)


def _optional_member(spec: m.Spec, target: ex.Target) -> bool:
    axis = spec.axis(target.name)
    return (
        isinstance(axis, m.VariantAxis)
        and target.member is not None
        and target.member != axis.tag
        and len(axis.carriers(target.member)) < len(axis.variants)
    )


def _ref(ctx: _Ctx, target: ex.Target) -> str:
    if target.text:  # a text is read trimmed (undefined when absent or empty)
        ctx.helpers.add("text")
        raw = _ref(ctx, ex.Target(target.kind, target.where, target.name, target.member))
        return f"text({raw})"
    if target.kind == "axis":
        ctx.uses.add("state")
        base = ts.member("state", target.name)
        if target.member is None:
            return base
        if _optional_member(ctx.spec, target):
            ctx.accessors.add((target.name, target.member))
            return f"{_accessor_name(target.name, target.member)}({base})"
        return ts.member(base, target.member)
    if target.kind == "field":
        ctx.uses.add("event")
        return ts.member("event", target.name)
    if target.kind == "fact":
        ctx.uses.add("facts")
        if target.lazy:
            if target.name not in ctx.lazy_used:
                ctx.lazy_used.append(target.name)
            return f"{_lazy_reader(target.name)}()"
        return ts.member("facts", target.name)
    raise ValueError(f"{target.kind} references cannot appear in a guard")


def _lazy_reader(name: str) -> str:
    return "read" + pascal(name)


def _lazy_cache(name: str) -> str:
    return ts.camel(name) + "Value"


def _may_be_absent(ctx: _Ctx, e: ex.Expr) -> bool:
    return isinstance(e, ex.Ref) and e.target is not None and _optional_member(ctx.spec, e.target)


def _guard(ctx: _Ctx, e: ex.Expr, parent: int = 0) -> str:
    # precedence: || = 1, && = 2, ! = 4, comparison = 3, atom = 5
    if isinstance(e, ex.Lit):
        return ("true" if e.value else "false") if isinstance(e.value, bool) else ts.q(e.value)
    if isinstance(e, ex.Ref):
        assert e.target is not None, "guard was not checked"
        if e.target.text:  # a condition asks whether the text is present
            read = f"{_ref(ctx, e.target)} !== undefined"
            return f"({read})" if parent > 0 else read
        return _ref(ctx, e.target)
    if isinstance(e, ex.Not):
        text, prec = f"!{_guard(ctx, e.operand, 4)}", 4
    elif isinstance(e, ex.BoolOp):
        prec = 1 if e.op == "or" else 2
        op = "||" if e.op == "or" else "&&"
        text = f"{_guard(ctx, e.left, prec)} {op} {_guard(ctx, e.right, prec + 1)}"
    elif isinstance(e, ex.Cmp):
        for side in (e.left, e.right):
            target = side.target if isinstance(side, ex.Ref) else None
            if target is not None and (
                target.kind == "state"
                or (
                    target.kind == "axis"
                    and target.member is None
                    and isinstance(ctx.spec.axis(target.name), m.VariantAxis)
                )
            ):
                raise ValueError("comparing whole variant values is not supported in guards")
        left, right = _guard(ctx, e.left, 5), _guard(ctx, e.right, 5)
        if _may_be_absent(ctx, e.left) or _may_be_absent(ctx, e.right):
            ctx.helpers.add("same")
            call = f"same({left}, {right})"
            return call if e.op == "==" else f"!{call}"
        prec = 3
        text = f"{left} {'===' if e.op == '==' else '!=='} {right}"
    else:
        assert isinstance(e, ex.In)
        operand = _guard(ctx, e.operand, 5)
        items = " || ".join(f"{operand} === {ts.q(str(i.value))}" for i in e.items)
        return f"({items})"
    return f"({text})" if prec < parent else text


def _value(ctx: _Ctx, e: ex.Expr) -> str:
    """A field value of a next state (a literal or a reference)."""
    if isinstance(e, ex.Lit):
        return _guard(ctx, e)
    assert isinstance(e, ex.Ref) and e.target is not None
    text = _ref(ctx, e.target)
    if e.target.text:
        return text
    if _optional_member(ctx.spec, e.target):
        ctx.helpers.add("present")
        return f"present({text})"
    return text


def _next_state(ctx: _Ctx, row: m.Row) -> str | None:
    """The next-state expression, or None when the row keeps the state."""
    if not row.next:
        return None
    parts: list[str] = []
    for axis in ctx.spec.axes:
        nv = row.next_for(axis.name)
        if nv is None:
            ctx.uses.add("state")
            value = ts.member("state", axis.name)
        elif isinstance(nv, m.NextLiteral):
            value = ts.q(nv.value)
        elif isinstance(nv, m.NextCase):
            ctx.uses.add("state")
            table = (row.id.replace(".", "_").replace("-", "_") + "_" + axis.name).upper()
            assert isinstance(axis, m.EnumAxis)
            mapping = dict(nv.mapping)
            axis_type = ctx.names.axis(axis.name)
            ctx.tables += [
                f"/** {row.id}: the next {axis.name} for each current one. */",
                f"const {table}: Readonly<Record<{axis_type}, {axis_type}>> = {{",
                *(f"  {ts.key(v)}: {ts.q(mapping.get(v, v))}," for v in axis.type.values),
                "};",
                "",
            ]
            value = f"{table}[{ts.member('state', axis.name)}]"
        else:
            assert isinstance(nv, m.NextVariant) and isinstance(axis, m.VariantAxis)
            members = [f"{ts.key(axis.tag)}: {ts.q(nv.tag)}"]
            for n, e in variant_fields(axis, nv):
                if isinstance(e, ex.Ref) and e.target is not None and e.target.text:
                    ctx.helpers.add("textMember")  # present only when given
                    members.append(f"...textMember({ts.q(n)}, {_value(ctx, e)})")
                else:
                    members.append(f"{ts.key(n)}: {_value(ctx, e)}")
            value = "{ " + ", ".join(members) + " }"
        parts.append(f"{ts.key(axis.name)}: {value}")
    return "{ " + ", ".join(parts) + " }"


def _handler(module: _Ctx, event: m.Event) -> list[str]:
    ctx = replace(module, uses=set(), lazy_used=[])  # its own reads; the module's helpers
    spec, names = ctx.spec, ctx.names
    body: list[str] = []
    unconditional = False
    for row in spec.rows_for(event.name):
        body.append(f"  // {row.id}: {' '.join(row.why.split())}")
        nxt = _next_state(ctx, row)
        if nxt is None:
            ctx.uses.add("state")
        carried = _carried(ctx, row)
        if isinstance(row.guard, ex.Lit) and row.guard.value is True:
            body += _return(nxt, row.effect, "  ", carried)
            unconditional = True
            break
        body.append(f"  if ({_guard(ctx, row.guard)}) {{")
        body += _return(nxt, row.effect, "    ", carried)
        body.append("  }")
    if not unconditional:
        body.append(f"  throw new Error({ts.q(f'no row of {spec.id} matches this {event.name}')});")
    head: list[str] = []
    if "facts" in ctx.uses or ctx.lazy_used:
        ctx.uses.add("event")
        head.append("  const facts = event.facts;")
    for name in (n for n in event.lazy_order if n in ctx.lazy_used):
        f = event.fact(name)
        assert f is not None
        cache = _lazy_cache(name)
        head.append(f"  let {cache}: {ts.type_of(spec, f.type)} | undefined;")
        head.append(
            f"  const {_lazy_reader(name)} = (): {ts.type_of(spec, f.type)} => "
            f"({cache} ??= {lazy_check(f, ts.member('facts', name))});"
        )
    state_param, event_param = (p if p in ctx.uses else f"_{p}" for p in ("state", "event"))
    lines = ts.comment(event.why)
    lines.append(
        f"function {handler_name(event)}({state_param}: {names.state}, "
        f"{event_param}: {ts.event_type(event)}): {names.result} {{"
    )
    if ctx.lazy_used:
        head.insert(1, "  // lazy facts: read at most once, only when a guard reaches them")
    return lines + head + body + ["}", ""]


def _carried(ctx: _Ctx, row: m.Row) -> list[str]:
    """The result members for what the row's effect carries (present only when given)."""
    out: list[str] = []
    for name, value in row.carry:
        ctx.helpers.add("textMember")
        out.append(f"...textMember({ts.q(name)}, {_value(ctx, value)})")
    return out


def _return(nxt: str | None, effect: str, indent: str, carried: list[str] = []) -> list[str]:  # noqa: B006
    if nxt is None and not carried:
        return [f"{indent}return {{ state, effect: {ts.q(effect)} }};"]
    state = "state" if nxt is None else f"state: {nxt}"
    one = f"{indent}return {{ {', '.join([state, f'effect: {ts.q(effect)}', *carried])} }};"
    if len(one) <= 100:
        return [one]
    return [
        f"{indent}return {{",
        f"{indent}  {state},",
        f"{indent}  effect: {ts.q(effect)},",
        *(f"{indent}  {c}," for c in carried),
        f"{indent}}};",
    ]


def handler_name(event: m.Event) -> str:
    return "on" + pascal(event.name)


def _helpers(shared: _Ctx) -> list[str]:
    spec, names = shared.spec, shared.names
    out: list[str] = []
    for axis_name, member in sorted(shared.accessors):
        axis = spec.axis(axis_name)
        assert isinstance(axis, m.VariantAxis)
        ftype = axis.field_type(member)
        assert ftype is not None
        carriers = " or ".join(f"`{c}`" for c in axis.carriers(member))
        out += [
            f"/** `{axis_name}.{member}`: present in {carriers}, otherwise absent. */",
            f"function {_accessor_name(axis_name, member)}(value: {names.axis(axis_name)}): "
            f"{ts.type_of(spec, ftype)} | undefined {{",
            f"  return {ts.q(member)} in value ? {ts.member('value', member)} : undefined;",
            "}",
            "",
        ]
    if "same" in shared.helpers:
        out += [
            "/** Spec equality: an absent field equals nothing, not even another absent one. */",
            "function same<T>(a: T | undefined, b: T | undefined): boolean {",
            "  return a !== undefined && b !== undefined && a === b;",
            "}",
            "",
        ]
    if "text" in shared.helpers:
        out += [
            "/** A text as the table keeps it: trimmed, absent when nothing remains. */",
            "function text(value: string | undefined): string | undefined {",
            "  const trimmed = value?.trim();",
            "  return trimmed ? trimmed : undefined;",
            "}",
            "",
        ]
    if "textMember" in shared.helpers:
        out += [
            "/** The member `name` holding `value` when it is present; nothing otherwise. */",
            "function textMember<K extends string>(",
            "  name: K,",
            "  value: string | undefined,",
            "): { readonly [P in K]?: string } {",
            "  const member = value === undefined ? {} : { [name]: value };",
            "  return member as { readonly [P in K]?: string };",
            "}",
            "",
        ]
    if "present" in shared.helpers:
        out += [
            "/** A field the table copies from the current phase (present whenever it does). */",
            "function present<T>(value: T | undefined): T {",
            "  if (value === undefined) {",
            f"    throw new Error({ts.q(spec.id + ': a row copied a field its phase lacks')});",
            "  }",
            "  return value;",
            "}",
            "",
        ]
    return out


def reducer_parts(spec: m.Spec, names: ts.Names) -> tuple[list[str], list[str]]:
    """(the case tables, the event functions and the helpers they use) of a module."""
    module = _Ctx(spec, names)
    functions: list[str] = []
    for event in spec.events:
        functions += _handler(module, event)
    return module.tables, functions + _helpers(module)
