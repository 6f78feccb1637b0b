"""Generate the TypeScript binding of each spec: one readable module per spec exporting the
seeds' API (``initialResetControl``, ``reduceResetControl`` and the state, event and effect
types in their wire shapes), plus an index the protocol adapter uses.

The reducer mirrors the spec table: one function per event, one ``if`` per row in table order,
guards compiled with short-circuiting ``&&``/``||`` so that lazy facts (which a host may
supply as getters) are read at most once, only when a guard reaches them, in spec order. A
variant field the current phase lacks is *absent* and equals nothing, as in the spec.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pi_context.spec import expr as ex
from pi_context.spec.model import (
    BOOL,
    HOST_ACTIONS,
    EnumAxis,
    EnumType,
    Event,
    FieldType,
    IdType,
    NextCase,
    NextLiteral,
    NextVariant,
    Row,
    Spec,
    VariantAxis,
)
from pi_context.statemachine.codegen.naming import pascal
from pi_context.statemachine.codegen.typescript_input import input_checks, lazy_check
from pi_context.statemachine.codegen.typescript_package import (
    PACKAGE_NAME,
    export_path,
    package_json,
)

OUT_DIR = "bindings-ts/generated"
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def module_file(spec: Spec) -> str:
    return f"{spec.name}-{spec.version}.ts"


def typescript_outputs(specs: list[Spec]) -> dict[str, str]:
    """Path (relative to the checkout) -> content, for `pi-context generate`."""
    out = {f"{OUT_DIR}/{module_file(spec)}": typescript_module(spec) for spec in specs}
    out[f"{OUT_DIR}/index.ts"] = index_module(specs)
    stems = {spec.id: module_file(spec).removesuffix(".ts") for spec in specs}
    out["bindings-ts/package.json"] = package_json(specs, stems)
    return out


# ---------------------------------------------------------------- names


def _effect_hosts(spec: Spec, names: _Names) -> list[str]:
    """What the host does for each effect, as the spec declares it (null: undeclared)."""
    out = [
        "/** What a host does for an effect (see the spec's effects table). */",
        "export type HostAction = " + " | ".join(_q(h) for h in HOST_ACTIONS) + ";",
        "",
        "/** The host action of each effect, as the spec declares it. */",
        f"export const EFFECT_HOST: Readonly<Record<{names.effect}, HostAction | null>> = {{",
    ]
    out += [f"  {_q(e.name)}: {_q(e.host) if e.host else 'null'}," for e in spec.effects]
    return [*out, "};", ""]


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _key(name: str) -> str:
    return name if _IDENT.fullmatch(name) else _q(name)


def _member(obj: str, name: str) -> str:
    return f"{obj}.{name}" if _IDENT.fullmatch(name) else f"{obj}[{_q(name)}]"


def _camel(name: str) -> str:
    p = pascal(name)
    return p[:1].lower() + p[1:]


@dataclass(frozen=True)
class _Names:
    prefix: str  # "ResetControl"

    @property
    def state(self) -> str:
        return f"{self.prefix}State"

    @property
    def event(self) -> str:
        return f"{self.prefix}Event"

    @property
    def effect(self) -> str:
        return f"{self.prefix}Effect"

    @property
    def result(self) -> str:
        return f"{self.prefix}Result"

    def axis(self, name: str) -> str:
        return f"{self.prefix}{pascal(name)}"


def _comment(text: str, indent: str = "") -> list[str]:
    text = " ".join(text.split())
    return [f"{indent}/** {text} */"] if text else []


# ---------------------------------------------------------------- types


def _type(spec: Spec, t: FieldType) -> str:
    if t == BOOL:
        return "boolean"
    assert isinstance(t, EnumType | IdType)
    if any(d.name == t.name for d in spec.types):
        return pascal(t.name)
    if isinstance(t, EnumType):
        return " | ".join(_q(v) for v in t.values)
    return "string"


def _types(spec: Spec, names: _Names) -> list[str]:
    out: list[str] = []
    for decl in spec.types:
        out += _comment(decl.why)
        if isinstance(decl, IdType):
            out.append(f"export type {pascal(decl.name)} = string;")
        else:
            out.append(
                f"export type {pascal(decl.name)} = {' | '.join(_q(v) for v in decl.values)};"
            )
        out.append("")
    for axis in spec.axes:
        out += _comment(axis.why)
        if isinstance(axis, EnumAxis):
            values = " | ".join(_q(v) for v in axis.type.values)
            out.append(f"export type {names.axis(axis.name)} = {values};")
        else:
            out.append(f"export type {names.axis(axis.name)} =")
            for variant in axis.variants:
                members = [f"readonly {_key(axis.tag)}: {_q(variant.tag)}"]
                members += [
                    f"readonly {_key(f.name)}: {_type(spec, f.type)}" for f in variant.fields
                ]
                out.append(f"  | {{ {'; '.join(members)} }}")
            out[-1] += ";"
        out.append("")
    out.append(f"/** One {spec.name} state (its wire shape). */")
    out.append(f"export interface {names.state} {{")
    for axis in spec.axes:
        out.append(f"  readonly {_key(axis.name)}: {names.axis(axis.name)};")
    out += ["}", ""]
    for event in spec.events:
        if event.facts:
            out += _comment(f"The facts of {event.name}. " + _lazy_note(event))
            out.append(f"export interface {_facts_type(event)} {{")
            for f in event.facts:
                out += _comment(f.why + (" (lazy)" if f.lazy else ""), "  ")
                out.append(f"  readonly {_key(f.name)}: {_type(spec, f.type)};")
            out += ["}", ""]
        out += _comment(event.why)
        out.append(f"export interface {_event_type(event)} {{")
        out.append(f"  readonly type: {_q(event.name)};")
        for f in event.fields:
            out += _comment(f.why, "  ")
            out.append(f"  readonly {_key(f.name)}: {_type(spec, f.type)};")
        if event.facts:
            out.append(f"  readonly facts: {_facts_type(event)};")
        out += ["}", ""]
    out.append(f"export type {names.event} =")
    for event in spec.events:
        out.append(f"  | {_event_type(event)}")
    out[-1] += ";"
    out.append("")
    for effect in spec.effects:
        out.append(f"// {effect.name}: {' '.join(effect.meaning.split())}")
    out.append(f"export type {names.effect} =")
    for effect in spec.effects:
        out.append(f"  | {_q(effect.name)}")
    out[-1] += ";"
    out.append("")
    out.append("/** The next state and the one named effect the host performs. */")
    out.append(f"export interface {names.result} {{")
    out.append(f"  readonly state: {names.state};")
    out.append(f"  readonly effect: {names.effect};")
    out += ["}", ""]
    return out


def _lazy_note(event: Event) -> str:
    if not event.lazy_order:
        return ""
    return (
        "Lazy facts may be getters: each is read at most once, only on a branch that needs "
        f"it, in the order {', '.join(event.lazy_order)}."
    )


def _facts_type(event: Event) -> str:
    return pascal(event.name) + "Facts"


def _event_type(event: Event) -> str:
    return pascal(event.name) + "Event"


# ---------------------------------------------------------------- reducer


@dataclass
class _Ctx:
    spec: Spec
    names: _Names
    event: Event
    uses_state: bool = False
    uses_event: bool = False
    uses_facts: bool = False
    lazy_used: list[str] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)  # module-level helpers needed
    accessors: set[tuple[str, str]] = field(default_factory=set)  # (axis, member)
    tables: list[str] = field(default_factory=list)  # module-level case tables


def _accessor_name(axis: str, member: str) -> str:
    return _camel(axis) + pascal(member)


def _optional_member(spec: Spec, target: ex.Target) -> bool:
    axis = spec.axis(target.name)
    return (
        isinstance(axis, VariantAxis)
        and target.member is not None
        and target.member != axis.tag
        and len(axis.carriers(target.member)) < len(axis.variants)
    )


def _ref(ctx: _Ctx, target: ex.Target) -> str:
    if target.kind == "axis":
        ctx.uses_state = True
        base = _member("state", target.name)
        if target.member is None:
            return base
        if _optional_member(ctx.spec, target):
            ctx.accessors.add((target.name, target.member))
            return f"{_accessor_name(target.name, target.member)}({base})"
        return _member(base, target.member)
    if target.kind == "field":
        ctx.uses_event = True
        return _member("event", target.name)
    if target.kind == "fact":
        ctx.uses_facts = True
        if target.lazy:
            if target.name not in ctx.lazy_used:
                ctx.lazy_used.append(target.name)
            return f"{_lazy_reader(target.name)}()"
        return _member("facts", target.name)
    raise ValueError(f"{target.kind} references cannot appear in a guard")


def _lazy_reader(name: str) -> str:
    return "read" + pascal(name)


def _lazy_cache(name: str) -> str:
    return _camel(name) + "Value"


def _may_be_absent(ctx: _Ctx, e: ex.Expr) -> bool:
    return isinstance(e, ex.Ref) and e.target is not None and _optional_member(ctx.spec, e.target)


def _guard(ctx: _Ctx, e: ex.Expr, parent: int = 0) -> str:
    # precedence: || = 1, && = 2, ! = 4, comparison = 3, atom = 5
    if isinstance(e, ex.Lit):
        return ("true" if e.value else "false") if isinstance(e.value, bool) else _q(e.value)
    if isinstance(e, ex.Ref):
        assert e.target is not None, "guard was not checked"
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
                    and isinstance(ctx.spec.axis(target.name), VariantAxis)
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
        items = " || ".join(f"{operand} === {_q(str(i.value))}" for i in e.items)
        return f"({items})"
    return f"({text})" if prec < parent else text


def _value(ctx: _Ctx, e: ex.Expr) -> str:
    """A field value of a next state (a literal or a reference)."""
    if isinstance(e, ex.Lit):
        return _guard(ctx, e)
    assert isinstance(e, ex.Ref) and e.target is not None
    text = _ref(ctx, e.target)
    if _optional_member(ctx.spec, e.target):
        ctx.helpers.add("present")
        return f"present({text})"
    return text


def _next_state(ctx: _Ctx, row: Row) -> str | None:
    """The next-state expression, or None when the row keeps the state."""
    if not row.next:
        return None
    parts: list[str] = []
    for axis in ctx.spec.axes:
        nv = row.next_for(axis.name)
        if nv is None:
            ctx.uses_state = True
            value = _member("state", axis.name)
        elif isinstance(nv, NextLiteral):
            value = _q(nv.value)
        elif isinstance(nv, NextCase):
            ctx.uses_state = True
            table = (row.id.replace(".", "_").replace("-", "_") + "_" + axis.name).upper()
            assert isinstance(axis, EnumAxis)
            mapping = dict(nv.mapping)
            axis_type = ctx.names.axis(axis.name)
            ctx.tables += [
                f"/** {row.id}: the next {axis.name} for each current one. */",
                f"const {table}: Readonly<Record<{axis_type}, {axis_type}>> = {{",
                *(f"  {_key(v)}: {_q(mapping.get(v, v))}," for v in axis.type.values),
                "};",
                "",
            ]
            value = f"{table}[{_member('state', axis.name)}]"
        else:
            assert isinstance(nv, NextVariant) and isinstance(axis, VariantAxis)
            given = dict(nv.fields)
            variant = axis.variant(nv.tag)
            assert variant is not None
            members = [f"{_key(axis.tag)}: {_q(nv.tag)}"]
            members += [f"{_key(f.name)}: {_value(ctx, given[f.name])}" for f in variant.fields]
            value = "{ " + ", ".join(members) + " }"
        parts.append(f"{_key(axis.name)}: {value}")
    return "{ " + ", ".join(parts) + " }"


def _handler(spec: Spec, names: _Names, event: Event, shared: _Ctx) -> list[str]:
    ctx = _Ctx(spec, names, event)
    body: list[str] = []
    unconditional = False
    for row in spec.rows_for(event.name):
        body.append(f"  // {row.id}: {' '.join(row.why.split())}")
        nxt = _next_state(ctx, row)
        if nxt is None:
            ctx.uses_state = True
        if isinstance(row.guard, ex.Lit) and row.guard.value is True:
            body += _return(nxt, row.effect, "  ")
            unconditional = True
            break
        body.append(f"  if ({_guard(ctx, row.guard)}) {{")
        body += _return(nxt, row.effect, "    ")
        body.append("  }")
    if not unconditional:
        body.append(f"  throw new Error({_q(f'no row of {spec.id} matches this {event.name}')});")
    head: list[str] = []
    if ctx.uses_facts or ctx.lazy_used:
        ctx.uses_event = True
        head.append("  const facts = event.facts;")
    for name in (n for n in event.lazy_order if n in ctx.lazy_used):
        f = event.fact(name)
        assert f is not None
        cache = _lazy_cache(name)
        head.append(f"  let {cache}: {_type(spec, f.type)} | undefined;")
        head.append(
            f"  const {_lazy_reader(name)} = (): {_type(spec, f.type)} => "
            f"({cache} ??= {lazy_check(f, _member('facts', name))});"
        )
    state_param = "state" if ctx.uses_state else "_state"
    event_param = "event" if ctx.uses_event else "_event"
    shared.helpers |= ctx.helpers
    shared.accessors |= ctx.accessors
    shared.tables += ctx.tables
    lines = _comment(event.why)
    lines.append(
        f"function {_handler_name(event)}({state_param}: {names.state}, "
        f"{event_param}: {_event_type(event)}): {names.result} {{"
    )
    if ctx.lazy_used:
        head.insert(1, "  // lazy facts: read at most once, only when a guard reaches them")
    return lines + head + body + ["}", ""]


def _return(nxt: str | None, effect: str, indent: str) -> list[str]:
    if nxt is None:
        return [f"{indent}return {{ state, effect: {_q(effect)} }};"]
    one = f"{indent}return {{ state: {nxt}, effect: {_q(effect)} }};"
    if len(one) <= 100:
        return [one]
    return [
        f"{indent}return {{",
        f"{indent}  state: {nxt},",
        f"{indent}  effect: {_q(effect)},",
        f"{indent}}};",
    ]


def _handler_name(event: Event) -> str:
    return "on" + pascal(event.name)


def _helpers(spec: Spec, names: _Names, shared: _Ctx) -> list[str]:
    out: list[str] = []
    for axis_name, member in sorted(shared.accessors):
        axis = spec.axis(axis_name)
        assert isinstance(axis, VariantAxis)
        ftype = axis.field_type(member)
        assert ftype is not None
        carriers = " or ".join(f"`{c}`" for c in axis.carriers(member))
        out += [
            f"/** `{axis_name}.{member}`: present in {carriers}, otherwise absent. */",
            f"function {_accessor_name(axis_name, member)}(value: {names.axis(axis_name)}): "
            f"{_type(spec, ftype)} | undefined {{",
            f"  return {_q(member)} in value ? {_member('value', member)} : undefined;",
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
    if "present" in shared.helpers:
        out += [
            "/** A field the table copies from the current phase (present whenever it does). */",
            "function present<T>(value: T | undefined): T {",
            "  if (value === undefined) {",
            f"    throw new Error({_q(spec.id + ': a row copied a field its phase lacks')});",
            "  }",
            "  return value;",
            "}",
            "",
        ]
    return out


def typescript_module(spec: Spec) -> str:
    names = _Names(pascal(spec.name))
    shared = _Ctx(spec, names, spec.events[0])
    handlers: list[str] = []
    for event in spec.events:
        handlers += _handler(spec, names, event, shared)
    out = [
        f"// {spec.id}: {spec.title}",
        f"// Generated by `pi-context generate` from {Path(spec.path).name}. Do not edit:",
        "// change the spec and regenerate. A pure reducer: no I/O, no clock, no globals.",
        f"// spec-sha256: {spec.sha256}",
        "",
        f"export const SPEC_ID = {_q(spec.id)};",
        f"export const SPEC_SHA256 = {_q(spec.sha256)};",
        "",
    ]
    out += _types(spec, names)
    out += upstream_aliases(spec, names)
    out += _effect_hosts(spec, names)
    initial = "{ " + ", ".join(f"{_key(k)}: {_literal(v)}" for k, v in spec.initial.items()) + " }"
    out += [
        "/** The state a session starts in. */",
        f"export function initial{names.prefix}(): {names.state} {{",
        f"  return {initial};",
        "}",
        "",
        "/**",
        f" * One step of {spec.id}: the next state and the effect for the host to perform.",
        " * Rows are tried in table order; the first whose guard holds decides.",
        " */",
        f"export function reduce{names.prefix}(state: {names.state}, event: {names.event}): "
        f"{names.result} {{",
        "  checkInput(state, event);",
        "  switch (event.type) {",
    ]
    for event in spec.events:
        out.append(f"    case {_q(event.name)}:")
        out.append(f"      return {_handler_name(event)}(state, event);")
    out += [
        "    default:",
        "      return unknownEvent(event);",
        "  }",
        "}",
        "",
        "function unknownEvent(event: never): never {",
        f"  throw new Error(`{spec.id}: unknown event ${{JSON.stringify(event)}}`);",
        "}",
        "",
    ]
    out += shared.tables
    out += handlers
    out += _helpers(spec, names, shared)
    out += input_checks(spec, names.prefix)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


# Upstream's names (pi-context's src/pi/reset/lifecycle.ts) for the reset-control types, as
# (upstream name, the kind of thing it names, which one): emitted where the spec has it.
_UPSTREAM_NAMES = (
    ("ResetRequest", "axis", "request"),
    ("ResetOverflowPhase", "axis", "overflow"),
    ("ResetRequestSource", "type", "source"),
    ("ResetTurnEndFacts", "facts", "turn_end"),
    ("ResetBeforeSettleFacts", "facts", "before_settle"),
)


def upstream_aliases(spec: Spec, names: _Names) -> list[str]:
    """Aliases under upstream's type names, so code written against the published reducer
    type-checks against this module."""
    if spec.name != "reset-control":
        return []
    out: list[str] = []
    for alias, kind, name in _UPSTREAM_NAMES:
        if kind == "axis" and spec.axis(name) is not None:
            target = names.axis(name)
        elif kind == "type" and any(t.name == name for t in spec.types):
            target = pascal(name)
        elif kind == "facts" and (event := spec.event(name)) is not None and event.facts:
            target = _facts_type(event)
        else:
            continue
        out.append(f"export type {alias} = {target};")
    if not out:
        return []
    return ["/** Upstream's names for these types (src/pi/reset/lifecycle.ts). */", *out, ""]


def _literal(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)}: {_literal(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def index_module(specs: list[Spec]) -> str:
    out = [
        f"// The index of {PACKAGE_NAME}: every generated module as a namespace, and every",
        "// reducer keyed by spec id (what adapter.mjs serves). Each module is also its own",
        f'// entry point: import {{ reduceResetControl }} from "{PACKAGE_NAME}/<spec id>".',
        "// Generated by `pi-context generate`. Do not edit.",
        "",
    ]
    aliases: list[tuple[Spec, str]] = []
    for spec in specs:
        alias = _camel(spec.name) + re.sub(r"\W", "_", spec.version)
        aliases.append((spec, alias))
        stem = module_file(spec).removesuffix(".ts")
        out.append(f"import * as {alias} from {_q(f'./{stem}.js')};")
    out += ["", f"export {{ {', '.join(alias for _, alias in aliases)} }};", ""]
    out.append("/** Every spec this package serves, each importable as a subpath of its own. */")
    out.append("export const SPEC_IDS = [")
    out += [f"  {_q(spec.id)}, // {PACKAGE_NAME}{export_path(spec)[1:]}" for spec in specs]
    out += [
        "] as const;",
        "",
        "/** A step's outcome, typed loosely: the adapter passes JSON it has not checked. */",
        "export interface ServedResult {",
        "  readonly state: unknown;",
        "  readonly effect: string;",
        "}",
        "",
        "export interface ServedSpec {",
        "  readonly initial: () => unknown;",
        "  readonly reduce: (state: never, event: never) => ServedResult;",
        "}",
        "",
        "export const SPECS: Readonly<Record<string, ServedSpec>> = {",
    ]
    for spec, alias in aliases:
        prefix = pascal(spec.name)
        out += [
            f"  {_q(spec.id)}: {{",
            f"    initial: {alias}.initial{prefix},",
            f"    reduce: {alias}.reduce{prefix},",
            "  },",
        ]
    out += ["};", ""]
    return "\n".join(out)
