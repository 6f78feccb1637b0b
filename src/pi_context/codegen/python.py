"""Generate a spec's Python package: the state/event/effect types, the compiled ``reduce``
and ``__init__`` here; ``wire.py`` and ``machine.py`` (the table for the ``transitions``
machine) come from :mod:`.wire` and :mod:`.machine`.

The output is deterministic, formatted with ruff when available, and records the spec's
SHA-256 so drift between a spec and its generated package is detectable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from pi_context.codegen.emit import (
    case_map_lines,
    const_states,
    header,
    py_def,
    row_chain,
    state_expr,
    variant_axes,
)
from pi_context.codegen.machine import machine_module
from pi_context.codegen.naming import (
    event_class,
    facts_class,
    facts_view,
    row_function,
    type_alias,
    variant_class,
)
from pi_context.spec import expr as ex
from pi_context.spec.model import (
    BOOL,
    HOST_ACTIONS,
    Axis,
    EnumAxis,
    EnumType,
    Event,
    FieldType,
    IdType,
    Row,
    Spec,
    TextType,
)


def _ptype(t: FieldType) -> str:
    if t == BOOL:
        return "bool"
    if isinstance(t, TextType):
        return f"{type_alias(t.name)} | None = None"  # absent unless given
    assert isinstance(t, EnumType | IdType)
    return type_alias(t.name)


def _lit(values: tuple[str, ...]) -> str:
    return "Literal[" + ", ".join(repr(v) for v in values) + "]"


def _axis_type(axis: Axis) -> str:
    return type_alias(axis.name)


# ---------------------------------------------------------------- types.py


def _effect_hosts(spec: Spec) -> list[str]:
    """What the host does for each effect, as the spec declares it (None: undeclared), and
    which effects answer a request that was already pending."""
    out = [
        "",
        f"HostAction: TypeAlias = {_lit(HOST_ACTIONS)}",
        "EFFECT_HOST: dict[Effect, HostAction | None] = {",
    ]
    out += [f"    {e.name!r}: {e.host!r}," for e in spec.effects]
    out.append("}")
    duplicates = ", ".join(repr(e.name) for e in spec.effects if e.duplicate)
    out += [
        "# Effects that answer a request already pending (the request was a duplicate).",
        f"EFFECT_DUPLICATE: frozenset[Effect] = frozenset({{{duplicates}}})"
        if duplicates
        else "EFFECT_DUPLICATE: frozenset[Effect] = frozenset()",
    ]
    return out


def _cause_table(spec: Spec) -> list[str]:
    """What the user is told caused the boundary each committing row commits: a text per
    row, or per value of a field of the state the row fired in (``cause``)."""
    fixed = [r for r in spec.rows if r.cause is not None and not r.cause.axis]
    varying = [r for r in spec.rows if r.cause is not None and r.cause.axis]
    out = ["", "# Why a boundary committed, as the user is told it, for rows with one cause."]
    out.append("ROW_CAUSE: dict[str, str] = {")
    out += [f"    {r.id!r}: {r.cause.text!r}," for r in fixed if r.cause is not None]
    out.append("}")
    for row in varying:
        assert row.cause is not None
        pairs = ", ".join(f"{v!r}: {text!r}" for v, text in row.cause.cases)
        out.append(f"{_cause_name(row)}: dict[str | None, str] = {{{pairs}}}")
    out += [
        "",
        "",
        "def cause(row: str, state: State) -> str:",
        '    """What the user is told caused the boundary ``row`` commits when it fires in',
        '    ``state``; empty for a row that commits nothing."""',
    ]
    for row in varying:
        assert row.cause is not None
        read = f"state.{ex.snake(row.cause.axis)}"
        if row.cause.member is not None:
            read += f".{ex.snake(row.cause.member)}"
        out += [
            f"    if row == {row.id!r}:  # by {row.cause.by}",
            f"        return {_cause_name(row)}.get({read}, {row.cause.otherwise or ''!r})",
        ]
    out.append('    return ROW_CAUSE.get(row, "")')
    return out


def _cause_name(row: Row) -> str:
    return f"_CAUSE_{row_function(row.id).upper()}"


def types_module(spec: Spec) -> str:
    stdlib = [
        "from dataclasses import dataclass",
        "from typing import ClassVar, Final, Literal, Protocol, TypeAlias",
    ]
    out = header(spec, "State, event and effect types", stdlib)
    out += [
        f"SPEC_ID: Final = {spec.id!r}  # a Literal type: typed(SPEC_ID) picks this spec's handle",
        f"SPEC_SHA256 = {spec.sha256!r}",
        "",
    ]
    for t in spec.types:
        doc = f"  # {t.why}" if t.why else ""
        if isinstance(t, EnumType):
            out.append(f"{type_alias(t.name)}: TypeAlias = {_lit(t.values)}{doc}")
        else:
            out.append(f"{type_alias(t.name)}: TypeAlias = str{doc}")
    out.append("")
    for axis in spec.axes:
        if isinstance(axis, EnumAxis):
            out.append(f"{_axis_type(axis)}: TypeAlias = {_lit(axis.type.values)}")
            out.append(f'"""{axis.why}"""' if axis.why else "")
            out.append("")
            continue
        all_fields = axis.field_names()
        for variant in axis.variants:
            cls = variant_class(axis, variant.tag)
            out += [
                "",
                "@dataclass(frozen=True, slots=True)",
                f"class {cls}:",
                f'    """``{axis.name}`` in phase ``{variant.tag}``."""',
                "",
                f"    {ex.snake(axis.tag)}: ClassVar[Literal[{variant.tag!r}]] = {variant.tag!r}",
            ]
            for fname in all_fields:
                if variant.field(fname) is None:
                    out.append(f"    {ex.snake(fname)}: ClassVar[None] = None")
            # (a text has a default, absent, so it follows the fields without one)
            variant_fields = sorted(variant.fields, key=lambda f: isinstance(f.type, TextType))
            for f in variant_fields:
                out.append(f"    {ex.snake(f.name)}: {_ptype(f.type)}")
            out.append("")
        union = " | ".join(variant_class(axis, v.tag) for v in axis.variants)
        out += ["", f"{_axis_type(axis)}: TypeAlias = {union}", ""]
    out += [
        "",
        "@dataclass(frozen=True, slots=True)",
        "class State:",
        f'    """One {spec.name} state."""',
        "",
    ]
    for axis in spec.axes:
        out.append(f"    {ex.snake(axis.name)}: {_axis_type(axis)}")
    out += ["", "", f"Effect: TypeAlias = {_lit(tuple(e.name for e in spec.effects))}", ""]
    out.append(
        "EFFECTS: tuple[Effect, ...] = (" + ", ".join(repr(e.name) for e in spec.effects) + ",)"
    )
    out += _effect_hosts(spec)
    out.append("")
    for event in spec.events:
        out += _event_types(event)
    union = " | ".join(event_class(e.name) for e in spec.events)
    out += ["", f"Event: TypeAlias = {union}", ""]
    names = ", ".join(repr(e.name) for e in spec.events)
    out += [f"EventType: TypeAlias = Literal[{names}]", ""]
    out += _event_classes(spec)
    out.append("# Lazy facts, in the order the table may consult them.")
    out.append("LAZY_ORDER: dict[str, tuple[str, ...]] = {")
    for event in spec.events:
        if event.lazy_order:
            out.append(
                f"    {event.name!r}: (" + ", ".join(repr(n) for n in event.lazy_order) + ",),"
            )
    out.append("}")
    out += _cause_table(spec)
    out += ["", "", f"INITIAL_STATE = State({_initial_args(spec)})", ""]
    out += [
        "",
        "def initial_state() -> State:",
        '    """The state a fresh lifecycle starts in (immutable, so it is shared)."""',
        "    return INITIAL_STATE",
        "",
    ]
    return "\n".join(out)


def _event_classes(spec: Spec) -> list[str]:
    """Event name -> its class, for hosts that build events by name."""
    out = ["EVENT_CLASSES: dict[EventType, type[Event]] = {"]
    out += [f"    {e.name!r}: {event_class(e.name)}," for e in spec.events]
    return out + ["}", ""]


def _initial_args(spec: Spec) -> str:
    args: list[str] = []
    for axis in spec.axes:
        value = spec.initial[axis.name]
        if isinstance(axis, EnumAxis):
            args.append(f"{ex.snake(axis.name)}={value!r}")
        else:
            assert isinstance(value, dict)
            args.append(f"{ex.snake(axis.name)}={variant_class(axis, value[axis.tag])}()")
    return ", ".join(args)


def _event_types(event: Event) -> list[str]:
    cls = event_class(event.name)
    out: list[str] = []
    if event.facts:
        view, plain = facts_view(event.name), facts_class(event.name)
        out += [
            "",
            f"class {view}(Protocol):",
            f'    """Facts of ``{event.name}`` as the reducer reads them; lazy ones may be',
            '    computed on first read (a property), so the reducer reads each at most once."""',
            "",
        ]
        for f in event.facts:
            out += ["    @property", f"    def {ex.snake(f.name)}(self) -> {_ptype(f.type)}: ..."]
        out += [
            "",
            "",
            "@dataclass(frozen=True, slots=True)",
            f"class {plain}:",
            f'    """Plain facts of ``{event.name}``."""',
            "",
        ]
        for f in event.facts:
            lazy = "  # lazy" if f.lazy else ""
            out.append(f"    {ex.snake(f.name)}: {_ptype(f.type)}{lazy}")
        out.append("")
    out += [
        "",
        "@dataclass(frozen=True, slots=True)",
        f"class {cls}:",
        f'    """{event.why or event.name}"""',
        "",
        f"    type: ClassVar[Literal[{event.name!r}]] = {event.name!r}",
    ]
    texts = [f for f in event.fields if isinstance(f.type, TextType)]
    for f in event.fields:
        if f not in texts:
            out.append(f"    {ex.snake(f.name)}: {_ptype(f.type)}")
    if event.facts:
        out.append(f"    facts: {facts_view(event.name)}")
    for f in texts:  # (absent unless given: after the fields without a default)
        out.append(f"    {ex.snake(f.name)}: {_ptype(f.type)}")
    out.append("")
    return out


# ---------------------------------------------------------------- wire.py


def wire_module(spec: Spec) -> str:
    """JSON (the seeds' TypeScript shapes) ⇄ typed values, with located errors and a fast
    path for the JSON hosts (emitted by :mod:`pi_context.codegen.wire`)."""
    from pi_context.codegen.wire import wire_module as emit

    return emit(spec, header(spec, "Wire conversion (the TypeScript JSON shapes)"))


# ---------------------------------------------------------------- reduce.py


def _lazy_read(name: str) -> str:
    var = f"_{ex.snake(name)}"
    return f"{var} if {var} is not None else ({var} := facts.{ex.snake(name)})"


def reduce_module(spec: Spec) -> str:
    out = header(spec, "The compiled reducer", ["from typing import TypeVar"], ["types as t"])
    out += [
        "_T = TypeVar('_T')",
        "",
        "",
        "def _present(value: _T | None) -> _T:",
        '    """A field copied from the current variant (present whenever its row fires)."""',
        "    assert value is not None",
        "    return value",
        "",
    ]
    if _texts(spec):
        out += [
            "",
            "def _text(value: str | None) -> str | None:",
            '    """A text as the table keeps it: trimmed, absent (None) when nothing remains."""',
            "    if value is None:",
            "        return None",
            "    trimmed = value.strip()",
            "    return trimmed or None",
            "",
        ]
    for axis in variant_axes(spec):
        for variant in axis.variants:
            if not variant.fields:
                cls = variant_class(axis, variant.tag)
                out.append(f"_{ex.snake(cls).upper()} = t.{cls}()")
    out += case_map_lines(spec, lambda axis: f"t.{_axis_type(axis)}")
    out += list(const_states(spec))
    out.append("")
    for event in spec.events:
        out += _event_function(spec, event)
    out += [
        "",
        "def step(state: t.State, event: t.Event) -> tuple[t.State, t.Effect, str]:",
        '    """One transition: the next state, its effect and the id of the row that fired."""',
    ]
    for event in spec.events:
        out += [
            f"    if isinstance(event, t.{event_class(event.name)}):",
            f"        return _{ex.snake(event.name)}(state, event)",
        ]
    out += [f"    raise TypeError(f'not a {spec.id} event: {{event!r}}')", ""]
    out += _carried_function(spec)
    out += [
        "",
        "def reduce(state: t.State, event: t.Event) -> tuple[t.State, t.Effect]:",
        '    """The pure reducer: the next state and the named effect the host performs."""',
        "    next_state, effect, _row = step(state, event)",
        "    return next_state, effect",
        "",
    ]
    return "\n".join(out)


def _texts(spec: Spec) -> bool:
    """The spec declares an optional text (a follow-up prompt)."""
    return any(isinstance(t, TextType) for t in spec.types)


def _carried_function(spec: Spec) -> list[str]:
    """``carried(row, state)``: the present values the effect of ``row`` hands the host when
    the row fires in ``state`` (emitted for a spec whose effects carry something)."""
    rows = [r for r in spec.rows if r.carry]
    if not any(e.carries for e in spec.effects):
        return []
    out = [
        "",
        "def carried(row: str, state: t.State) -> dict[str, str]:",
        '    """The values the effect of ``row`` carries when it fires in ``state`` (present',
        '    ones only: a follow-up prompt)."""',
        "    found: dict[str, str] = {}",
    ]
    names = {"state": "state", "event": "event", "facts": "facts"}
    for row in rows:
        out.append(f"    if row == {row.id!r}:")
        for name, value in row.carry:
            code = ex.to_python(value, names, _lazy_read, value=True)
            out += [
                f"        {ex.snake(name)} = {code}",
                f"        if {ex.snake(name)} is not None:",
                f"            found[{name!r}] = {ex.snake(name)}",
            ]
        out.append("        return found")
    out += ["    return found", ""]
    return out


def _event_function(spec: Spec, event: Event) -> list[str]:
    cls = event_class(event.name)
    out = py_def(
        f"_{ex.snake(event.name)}(state: t.State, event: t.{cls}) -> tuple[t.State, t.Effect, str]"
    )
    if event.facts:
        out.append("    facts = event.facts")
    for name in event.lazy_order:
        out.append(f"    _{ex.snake(name)}: bool | None = None  # lazy: read at most once")
    names = {"state": "state", "event": "event", "facts": "facts"}
    return out + row_chain(
        spec,
        event.name,
        lambda row: ex.to_python(row.guard, names, _lazy_read),
        lambda row: f"{state_expr(spec, row, 'state', 'event')}, {row.effect!r}, {row.id!r}",
    )


def init_module(spec: Spec) -> str:
    out = header(spec, f"Generated {spec.name} package")
    out += [
        "from .reducer import reduce, step",
        "from .types import *  # noqa: F403",
        "from .types import SPEC_ID, SPEC_SHA256, initial_state",
        "from .wire import event_from_wire, event_to_wire, state_from_wire, state_to_wire",
        "",
        "__all__ = [",
        "    'SPEC_ID', 'SPEC_SHA256', 'initial_state', 'reduce', 'step',",
        "    'event_from_wire', 'event_to_wire', 'state_from_wire', 'state_to_wire',",
        "]",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------- files


def python_files(spec: Spec, *, formatted: bool = True) -> dict[str, str]:
    """Relative path (under ``generated/``) → source (formatted for committing)."""
    pkg = spec.module_name
    files = {
        f"{pkg}/__init__.py": init_module(spec),
        f"{pkg}/types.py": types_module(spec),
        f"{pkg}/wire.py": wire_module(spec),
        f"{pkg}/reducer.py": reduce_module(spec),
        f"{pkg}/machine.py": machine_module(spec),
    }
    if not formatted:
        return files
    return {
        path: format_python(src, f"src/pi_context/statemachine/generated/{path}")
        for path, src in files.items()
    }


def format_python(source: str, name: str = "generated.py") -> str:
    """Format with ruff (the project's formatter) so generated files pass `ruff format`."""
    beside = Path(sys.executable).parent / "ruff"
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff is None:
        raise RuntimeError("generating committed code needs ruff: pip install -e '.[dev]'")
    root = Path(__file__).resolve().parents[3]  # the checkout
    fixed = subprocess.run(
        [
            ruff,
            "check",
            "--fix-only",
            "--quiet",
            "--select",
            "I,F401",
            "--stdin-filename",
            name,
            "-",
        ],
        input=source,
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    if fixed.returncode == 0 and fixed.stdout:
        source = fixed.stdout
    done = subprocess.run(
        [ruff, "format", "--quiet", "--stdin-filename", name, "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"ruff could not format generated {name}:\n{done.stderr}")
    return done.stdout
