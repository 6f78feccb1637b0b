"""Emit a spec's ``machine.py``: the table the ``transitions`` machine is built from.

The module is a table a person can review, in the manner of h11's ``_state.py``: ``ROWS``
gives each row of the spec once (its effect, its guard and its update, one line each, grouped
by event), and ``TABLE`` maps each (trigger, shape) to the rows that may fire from that shape
and the shape each leads to, one line per key, in patterns (``statemachine/patterns.py``: a
``*`` for an axis whose values the rows do not tell apart). Shapes are the machine's states
(the tag or value of every axis); the data a shape abstracts lives on the model.

Guards and updates are written here once. The compiled reducer keeps its own inlined chains:
stepping through these per-row calls instead takes about 1.5x as long (2.1M against 1.4M
steps/s on reset-control@0.26; docs/benchmarks/layout.md). What both use is emitted once, in
the reducer (constant states, case maps, variant singletons), and referenced from here. The
two tables are marked ``fmt: off`` so the formatter keeps one line per entry.
"""

from __future__ import annotations

import io
import itertools
import tokenize

from pi_context.codegen.emit import header, sections, state_expr
from pi_context.codegen.naming import event_class
from pi_context.spec import expr as ex
from pi_context.spec.model import EnumAxis, NextCase, NextLiteral, Row, Spec, TextType, VariantAxis
from pi_context.statemachine.patterns import ANY, SEP, fold


def machine_module(spec: Spec) -> str:
    stdlib = ["from collections.abc import Callable", "from typing import Any, TypeAlias, TypeVar"]
    out = header(
        spec, "The table for the `transitions` machine", stdlib, ["reducer as r", "types as t"]
    )
    out += [
        "_E = TypeVar('_E')",
        "Memo: TypeAlias = dict[str, bool]  # the lazy facts read in this step, by spec name",
        "# A row: its effect, its guard over (state, event, memo) and its next state.",
        "Row: TypeAlias = tuple[t.Effect, Callable[[t.State, _E, Memo], bool], Callable[[t.State, _E], t.State]]",
        "",
        "",
        "def shape(state: t.State) -> str:",
        '    """The machine state: the tag or value of every axis."""',
        "    return " + " + '/' + ".join(_shape_parts(spec)),
        "",
        "",
        "STATES: tuple[str, ...] = (",
        *(f"    {shape_name(s)!r}," for s in _shapes(spec)),
        ")",
        f"INITIAL_SHAPE = {shape_name(_initial_shape(spec))!r}",
        "",
    ]
    if any(isinstance(t, TextType) for t in spec.types):
        out += ["_text = r._text  # a text read trimmed (None when absent or empty)", ""]
    out += sections(spec, _rows, _table)
    return "\n".join(out)


def _shape_parts(spec: Spec) -> list[str]:
    parts: list[str] = []
    for axis in spec.axes:
        if isinstance(axis, EnumAxis):
            parts.append(f"state.{ex.snake(axis.name)}")
        else:
            parts.append(f"state.{ex.snake(axis.name)}.{ex.snake(axis.tag)}")
    return parts


def _rows(spec: Spec) -> list[str]:
    """Each event's rows (typed by its event class), then ``ROWS``: row id -> row."""
    out = ["", "# row id: (effect, guard, next state), grouped by event.", "# fmt: off"]
    groups: list[str] = []
    for event in spec.events:
        rows = spec.rows_for(event.name)
        if not rows:
            continue
        group = f"_{ex.snake(event.name).upper()}"
        groups.append(group)
        out.append(f"{group}: dict[str, Row[t.{event_class(event.name)}]] = {{")
        for row in rows:
            guard, apply = _guard(row), state_expr(spec, row, "s", "e", "r.")
            entry = f"({_q(row.effect)}, lambda s, e, m: {guard}, lambda s, e: {apply})"
            out.append(f"    {_q(row.id)}: {_double_quoted(entry)},")
        out.append("}")
    out.append("# fmt: on")
    out += ["", "ROWS: dict[str, Row[Any]] = {" + ", ".join(f"**{g}" for g in groups) + "}", ""]
    return out


def _guard(row: Row) -> str:
    def memo_read(name: str) -> str:
        key = repr(name)
        return f"m[{key}] if {key} in m else m.setdefault({key}, e.facts.{ex.snake(name)})"

    code = ex.to_python(row.guard, {"state": "s", "event": "e", "facts": "e.facts"}, memo_read)
    return "True" if code == "True" else f"bool({code})"


def _table(spec: Spec) -> list[str]:
    table = {
        key: tuple((row.id, dest) for row, dest in rows)
        for key, rows in machine_table(spec).items()
    }
    out = [
        "",
        "# (trigger, shape) -> (row, next shape) for each row that may fire from the shape, in",
        "# table order; the first whose guard holds fires. Rows the shape rules out are left out,",
        "# and a row the shape makes certain ends its list. A `*` in a shape stands for every",
        "# value of its axis (the rows are the same for each); in a next shape it keeps the",
        "# source's value. `pi_context.statemachine.patterns.spell_out` gives every shape's rows.",
        "# fmt: off",
        "TABLE: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {",
    ]
    for (trigger, source), targets in fold(table, axis_values(spec)).items():
        listed = " ".join(f"({_q(row)}, {_q(dest)})," for row, dest in targets)
        out.append(f"    ({_q(trigger)}, {_q(source)}): ({listed}),")
    out += ["}", "# fmt: on", ""]
    return out


def _q(text: str) -> str:
    """A string literal in the formatter's style (double quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _double_quoted(code: str) -> str:
    """``code`` with its plain single-quoted string literals in double quotes (the formatter's
    style, which it cannot apply inside ``fmt: off``)."""
    out: list[str] = []
    last = 0
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type != tokenize.STRING:
            continue
        start, end = token.start[1], token.end[1]  # one line: columns are offsets
        text = token.string
        if text.startswith("'") and '"' not in text and "\\" not in text:
            out += [code[last:start], '"' + text[1:-1] + '"']
            last = end
    out.append(code[last:])
    return "".join(out)


def axis_values(spec: Spec) -> list[tuple[str, ...]]:
    """Each axis's values (enum axis) or tags (variant axis), axes in order."""
    per_axis: list[tuple[str, ...]] = []
    for axis in spec.axes:
        if isinstance(axis, EnumAxis):
            per_axis.append(axis.type.values)
        else:
            per_axis.append(tuple(v.tag for v in axis.variants))
    for values in per_axis:
        for value in values:
            if ANY in value or SEP in value:
                raise ValueError(
                    f"{spec.id}: a shape value may not hold {ANY!r} or {SEP!r}: {value!r}"
                )
    return per_axis


def _shapes(spec: Spec) -> list[tuple[str, ...]]:
    """Every shape: one value (enum axis) or tag (variant axis) per axis, axes in order."""
    return list(itertools.product(*axis_values(spec)))


def shape_name(shape: tuple[str, ...]) -> str:
    return "/".join(shape)


def _partial(spec: Spec, e: ex.Expr, shape: dict[str, str]) -> bool | None:
    """Three-valued evaluation of a guard knowing only the state's shape."""

    def value(x: ex.Expr) -> object:
        if isinstance(x, ex.Lit):
            return x.value
        if isinstance(x, ex.Ref) and x.target is not None and x.target.kind == "axis":
            axis = spec.axis(x.target.name)
            if isinstance(axis, EnumAxis):
                return shape[axis.name]
            assert isinstance(axis, VariantAxis)
            if x.target.member == axis.tag:
                return shape[axis.name]
            if x.target.member is not None:
                variant = axis.variant(shape[axis.name])
                assert variant is not None
                if variant.field(x.target.member) is None:
                    return ex.ABSENT
        return None

    if isinstance(e, ex.Lit):
        return bool(e.value)
    if isinstance(e, ex.Not):
        inner = _partial(spec, e.operand, shape)
        return None if inner is None else not inner
    if isinstance(e, ex.BoolOp):
        left, right = _partial(spec, e.left, shape), _partial(spec, e.right, shape)
        if e.op == "and":
            if left is False or right is False:
                return False
            return True if left and right else None
        if left is True or right is True:
            return True
        return False if left is False and right is False else None
    if isinstance(e, ex.Cmp):
        lv, rv = value(e.left), value(e.right)
        if lv is ex.ABSENT or rv is ex.ABSENT:
            return e.op == "!="
        if lv is None or rv is None:
            return None
        return (lv == rv) if e.op == "==" else (lv != rv)
    if isinstance(e, ex.In):
        v = value(e.operand)
        if v is None:
            return None
        return v is not ex.ABSENT and v in {i.value for i in e.items}
    return None


def _dest_shape(spec: Spec, row: Row, shape: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for axis, current in zip(spec.axes, shape, strict=True):
        nv = row.next_for(axis.name)
        if nv is None:
            out.append(current)
        elif isinstance(nv, NextLiteral):
            out.append(nv.value)
        elif isinstance(nv, NextCase):
            out.append(nv.apply(current))
        else:
            out.append(nv.tag)
    return tuple(out)


def machine_table(spec: Spec) -> dict[tuple[str, str], list[tuple[Row, str]]]:
    """(trigger, shape) -> (row, next shape) for every row that may fire from the shape, in
    table order: rows whose guard the shape rules out are left out, and a row whose guard the
    shape makes certain ends the list (later rows can never fire from there)."""
    out: dict[tuple[str, str], list[tuple[Row, str]]] = {}
    for event in spec.events:
        for shape in _shapes(spec):
            known = {a.name: s for a, s in zip(spec.axes, shape, strict=True)}
            rows: list[tuple[Row, str]] = []
            for row in spec.rows_for(event.name):
                verdict = _partial(spec, row.guard, known)
                if verdict is False:
                    continue
                rows.append((row, shape_name(_dest_shape(spec, row, shape))))
                if verdict is True:
                    break
            if rows:
                out[(event.name, shape_name(shape))] = rows
    return out


def _initial_shape(spec: Spec) -> tuple[str, ...]:
    out: list[str] = []
    for axis in spec.axes:
        value = spec.initial[axis.name]
        out.append(
            value[axis.tag]
            if isinstance(axis, VariantAxis) and isinstance(value, dict)
            else str(value)
        )
    return tuple(out)
