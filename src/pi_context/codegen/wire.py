"""Emit a spec's ``wire.py``: JSON (the TypeScript shapes) ⇄ typed values.

Two layers. The *checked* functions validate everything and raise a :class:`WireError` that
names the JSON path; they are the reference and the fallback. The public
``state_from_wire``/``event_from_wire`` first try a fast path: a plain ``dict`` of exactly
the expected size is read into a flat key of its leaf values, and a key seen before returns
the typed value built for it then (typed values are frozen, so sharing them is safe). A key
is only ever stored after the checked function accepted the same input, so a hit is as
valid as a check. Leaves need no type test except booleans — ``1 == True`` — which the fast
path checks by class. Anything else (a miss, a mapping that is not a dict, a wrong size, a
bad value) goes through the checked function, which either returns the value (and it is
remembered) or raises the located error. ``state_to_wire`` dispatches on the exact class of
each variant value, with the ``isinstance`` chain kept for subclasses.
"""

from __future__ import annotations

from collections.abc import Callable

from pi_context.codegen.emit import py_def, sections, variant_axes
from pi_context.codegen.naming import (
    event_class,
    facts_class,
    type_alias,
    variant_class,
)
from pi_context.codegen.wire_step import step_functions
from pi_context.spec import expr as ex
from pi_context.spec import model as m

CACHE_LIMIT = 4096  # remembered values per kind; the cache is emptied when it is full
KEY_LIMIT = 256  # values with a longer string leaf are parsed but not remembered


def wire_module(spec: m.Spec, header: list[str]) -> str:
    out = list(header)
    out += [
        "import dataclasses",
        "from collections.abc import Callable",
        "from typing import Any",
        "",
        "from pi_context.statemachine.wirecheck import WireError, want_bool, want_enum, want_id, want_object"
        + (", want_text, with_text" if _has_text(spec) else ""),
        "from . import reducer as _reducer",
        "from . import types as t",
        "",
        "__all__ = ['WireError', 'state_to_wire', 'state_from_wire', 'event_to_wire', 'event_from_wire', 'effect_from_wire', 'step_wire', 'reduce_wire']",
        "",
        f"_CACHE_LIMIT = {CACHE_LIMIT}  # remembered values per kind; emptied when full",
        f"_KEY_LIMIT = {KEY_LIMIT}  # inputs with a longer string are parsed, not remembered",
        "_STATES: dict[tuple[Any, ...], t.State] = {}",
        "_EVENTS: dict[tuple[Any, ...], t.Event] = {}",
        "",
        "",
        "def _remember(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> None:",
        "    if len(cache) >= _CACHE_LIMIT:",
        "        cache.clear()",
        "    if all(len(leaf) <= _KEY_LIMIT for leaf in key if isinstance(leaf, str)):",
        "        cache[key] = value",
        "",
    ]
    if _has_text(spec):
        # An optional text changes a record's size: such a spec parses through the checked
        # functions only (no remembered fast path).
        states: tuple[Callable[[m.Spec], list[str]], ...] = (_state_to_wire, _checked_state)
        events: tuple[Callable[[m.Spec], list[str]], ...] = (_event_to_wire, _checked_event)
        plain = [
            "",
            "def state_from_wire(obj: object, path: str = 'state') -> t.State:",
            '    """Parse a wire state; a wrong shape raises WireError naming the path."""',
            "    return _state_from_wire_checked(obj, path)",
            "",
            "",
            "def event_from_wire(obj: object, path: str = 'event') -> t.Event:",
            '    """Parse a wire event; a wrong shape raises WireError naming the path."""',
            "    return _event_from_wire_checked(obj, path)",
            "",
        ]
    else:
        states = (_state_to_wire, _checked_state, _fast_state)
        events = (_event_to_wire, _checked_event, _fast_event)
        plain = []
    out += sections(spec, *states, *events)
    out += plain
    out += [
        "",
        "def effect_from_wire(obj: object, path: str = 'effect') -> t.Effect:",
        "    value = want_enum(obj, path, t.EFFECTS)",
        "    for effect in t.EFFECTS:",
        "        if effect == value:",
        "            return effect",
        "    raise AssertionError(value)",
        "",
    ]
    out += step_functions(spec)
    return "\n".join(out)


# ---------------------------------------------------------------- typed → wire


def _state_to_wire(spec: m.Spec) -> list[str]:
    # module-level names for the variant classes: one global lookup instead of two
    out = [
        f"_{variant_class(a, v.tag)} = t.{variant_class(a, v.tag)}"
        for a in variant_axes(spec)
        for v in a.variants
    ]
    out += ["", "", "def state_to_wire(state: t.State) -> dict[str, Any]:"]
    items: list[str] = []
    for axis in spec.axes:
        attr = f"state.{ex.snake(axis.name)}"
        if isinstance(axis, m.EnumAxis):
            items.append(f"{axis.name!r}: {attr}")
            continue
        var = f"v_{ex.snake(axis.name)}"
        out += [f"    {var}: dict[str, Any]", f"    value = {attr}", "    cls = value.__class__"]
        for n, variant in enumerate(axis.variants):
            cls = variant_class(axis, variant.tag)
            out += [
                f"    {'if' if n == 0 else 'elif'} cls is _{cls}:",
                f"        {var} = {_variant_dict(axis, variant.tag, [f.name for f in variant.fields])}",
            ]
        out += ["    else:", f"        {var} = _{ex.snake(axis.name)}_to_wire(value)"]
        items.append(f"{axis.name!r}: {var}")
    out += ["    return {" + ", ".join(items) + "}", ""]
    for axis in variant_axes(spec):
        fn = ex.snake(axis.name)
        out += py_def(f"_{fn}_to_wire(value: t.{type_alias(axis.name)}) -> dict[str, Any]")
        for variant in axis.variants:
            cls = variant_class(axis, variant.tag)
            body = _variant_dict(axis, variant.tag, [f.name for f in variant.fields])
            out += [f"    if isinstance(value, t.{cls}):", f"        return {body}"]
        out += [f"    raise TypeError(f'not a {axis.name} value: {{value!r}}')", ""]
    return out


def _variant_dict(axis: m.VariantAxis, tag: str, fields: list[str]) -> str:
    variant = axis.variant(tag)
    assert variant is not None
    texts = [f.name for f in variant.fields if isinstance(f.type, m.TextType)]
    items = [f"{axis.tag!r}: {tag!r}"] + [
        f"{f!r}: value.{ex.snake(f)}" for f in fields if f not in texts
    ]
    record = "{" + ", ".join(items) + "}"
    for f in texts:  # present only when given
        record = f"with_text({record}, {f!r}, value.{ex.snake(f)})"
    return record


def _has_text(spec: m.Spec) -> bool:
    return any(isinstance(t, m.TextType) for t in spec.types)


def _event_to_wire(spec: m.Spec) -> list[str]:
    out = ["", "def event_to_wire(event: t.Event) -> dict[str, Any]:"]
    for event in spec.events:
        cls = event_class(event.name)
        texts = [f for f in event.fields if isinstance(f.type, m.TextType)]
        items = [f"'type': {event.name!r}"] + [
            f"{f.name!r}: event.{ex.snake(f.name)}" for f in event.fields if f not in texts
        ]
        if event.facts:
            facts = ", ".join(f"{f.name!r}: event.facts.{ex.snake(f.name)}" for f in event.facts)
            items.append("'facts': {" + facts + "}")
        record = "{" + ", ".join(items) + "}"
        for f in texts:  # present only when given
            record = f"with_text({record}, {f.name!r}, event.{ex.snake(f.name)})"
        out += [f"    if isinstance(event, t.{cls}):", f"        return {record}"]
    out += ["    raise TypeError(f'not an event: {event!r}')", ""]
    return out


# ---------------------------------------------------------------- checked wire → typed


def _from_wire_value(t: m.FieldType, expr: str, path: str) -> str:
    if isinstance(t, m.TextType):  # expr is m[key]: the text reads the record and key
        record, key = expr.split("[", 1)
        parent = path.rsplit(".", 1)[0]
        return f"want_text({record}, {key[:-1]}, f'{parent}')"
    if t == m.BOOL:
        return f"want_bool({expr}, f'{path}')"
    if isinstance(t, m.EnumType):
        return f"want_enum({expr}, f'{path}', {t.values!r})"
    return f"want_id({expr}, f'{path}')"


def _checked_state(spec: m.Spec) -> list[str]:
    out: list[str] = []
    for axis in variant_axes(spec):
        fn = ex.snake(axis.name)
        out += py_def(f"_{fn}_from_wire(obj: object, path: str) -> t.{type_alias(axis.name)}")
        out += [
            f"    tags = ({', '.join(repr(v.tag) for v in axis.variants)},)",
            f"    m = want_object(obj, path, required=({axis.tag!r},))",
            f"    tag = want_enum(m[{axis.tag!r}], f'{{path}}.{axis.tag}', tags)",
        ]
        for variant in axis.variants:
            cls = variant_class(axis, variant.tag)
            keys = ", ".join(
                repr(k)
                for k in (
                    axis.tag,
                    *[f.name for f in variant.fields if not isinstance(f.type, m.TextType)],
                )
            )
            optional = tuple(f.name for f in variant.fields if isinstance(f.type, m.TextType))
            args = ", ".join(
                f"{ex.snake(f.name)}={_from_wire_value(f.type, f'm[{f.name!r}]', f'{{path}}.{f.name}')}"
                for f in variant.fields
            )
            out += [
                f"    if tag == {variant.tag!r}:",
                f"        want_object(obj, path, exact=({keys},)"
                + (f", optional={optional!r})" if optional else ")"),
                f"        return t.{cls}({args})",
            ]
        out += ["    raise AssertionError(tag)", ""]
    out += [
        "",
        "def _state_from_wire_checked(obj: object, path: str) -> t.State:",
        f"    m = want_object(obj, path, exact=({', '.join(repr(a.name) for a in spec.axes)},))",
        "    return t.State(",
    ]
    for a in spec.axes:
        if isinstance(a, m.EnumAxis):
            value = f"want_enum(m[{a.name!r}], f'{{path}}.{a.name}', {a.type.values!r})"
        else:
            value = f"_{ex.snake(a.name)}_from_wire(m[{a.name!r}], f'{{path}}.{a.name}')"
        out.append(f"        {ex.snake(a.name)}={value},")
    out += ["    )", ""]
    return out


def _checked_event(spec: m.Spec) -> list[str]:
    names = tuple(e.name for e in spec.events)
    out = [
        "",
        "def _event_from_wire_checked(obj: object, path: str) -> t.Event:",
        "    m = want_object(obj, path, required=('type',))",
        f"    kind = want_enum(m['type'], f'{{path}}.type', {names!r})",
    ]
    for event in spec.events:
        cls = event_class(event.name)
        plain = [f.name for f in event.fields if not isinstance(f.type, m.TextType)]
        optional = tuple(f.name for f in event.fields if isinstance(f.type, m.TextType))
        ekeys = ("type", *plain, *(("facts",) if event.facts else ()))
        out += [
            f"    if kind == {event.name!r}:",
            f"        want_object(obj, path, exact={ekeys!r}"
            + (f", optional={optional!r})" if optional else ")"),
        ]
        eargs = [
            f"{ex.snake(f.name)}={_from_wire_value(f.type, f'm[{f.name!r}]', f'{{path}}.{f.name}')}"
            for f in event.fields
        ]
        if event.facts:
            fkeys = tuple(f.name for f in event.facts)
            out.append(f"        fm = want_object(m['facts'], f'{{path}}.facts', exact={fkeys!r})")
            fargs = ", ".join(
                f"{ex.snake(f.name)}={_from_wire_value(f.type, f'fm[{f.name!r}]', f'{{path}}.facts.{f.name}')}"
                for f in event.facts
            )
            eargs.append(f"facts=t.{facts_class(event.name)}({fargs})")
        out.append(f"        return t.{cls}({', '.join(eargs)})")
    out += ["    raise AssertionError(kind)", ""]
    return out


# ---------------------------------------------------------------- fast paths


def _leaves(fields: tuple[m.Field, ...], source: str, prefix: str) -> tuple[list[str], list[str]]:
    """(reads, key items) for the leaves of a record held in ``source``; booleans are
    checked by class (``1 == True`` would otherwise hit a remembered ``true``)."""
    reads: list[str] = []
    keys: list[str] = []
    bools: list[str] = []
    for f in fields:
        var = f"{prefix}{ex.snake(f.name)}"
        reads.append(f"{var} = {source}[{f.name!r}]")
        keys.append(var)
        if f.type == m.BOOL:
            bools.append(var)
    if bools:
        chain = " is ".join(f"{b}.__class__" for b in bools)
        keys.append(f"{chain} is bool")  # False for a non-boolean: such keys are never stored
    return reads, keys


def _parse_def(kind: str) -> list[str]:
    """The head of ``state_from_wire`` or ``event_from_wire``."""
    signature = f"{kind}_from_wire(obj: object, path: str = {kind!r}) -> t.{kind.capitalize()}"
    return py_def(
        signature, f"Parse a wire {kind}; a wrong shape raises WireError naming the path."
    )


def _fast_state(spec: m.Spec) -> list[str]:
    varied = variant_axes(spec)
    out = _parse_def("state")
    out += [
        "    o: Any = obj",
        f"    if o.__class__ is dict and len(o) == {len(spec.axes)}:",
    ]
    if len(varied) > 1:
        out += [f"        k_{ex.snake(a.name)}: tuple[Any, ...]" for a in varied]
    out += ["        key: tuple[Any, ...]", "        try:"]
    out += [f"            v_{ex.snake(a.name)} = o[{a.name!r}]" for a in spec.axes]
    for axis in varied:
        var = f"v_{ex.snake(axis.name)}"
        tag = f"tag_{ex.snake(axis.name)}"
        out += [
            f"            if {var}.__class__ is not dict:",
            "                raise KeyError",
            f"            {tag} = {var}[{axis.tag!r}]",
        ]
        for i, variant in enumerate(axis.variants):
            reads, keys = _leaves(variant.fields, var, f"{ex.snake(axis.name)}_")
            out.append(
                f"            {'if' if i == 0 else 'elif'} {tag} == {variant.tag!r} "
                f"and len({var}) == {len(variant.fields) + 1}:"
            )
            out += [f"                {r}" for r in reads]
            part = [repr(variant.tag), *keys]
            if len(varied) == 1:  # the one variant axis builds the whole key in place
                items: list[str] = []
                for other in spec.axes:
                    if other is axis:
                        items += part
                    elif isinstance(other, m.EnumAxis):
                        items.append(f"v_{ex.snake(other.name)}")
                out.append(f"                key = ({', '.join(items)},)")
            else:
                out.append(f"                k_{ex.snake(axis.name)} = ({', '.join(part)},)")
        out += ["            else:", "                raise KeyError"]
    if len(varied) != 1:
        parts = [
            f"k_{ex.snake(a.name)}" if isinstance(a, m.VariantAxis) else f"(v_{ex.snake(a.name)},)"
            for a in spec.axes
        ]
        out.append(f"            key = {' + '.join(parts)}")
    return out + _remembered("state")


def _fast_event(spec: m.Spec) -> list[str]:
    out = _parse_def("event")
    out += [
        "    o: Any = obj",
        "    if o.__class__ is dict:",
        "        kind = o.get('type')",
        "        key: tuple[Any, ...]",
        "        try:",
    ]
    for n, event in enumerate(spec.events):
        out += _fast_event_branch(event, n == 0)
    out += ["            else:", "                raise KeyError"]
    return out + _remembered("event")


def _remembered(kind: str) -> list[str]:
    """The end of the fast path for ``kind`` (``state`` or ``event``), after the ``try`` that
    builds ``key``: a key seen before returns its value; a new one goes through the checked
    function, and what it returns is remembered. Anything that raised ``KeyError`` falls
    through to the checked function."""
    cache = f"_{kind.upper()}S"
    checked = f"_{kind}_from_wire_checked(obj, path)"
    return [
        "        except KeyError:",
        "            pass",
        "        else:",
        "            try:",
        f"                found = {cache}.get(key)",
        f"            except TypeError:  # an unhashable leaf: not a valid {kind}",
        f"                return {checked}",
        "            if found is not None:",
        "                return found",
        f"            {kind} = {checked}",
        f"            _remember({cache}, key, {kind})",
        f"            return {kind}",
        f"    return {checked}",
        "",
    ]


def _fast_event_branch(event: m.Event, first: bool) -> list[str]:
    size = 1 + len(event.fields) + (1 if event.facts else 0)
    out = [f"            {'if' if first else 'elif'} kind == {event.name!r} and len(o) == {size}:"]
    reads, keys = _leaves(event.fields, "o", "e_")
    out += [f"                {r}" for r in reads]
    if event.facts:
        out += [
            "                fm = o['facts']",
            f"                if fm.__class__ is not dict or len(fm) != {len(event.facts)}:",
            "                    raise KeyError",
        ]
        freads, fkeys = _leaves(event.facts, "fm", "f_")
        out += [f"                {r}" for r in freads]
        keys += fkeys
    out.append(f"                key = ({', '.join([repr(event.name), *keys])},)")
    return out
