"""Emit the direct wire reducer of a spec's ``wire.py``: ``step_wire``/``reduce_wire``.

JSON hosts (``pi-context serve``, the conformance server, any dict-in/dict-out caller) hold
wire values, not typed ones. Parsing into frozen dataclasses, reducing and converting back
costs more than the decision itself, so this reducer decides straight from the wire values:

- the input is accepted only when it is *exactly* the canonical shape — plain ``dict``\\s of
  the right size, ``str`` ids and enumeration values from precomputed sets, real ``bool``
  facts — which the checks below establish without building anything;
- the rows are the spec's guards compiled over those values, tried in table order with the
  same short-circuits as the typed reducer, so lazy facts are consulted in the same order
  (and noted in ``consulted`` when the caller asks);
- the next state is built as fresh wire dicts in the canonical key order (the order
  ``state_to_wire`` writes), never sharing the caller's objects.

Anything else — another mapping type, a ``str`` subclass, a missing key, a bad value — goes
through the typed path (``state_from_wire`` → ``reducer.step`` → ``state_to_wire``), which
either gives the same answer or raises the :class:`WireError` naming the path. Equality with
the typed path is tested exhaustively over the finite abstraction and by properties on random
(valid and invalid) wire inputs.
"""

from __future__ import annotations

from pi_context.codegen.emit import (
    case_maps,
    py_def,
    row_chain,
    sections,
    variant_axes,
)
from pi_context.spec import expr as ex
from pi_context.spec import model as m
from pi_context.spec.interpret import variant_fields


def step_functions(spec: m.Spec) -> list[str]:
    """The generated source lines (module level) of the direct wire reducer."""
    out = [
        "",
        "# ---------------------------------------------------------------- direct wire reducer",
        "",
    ]
    if any(_is_text(f.type) for e in spec.events for f in e.facts):
        # a text among the facts: every step takes the typed path
        return out + sections(spec, _lazy_table, _typed_steps, _carried_wire, _typed_fallback)
    parts = [_tables, _helpers, _step_wire, _event_functions, _event_table, _typed_fallback]
    if any(_is_text(t) for t in spec.types):
        # an optional text (a follow-up prompt) is decided on directly too: a record holds it
        # only when present, so its size is checked with the texts it holds; what an effect
        # carries is asked of the typed path, for the few rows that carry it
        parts.append(_carried_wire)
    return out + sections(spec, *parts)


def _is_text(t: m.FieldType) -> bool:
    return isinstance(t, m.TextType)


def _lazy_table(spec: m.Spec) -> list[str]:
    lazy = {
        e.name: {ex.snake(f.name): f.name for f in e.facts if f.lazy}
        for e in spec.events
        if any(f.lazy for f in e.facts)
    }
    return [
        f"_LAZY: dict[str, dict[str, str]] = {lazy!r}  # event -> attribute -> fact",
        "",
        "",
        "def _note(consulted: list[str], fact: str) -> bool:",
        '    """Record the first read of a lazy fact."""',
        "    if fact not in consulted:",
        "        consulted.append(fact)",
        "    return True",
        "",
    ]


def _typed_steps(spec: m.Spec) -> list[str]:
    return [
        "",
        "def step_wire(",
        "    state: object, event: object, consulted: list[str] | None = None",
        f") -> {_RESULT}:",
        '    """One transition on wire values: the next wire state, the effect and the row id',
        "    (parsed, reduced and converted back; a wrong shape raises the WireError naming the",
        '    path). ``consulted`` (when given) receives the lazy facts read, in order."""',
        "    return _step_typed(state, event, consulted)",
        "",
        "",
        "def reduce_wire(state: object, event: object) -> tuple[dict[str, Any], t.Effect]:",
        '    """The pure reducer on wire values: the next wire state and the effect."""',
        "    next_state, effect, _row = _step_typed(state, event, None)",
        "    return next_state, effect",
        "",
    ]


def _carried_wire(spec: m.Spec) -> list[str]:
    return [
        "",
        "def carried_wire(state: object, row: str) -> dict[str, str]:",
        '    """The values the effect of ``row`` carries when it fires in the wire ``state``',
        '    (present ones only: a follow-up prompt)."""',
        "    return _reducer.carried(row, state_from_wire(state))",
        "",
    ]


# ---------------------------------------------------------------- names


def _state_var(axis_name: str) -> str:
    return f"v_{ex.snake(axis_name)}"


def _tag_var(axis_name: str) -> str:
    return f"t_{ex.snake(axis_name)}"


def _set_name(t: m.EnumType) -> str:
    return f"_{ex.snake(t.name).upper()}_VALUES"


def _enum_types(spec: m.Spec) -> list[m.EnumType]:
    """Every enumeration a wire value is checked against, once each (by name)."""
    found: dict[str, m.EnumType] = {}

    def add(t: m.FieldType) -> None:
        if isinstance(t, m.EnumType):
            found.setdefault(t.name, t)

    for axis in spec.axes:
        if isinstance(axis, m.EnumAxis):
            add(axis.type)
        else:
            for variant in axis.variants:
                for f in variant.fields:
                    add(f.type)
    for event in spec.events:
        for f in (*event.fields, *event.facts):
            add(f.type)
    return list(found.values())


# ---------------------------------------------------------------- module tables


def _tables(spec: m.Spec) -> list[str]:
    out: list[str] = []
    for t in _enum_types(spec):
        values = ", ".join(repr(v) for v in t.values)
        out.append(f"{_set_name(t)} = frozenset(({values},))")
    for axis in variant_axes(spec):
        upper = ex.snake(axis.name).upper()
        sizes = ", ".join(
            f"{v.tag!r}: {len(v.fields) + 1}" for v in axis.variants if not _textual(v)
        )
        out.append(f"_{upper}_SIZES = {{{sizes}}}  # tag -> keys on the wire")
        textual = [v.tag for v in axis.variants if _textual(v)]
        if textual:  # their size depends on the texts they hold: checked with the fields
            items = ", ".join(repr(tag) for tag in textual)
            out.append(f"_{upper}_TEXTUAL = frozenset(({items},))")
        bare = [v.tag for v in axis.variants if not v.fields]
        if bare:
            items = ", ".join(repr(tag) for tag in bare)
            out.append(f"_{upper}_BARE = frozenset(({items},))")
    if any(_is_text(t) for t in spec.types):
        out.append("_text = _reducer._text  # a text as the table reads it: trimmed, or None")
    # the reducer's case maps (one global lookup per use, as for a map of this module's own)
    out += [f"{name} = _reducer.{name}" for name in dict.fromkeys(case_maps(spec).values())]
    lazy = {
        e.name: {ex.snake(f.name): f.name for f in e.facts if f.lazy}
        for e in spec.events
        if any(f.lazy for f in e.facts)
    }
    out.append(f"_LAZY: dict[str, dict[str, str]] = {lazy!r}  # event -> attribute -> fact")
    return out


def _textual(variant: m.Variant) -> bool:
    return any(_is_text(f.type) for f in variant.fields)


def _record(items: list[str], texts: list[tuple[str, str]]) -> str:
    """A wire record: its items in order, then each optional text (name, value code) added
    only when present, as ``state_to_wire`` writes it."""
    code = "{" + ", ".join(items) + "}"
    for name, value in texts:
        code = f"with_text({code}, {name!r}, {value})"
    return code


def _helpers(spec: m.Spec) -> list[str]:
    out = [
        "",
        "",
        "def _note(consulted: list[str], fact: str) -> bool:",
        '    """Record the first read of a lazy fact; always true, so it can sit in a guard."""',
        "    if fact not in consulted:",
        "        consulted.append(fact)",
        "    return True",
        "",
    ]
    for axis in variant_axes(spec):
        fn = ex.snake(axis.name)
        out += py_def(
            f"_{fn}_copy(value: dict[str, Any], tag: str) -> dict[str, Any]",
            f"An unchanged {axis.name} value, rebuilt in canonical key order.",
        )
        for n, variant in enumerate(axis.variants):
            items = [f"{axis.tag!r}: {variant.tag!r}"] + [
                f"{f.name!r}: value[{f.name!r}]" for f in variant.fields if not _is_text(f.type)
            ]
            texts = [(f.name, f"value.get({f.name!r})") for f in variant.fields if _is_text(f.type)]
            out += [
                f"    {'if' if n == 0 else 'elif'} tag == {variant.tag!r}:",
                f"        return {_record(items, texts)}",
            ]
        out += ["    raise AssertionError(tag)", ""]
    return out


# ---------------------------------------------------------------- value checks


def _check(t: m.FieldType, value: str, var: str) -> str:
    """A condition that holds exactly when ``value`` is a canonical wire value of ``t``;
    ``var`` names a fresh local when the value is needed twice."""
    if t == m.BOOL:
        return f"{value}.__class__ is bool"
    if _is_text(t):  # an optional text: absent, or a string
        if value.isidentifier():
            return f"({value} is None or {value}.__class__ is str)"
        return f"(({var} := {value}) is None or {var}.__class__ is str)"
    if isinstance(t, m.EnumType):
        if value.isidentifier():  # already a local: no need for another
            return f"{value}.__class__ is str and {value} in {_set_name(t)}"
        return f"({var} := {value}).__class__ is str and {var} in {_set_name(t)}"
    return f"{value}.__class__ is str"


def _state_checks(spec: m.Spec) -> list[str]:
    """Conditions (to be and-ed) that accept exactly the canonical wire states."""
    conds: list[str] = []
    for axis in spec.axes:
        var = _state_var(axis.name)
        if isinstance(axis, m.EnumAxis):
            conds.append(f"{var}.__class__ is str and {var} in {_set_name(axis.type)}")
            continue
        tag = _tag_var(axis.name)
        upper = ex.snake(axis.name).upper()
        size = f"_{upper}_SIZES.get({tag}) == len({var})"
        if any(_textual(v) for v in axis.variants):
            size = f"({size} or {tag} in _{upper}_TEXTUAL)"
        conds.append(f"{tag}.__class__ is str and {size}")
        options: list[str] = []
        if any(not v.fields for v in axis.variants):
            options.append(f"{tag} in _{upper}_BARE")
        for variant in axis.variants:
            if not variant.fields:
                continue
            parts = [f"{tag} == {variant.tag!r}"]
            if _textual(variant):
                plain = 1 + sum(not _is_text(f.type) for f in variant.fields)
                present = "".join(
                    f" + ({var}.get({f.name!r}) is not None)"
                    for f in variant.fields
                    if _is_text(f.type)
                )
                parts.append(f"len({var}) == {plain}{present}")
            for f in variant.fields:
                local = f"x_{ex.snake(axis.name)}_{ex.snake(f.name)}"
                parts.append(_check(f.type, f"{var}.get({f.name!r})", local))
            options.append("(" + " and ".join(parts) + ")")
        conds.append("(" + " or ".join(options) + ")")
    return conds


# ---------------------------------------------------------------- step_wire


def _params(spec: m.Spec) -> list[str]:
    """The decided-on state parts handed to each event function."""
    out: list[str] = []
    for axis in spec.axes:
        out.append(_state_var(axis.name))
        if isinstance(axis, m.VariantAxis):
            out.append(_tag_var(axis.name))
    return out


_RESULT = "tuple[dict[str, Any], t.Effect, str]"


def _step_wire(spec: m.Spec) -> list[str]:
    out = [
        "",
        "def step_wire(",
        "    state: object, event: object, consulted: list[str] | None = None",
        f") -> {_RESULT}:",
        '    """One transition on wire values: the next wire state, the effect and the row id.',
        "",
        "    Decides from the JSON values directly; input the fast checks do not accept exactly",
        "    goes through the typed path, which answers the same or raises the WireError naming",
        "    the path. ``consulted`` (when given) receives the lazy facts read, in order.",
        '    """',
    ]
    out += _dispatch(spec, "found", "consulted")
    out += [
        "    return _step_typed(state, event, consulted)",
        "",
        "",
        "def reduce_wire(state: object, event: object) -> tuple[dict[str, Any], t.Effect]:",
        '    """The pure reducer on wire values: the next wire state and the effect (the same',
        '    decision as ``step_wire``, kept separate to spare a call per step)."""',
    ]
    # reduce_wire keeps its own copy of the checks: through step_wire it takes 3-5% longer per
    # step (benchmarks/wire_reduce.py prints both; docs/benchmarks/layout.md)
    out += _dispatch(spec, "found[0], found[1]", "None")
    out += [
        "    next_state, effect, _row = _step_typed(state, event, None)",
        "    return next_state, effect",
        "",
    ]
    return out


def _event_table(spec: m.Spec) -> list[str]:
    """Event type -> its decision (after the functions it names)."""
    table = ", ".join(f"{e.name!r}: _{ex.snake(e.name)}_wire" for e in spec.events)
    return ["", f"_EVENT_WIRE: dict[str, Callable[..., {_RESULT} | None]] = {{{table}}}", ""]


def _dispatch(spec: m.Spec, returned: str, consulted: str) -> list[str]:
    """Check the state, then hand it to the event's function (which checks the event)."""
    out = [
        "    s: Any = state",
        "    e: Any = event",
        f"    if s.__class__ is dict and e.__class__ is dict and len(s) == {len(spec.axes)}:",
    ]
    for axis in spec.axes:
        var = _state_var(axis.name)
        out.append(f"        {var}: Any = s.get({axis.name!r})")
        if isinstance(axis, m.VariantAxis):
            out.append(
                f"        {_tag_var(axis.name)}: Any = {var}.get({axis.tag!r}) "
                f"if {var}.__class__ is dict else None"
            )
    conds = _state_checks(spec)
    args = ", ".join([*_params(spec), "e", consulted])
    out += [
        "        kind = e.get('type')",
        "        if kind.__class__ is str and (" + " and ".join(f"({c})" for c in conds) + "):",
        "            decide = _EVENT_WIRE.get(kind)",
        "            if decide is not None:",
        f"                found = decide({args})",
        "                if found is not None:",
        f"                    return {returned}",
    ]
    return out


# ---------------------------------------------------------------- one event


def _field_var(f: m.Field) -> str:
    return _field_var_named(f.name)


def _field_var_named(name: str) -> str:
    return f"e_{ex.snake(name)}"


def _fact_var(f: m.Field) -> str:
    return f"f_{ex.snake(f.name)}"


def _event_functions(spec: m.Spec) -> list[str]:
    return [line for event in spec.events for line in _event_function(spec, event)]


def _event_function(spec: m.Spec, event: m.Event) -> list[str]:
    params = ", ".join(f"{p}: Any" for p in _params(spec))
    size = 1 + len(event.fields) + (1 if event.facts else 0)
    out = [
        "",
        f"def _{ex.snake(event.name)}_wire(",
        f"    {params}, e: dict[str, Any], consulted: list[str] | None",
        f") -> {_RESULT} | None:",
        f'    """{event.name} on a checked wire state; None when the event is not canonical."""',
    ]
    reads = [f"{_field_var(f)} = e.get({f.name!r})" for f in event.fields]
    texts = [f for f in event.fields if _is_text(f.type)]
    size -= len(texts)  # each optional text is a key only when present
    present = "".join(f" + ({_field_var(f)} is not None)" for f in texts)
    checks = [f"len(e) == {size}{present}"]
    checks += [_check(f.type, _field_var(f), f"x_{ex.snake(f.name)}") for f in event.fields]
    if event.facts:
        reads.append("facts = e.get('facts')")
        checks.append(f"facts.__class__ is dict and len(facts) == {len(event.facts)}")
    out += [f"    {r}" for r in reads]
    if event.facts:
        out += [f"    if {_negated(checks)}:", "        return None"]
        out += [f"    {_fact_var(f)} = facts.get({f.name!r})" for f in event.facts]
        bools = [_fact_var(f) for f in event.facts if f.type == m.BOOL]
        fchecks: list[str] = []
        if bools:
            fchecks.append(" is ".join(f"{b}.__class__" for b in bools) + " is bool")
        fchecks += [
            _check(f.type, _fact_var(f), f"x_{ex.snake(f.name)}")
            for f in event.facts
            if f.type != m.BOOL
        ]
        out += [f"    if {_negated(fchecks)}:", "        return None"]
    else:
        out += [f"    if {_negated(checks)}:", "        return None"]
    return out + row_chain(
        spec,
        event.name,
        lambda row: _python(row.guard, spec),
        lambda row: f"{_next_state(spec, row)}, {row.effect!r}, {row.id!r}",
    )


def _negated(conds: list[str]) -> str:
    """``not (a and b ...)``, with a lone comparison flipped instead (as a linter prefers)."""
    if len(conds) == 1 and " and " not in conds[0]:
        for op, flipped in ((" is ", " is not "), (" == ", " != ")):
            if conds[0].count(op) == 1 and conds[0].count(" is ") + conds[0].count(" == ") == 1:
                return conds[0].replace(op, flipped)
    return "not (" + " and ".join(conds) + ")"


def _python(expr: ex.Expr, spec: m.Spec, value: bool = False) -> str:
    """A guard or (``value``) a next-state value compiled over the locals of an event
    function."""

    def ref(target: ex.Target, parent: int) -> str:
        if target.text:
            # a text is read trimmed (None when empty); a condition asks whether it is present
            if target.kind == "field":
                raw = _field_var_named(target.name)
            else:
                raw = f"{_state_var(target.name)}.get({target.member!r})"
            read = f"_text({raw})"
            return read if value else ex.parenthesised(f"{read} is not None", parent)
        if target.kind == "axis":
            axis = next(a for a in spec.axes if a.name == target.name)
            if target.member is None:
                assert isinstance(axis, m.EnumAxis), "a whole variant value in an expression"
                return _state_var(axis.name)
            assert isinstance(axis, m.VariantAxis)
            if target.member == axis.tag:
                return _tag_var(axis.name)
            # an absent member reads as None, like the typed classes' None defaults
            return f"{_state_var(axis.name)}.get({target.member!r})"
        if target.kind == "field":
            return f"e_{ex.snake(target.name)}"
        if target.kind == "fact" and target.lazy:
            name = f"f_{ex.snake(target.name)}"
            text = f"(consulted is None or _note(consulted, {target.name!r})) and {name}"
            return ex.parenthesised(text, parent)
        if target.kind == "fact":
            return f"f_{ex.snake(target.name)}"
        raise AssertionError(f"{target.kind} is not available here")

    return ex.compile_python(expr, ref)


def _next_state(spec: m.Spec, row: m.Row) -> str:
    items: list[str] = []
    for axis in spec.axes:
        nv = row.next_for(axis.name)
        var = _state_var(axis.name)
        if nv is None:
            value = (
                var
                if isinstance(axis, m.EnumAxis)
                else f"_{ex.snake(axis.name)}_copy({var}, {_tag_var(axis.name)})"
            )
        elif isinstance(nv, m.NextLiteral):
            value = repr(nv.value)
        elif isinstance(nv, m.NextCase):
            value = f"{case_maps(spec)[(row.id, axis.name)]}[{var}]"
        else:
            assert isinstance(nv, m.NextVariant) and isinstance(axis, m.VariantAxis)
            parts = [f"{axis.tag!r}: {nv.tag!r}"]
            texts: list[tuple[str, str]] = []
            for name, ref in variant_fields(axis, nv):
                if isinstance(ref, ex.Ref) and ref.target is not None and ref.target.text:
                    texts.append((name, _python(ref, spec, value=True)))  # trimmed, or absent
                    continue
                code = _python(ref, spec)
                if (
                    isinstance(ref, ex.Ref)
                    and ref.target is not None
                    and ref.target.kind == "axis"
                    and ref.target.member is not None
                ):
                    # copied from the current variant: the table analysis proved it present
                    code = f"{_state_var(ref.target.name)}[{ref.target.member!r}]"
                parts.append(f"{name!r}: {code}")
            value = _record(parts, texts)
        items.append(f"{axis.name!r}: {value}")
    return "{" + ", ".join(items) + "}"


# ---------------------------------------------------------------- the typed fallback


def _typed_fallback(spec: m.Spec) -> list[str]:
    return [
        "",
        "class _Reads:",
        '    """Typed facts that note each first read of a lazy fact (for ``consulted``)."""',
        "",
        "    def __init__(self, facts: Any, lazy: dict[str, str], consulted: list[str]) -> None:",
        "        self._facts = facts",
        "        self._lazy = lazy",
        "        self._consulted = consulted",
        "",
        "    def __getattr__(self, attribute: str) -> Any:",
        "        fact = self._lazy.get(attribute)",
        "        if fact is not None:",
        "            _note(self._consulted, fact)",
        "        return getattr(self._facts, attribute)",
        "",
        "",
        "def _step_typed(",
        "    state: object, event: object, consulted: list[str] | None",
        f") -> {_RESULT}:",
        '    """The reference path: parse (raising the located WireError), reduce, convert."""',
        "    typed_state = state_from_wire(state)",
        "    typed_event: Any = event_from_wire(event)",
        "    lazy = _LAZY.get(typed_event.type)",
        "    if consulted is not None and lazy:",
        "        reads = _Reads(typed_event.facts, lazy, consulted)",
        "        typed_event = dataclasses.replace(typed_event, facts=reads)",
        "    next_state, effect, row = _reducer.step(typed_state, typed_event)",
        "    return state_to_wire(next_state), effect, row",
        "",
    ]
