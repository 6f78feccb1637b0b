"""Generate the TypeScript binding of each spec: one readable module per spec exporting the
seeds' API (``initialResetControl``, ``reduceResetControl`` and the state, event and effect
types in their wire shapes), plus an index the protocol adapter uses.

This module writes a module's types, its initial state, its exported ``reduce`` (a switch
over the event type) and the index; the reducer's event functions come from
:mod:`.typescript_reducer`, its input checks from :mod:`.typescript_input`. A variant field
the current phase lacks is *absent* and equals nothing, as in the spec.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pi_context.codegen import typescript_names as ts
from pi_context.codegen.naming import pascal
from pi_context.codegen.typescript_input import input_checks
from pi_context.codegen.typescript_package import (
    PACKAGE_NAME,
    export_path,
    package_json,
)
from pi_context.codegen.typescript_reducer import handler_name, reducer_parts
from pi_context.spec import model as m

OUT_DIR = "bindings-ts/generated"


def module_file(spec: m.Spec) -> str:
    return f"{spec.name}-{spec.version}.ts"


def typescript_outputs(specs: list[m.Spec]) -> dict[str, str]:
    """Path (relative to the checkout) -> content, for `pi-context generate`."""
    out = {f"{OUT_DIR}/{module_file(spec)}": typescript_module(spec) for spec in specs}
    out[f"{OUT_DIR}/index.ts"] = index_module(specs)
    stems = {spec.id: module_file(spec).removesuffix(".ts") for spec in specs}
    out["bindings-ts/package.json"] = package_json(specs, stems)
    return out


# ---------------------------------------------------------------- effects


def _effect_hosts(spec: m.Spec, names: ts.Names) -> list[str]:
    """What the host does for each effect, as the spec declares it (null: undeclared)."""
    out = [
        "/** What a host does for an effect (see the spec's effects table). */",
        "export type HostAction = " + " | ".join(ts.q(h) for h in m.HOST_ACTIONS) + ";",
        "",
        "/** The host action of each effect, as the spec declares it. */",
        f"export const EFFECT_HOST: Readonly<Record<{names.effect}, HostAction | null>> = {{",
    ]
    out += [f"  {ts.q(e.name)}: {ts.q(e.host) if e.host else 'null'}," for e in spec.effects]
    return [*out, "};", ""]


# ---------------------------------------------------------------- types


def _types(spec: m.Spec, names: ts.Names) -> list[str]:
    out: list[str] = []
    for decl in spec.types:
        out += ts.comment(decl.why)
        if isinstance(decl, m.IdType | m.TextType):
            out.append(f"export type {pascal(decl.name)} = string;")
        else:
            out.append(
                f"export type {pascal(decl.name)} = {' | '.join(ts.q(v) for v in decl.values)};"
            )
        out.append("")
    for axis in spec.axes:
        out += ts.comment(axis.why)
        if isinstance(axis, m.EnumAxis):
            values = " | ".join(ts.q(v) for v in axis.type.values)
            out.append(f"export type {names.axis(axis.name)} = {values};")
        else:
            out.append(f"export type {names.axis(axis.name)} =")
            for variant in axis.variants:
                members = [f"readonly {ts.key(axis.tag)}: {ts.q(variant.tag)}"]
                members += [
                    f"readonly {ts.field_key(f)}: {ts.type_of(spec, f.type)}"
                    for f in variant.fields
                ]
                out.append(f"  | {{ {'; '.join(members)} }}")
            out[-1] += ";"
        out.append("")
    out.append(f"/** One {spec.name} state (its wire shape). */")
    out.append(f"export interface {names.state} {{")
    for axis in spec.axes:
        out.append(f"  readonly {ts.key(axis.name)}: {names.axis(axis.name)};")
    out += ["}", ""]
    for event in spec.events:
        if event.facts:
            out += ts.comment(f"The facts of {event.name}. " + _lazy_note(event))
            out.append(f"export interface {ts.facts_type(event)} {{")
            for f in event.facts:
                out += ts.comment(f.why + (" (lazy)" if f.lazy else ""), "  ")
                out.append(f"  readonly {ts.key(f.name)}: {ts.type_of(spec, f.type)};")
            out += ["}", ""]
        out += ts.comment(event.why)
        out.append(f"export interface {ts.event_type(event)} {{")
        out.append(f"  readonly type: {ts.q(event.name)};")
        for f in event.fields:
            out += ts.comment(f.why, "  ")
            out.append(f"  readonly {ts.field_key(f)}: {ts.type_of(spec, f.type)};")
        if event.facts:
            out.append(f"  readonly facts: {ts.facts_type(event)};")
        out += ["}", ""]
    out.append(f"export type {names.event} =")
    for event in spec.events:
        out.append(f"  | {ts.event_type(event)}")
    out[-1] += ";"
    out.append("")
    for effect in spec.effects:
        out.append(f"// {effect.name}: {' '.join(effect.meaning.split())}")
    out.append(f"export type {names.effect} =")
    for effect in spec.effects:
        out.append(f"  | {ts.q(effect.name)}")
    out[-1] += ";"
    out.append("")
    out.append("/** The next state and the one named effect the host performs. */")
    out.append(f"export interface {names.result} {{")
    out.append(f"  readonly state: {names.state};")
    out.append(f"  readonly effect: {names.effect};")
    for f in _carried(spec):
        out += ts.comment(f.why, "  ")
        out.append(f"  readonly {ts.field_key(f)}: {ts.type_of(spec, f.type)};")
    out += ["}", ""]
    return out


def _carried(spec: m.Spec) -> list[m.Field]:
    """Every value an effect of ``spec`` carries (the result's optional members)."""
    found: dict[str, m.Field] = {}
    for effect in spec.effects:
        for f in effect.carries:
            found.setdefault(f.name, f)
    return list(found.values())


def _lazy_note(event: m.Event) -> str:
    if not event.lazy_order:
        return ""
    return (
        "Lazy facts may be getters: each is read at most once, only on a branch that needs "
        f"it, in the order {', '.join(event.lazy_order)}."
    )


def typescript_module(spec: m.Spec) -> str:
    names = ts.Names(pascal(spec.name))
    tables, functions = reducer_parts(spec, names)
    out = [
        f"// {spec.id}: {spec.title}",
        f"// Generated by `pi-context generate` from {Path(spec.path).name}. Do not edit:",
        "// change the spec and regenerate. A pure reducer: no I/O, no clock, no globals.",
        f"// spec-sha256: {spec.sha256}",
        "",
        f"export const SPEC_ID = {ts.q(spec.id)};",
        f"export const SPEC_SHA256 = {ts.q(spec.sha256)};",
        "",
    ]
    out += _types(spec, names)
    out += upstream_aliases(spec, names)
    out += _effect_hosts(spec, names)
    initial = (
        "{ " + ", ".join(f"{ts.key(k)}: {_literal(v)}" for k, v in spec.initial.items()) + " }"
    )
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
        out.append(f"    case {ts.q(event.name)}:")
        out.append(f"      return {handler_name(event)}(state, event);")
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
    out += tables
    out += functions
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


def upstream_aliases(spec: m.Spec, names: ts.Names) -> list[str]:
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
            target = ts.facts_type(event)
        else:
            continue
        out.append(f"export type {alias} = {target};")
    if not out:
        return []
    return ["/** Upstream's names for these types (src/pi/reset/lifecycle.ts). */", *out, ""]


def _literal(value: object) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{ts.key(k)}: {_literal(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def index_module(specs: list[m.Spec]) -> str:
    out = [
        f"// The index of {PACKAGE_NAME}: every generated module as a namespace, and every",
        "// reducer keyed by spec id (what adapter.mjs serves). Each module is also its own",
        f'// entry point: import {{ reduceResetControl }} from "{PACKAGE_NAME}/<spec id>".',
        "// Generated by `pi-context generate`. Do not edit.",
        "",
    ]
    aliases: list[tuple[m.Spec, str]] = []
    for spec in specs:
        alias = ts.camel(spec.name) + re.sub(r"\W", "_", spec.version)
        aliases.append((spec, alias))
        stem = module_file(spec).removesuffix(".ts")
        out.append(f"import * as {alias} from {ts.q(f'./{stem}.js')};")
    out += ["", f"export {{ {', '.join(alias for _, alias in aliases)} }};", ""]
    out.append("/** Every spec this package serves, each importable as a subpath of its own. */")
    out.append("export const SPEC_IDS = [")
    out += [f"  {ts.q(spec.id)}, // {PACKAGE_NAME}{export_path(spec)[1:]}" for spec in specs]
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
            f"  {ts.q(spec.id)}: {{",
            f"    initial: {alias}.initial{prefix},",
            f"    reduce: {alias}.reduce{prefix},",
            "  },",
        ]
    out += ["};", ""]
    return "\n".join(out)
