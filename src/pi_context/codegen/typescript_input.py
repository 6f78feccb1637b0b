"""The input checks of a generated TypeScript module: a state or event that is not of the spec's
shape is refused with an error naming the field (``event.facts.queued must be a boolean``),
never a ``TypeError`` from deep inside the reducer.

Eager fields and facts are checked before the table runs; a lazy fact is checked when a guard
first reads it, so a host's getters are still read at most once and only where needed.
"""

from __future__ import annotations

from pi_context.codegen.typescript_names import q as _q
from pi_context.spec.model import BOOL, EnumAxis, EnumType, Event, Field, FieldType, Spec, TextType


def error_class(prefix: str) -> str:
    return f"{prefix}InputError"


def _check(t: FieldType, value: str, path: str) -> str:
    if isinstance(t, TextType):
        return f"checkOptionalString({value}, {_q(path)})"
    if t == BOOL:
        return f"checkBoolean({value}, {_q(path)})"
    if isinstance(t, EnumType):
        values = ", ".join(_q(v) for v in t.values)
        return f"checkOneOf({value}, [{values}], {_q(path)})"
    return f"checkString({value}, {_q(path)})"


def lazy_check(f: Field, value: str) -> str:
    """The expression a lazy-fact reader memoises: the fact, checked when first read."""
    return _check(f.type, value, f"event.facts.{f.name}")


def _record_checks(fields: tuple[Field, ...], obj: str, path: str, indent: str) -> list[str]:
    return [
        f"{indent}{_check(f.type, f'{obj}[{_q(f.name)}]', f'{path}.{f.name}')};" for f in fields
    ]


def _event_checks(event: Event) -> list[str]:
    out = [f"    case {_q(event.name)}: {{"]
    out += _record_checks(event.fields, "event", "event", "      ")
    if event.facts:
        eager = tuple(f for f in event.facts if not f.lazy)
        if eager:
            out.append('      const facts = checkObject(event["facts"], "event.facts");')
            out += _record_checks(eager, "facts", "event.facts", "      ")
        else:
            out.append('      checkObject(event["facts"], "event.facts");')
    return [*out, "      return;", "    }"]


def _helpers(cls: str) -> dict[str, list[str]]:
    return {
        "checkBoolean": [
            "function checkBoolean(value: unknown, path: string): boolean {",
            f'  if (typeof value !== "boolean") throw new {cls}(path, "a boolean", value);',
            "  return value;",
            "}",
            "",
        ],
        "checkString": [
            "function checkString(value: unknown, path: string): string {",
            f'  if (typeof value !== "string") throw new {cls}(path, "a string", value);',
            "  return value;",
            "}",
            "",
        ],
        "checkOptionalString": [
            "function checkOptionalString(value: unknown, path: string): string | undefined {",
            '  if (value !== undefined && typeof value !== "string") {',
            f'    throw new {cls}(path, "a string or nothing", value);',
            "  }",
            "  return value;",
            "}",
            "",
        ],
        "checkOneOf": [
            "function checkOneOf<T extends string>(value: unknown, values: readonly T[], "
            "path: string): T {",
            '  if (typeof value !== "string" || !(values as readonly string[]).includes(value)) {',
            '    const expected = `one of ${values.map((v) => JSON.stringify(v)).join(", ")}`;',
            f"    throw new {cls}(path, expected, value);",
            "  }",
            "  return value as T;",
            "}",
            "",
        ],
    }


def input_checks(spec: Spec, prefix: str) -> list[str]:
    """``checkInput(state, event)`` and the helpers it uses, for the module's reducer."""
    cls = error_class(prefix)
    body = _check_input(spec)
    text = "\n".join(body) + "\n".join(
        lazy_check(f, "") for e in spec.events for f in e.facts if f.lazy
    )
    out = [
        "/** A state or event that is not of this spec's shape; `path` names the field. */",
        f"export class {cls} extends Error {{",
        "  readonly path: string;",
        "  constructor(path: string, expected: string, got: unknown) {",
        "    super(`${SPEC_ID}: ${path} must be ${expected}, got ${describe(got)}`);",
        f"    this.name = {_q(cls)};",
        "    this.path = path;",
        "  }",
        "}",
        "",
        "function describe(value: unknown): string {",
        '  if (value === undefined) return "nothing";',
        '  if (value === null) return "null";',
        '  if (Array.isArray(value)) return "an array";',
        '  if (typeof value === "object") return "an object";',
        '  if (typeof value === "string") return JSON.stringify(value);',
        '  return typeof value === "function" ? "a function" : String(value);',
        "}",
        "",
        "function checkObject(value: unknown, path: string): Record<string, unknown> {",
        '  if (value === null || typeof value !== "object" || Array.isArray(value)) {',
        f'    throw new {cls}(path, "an object", value);',
        "  }",
        "  return value as Record<string, unknown>;",
        "}",
        "",
    ]
    for name, lines in _helpers(cls).items():
        if f"{name}(" in text:
            out += lines
    return out + body


def _check_input(spec: Spec) -> list[str]:
    events = ", ".join(_q(e.name) for e in spec.events)
    out = [
        "/** Refuse a state or event of the wrong shape before the table runs (lazy facts are",
        " * checked when first read). */",
        "function checkInput(stateValue: unknown, eventValue: unknown): void {",
        '  const state = checkObject(stateValue, "state");',
    ]
    for axis in spec.axes:
        path = f"state.{axis.name}"
        if isinstance(axis, EnumAxis):
            out.append(f"  {_check(axis.type, f'state[{_q(axis.name)}]', path)};")
            continue
        var = f"{axis.name}Value".replace("-", "_")
        tags = ", ".join(_q(v.tag) for v in axis.variants)
        out += [
            f"  const {var} = checkObject(state[{_q(axis.name)}], {_q(path)});",
            f"  const {var}Tag = {var}[{_q(axis.tag)}];",
            f"  switch (checkOneOf({var}Tag, [{tags}], {_q(path + '.' + axis.tag)})) {{",
        ]
        for variant in axis.variants:
            out.append(f"    case {_q(variant.tag)}:")
            out += _record_checks(variant.fields, var, path, "      ")
            out.append("      break;")
        out.append("  }")
    out += [
        '  const event = checkObject(eventValue, "event");',
        f'  switch (checkOneOf(event["type"], [{events}], "event.type")) {{',
    ]
    for event in spec.events:
        out += _event_checks(event)
    out += ["  }", "}", ""]
    return out
