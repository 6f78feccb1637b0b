"""The Quint export: one readable Quint module per spec, for an independent checker.

Each module holds the spec's types (enums and ids as strings with their value sets), one
state variable per axis, the effect, event and row of the last step and the state before it
(so transition invariants are state predicates), one pure step function and one action per
event (every fact a nondeterministic choice; rows tried in order), every state and transition
invariant and every trace property as a ``val``, and the spec's ``why`` texts as comments.
``quint_module`` raises :class:`ExportError` on a construct of the spec model it does not
know, rather than export something that means less. The mapping: docs/quint.md.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable, Iterable

from pi_context.codegen.quint_names import (
    ExportError,
    atom_text,
    check_spec,
    module_file,
    progress_properties,
    qname,
    set_name,
    type_name,
    widen,
)
from pi_context.spec import expr as ex
from pi_context.spec import model as m

NO_ROW = "<no row>"
"""The row (and effect) a step reports when no row of its event matches (an incomplete table)."""
_RULE = "  // " + "-" * 64 + " "


# ---------------------------------------------------------------- the module


def _comment(text: str, indent: str, prefix: str = "") -> list[str]:
    """``text`` (a why) as ``//`` lines, wrapped at 96 columns."""
    words = " ".join((prefix + text).split())
    if not words:
        return []
    width = max(40, 96 - len(indent) - 3)
    return [
        f"{indent}// {line}"
        for line in textwrap.wrap(words, width, break_long_words=False, break_on_hyphens=False)
    ]


def _str(value: str) -> str:
    if '"' in value or "\\" in value or "\n" in value:
        raise ExportError(f"the value {value!r} cannot be a Quint string")
    return f'"{value}"'


def _set(values: Iterable[str]) -> str:
    return f"Set({', '.join(_str(v) for v in values)})"


class _Module:
    """Builds one spec's module text; names are checked for collisions as they are taken."""

    def __init__(self, spec: m.Spec) -> None:
        self.spec = spec
        self.lines: list[str] = []
        self.taken: dict[str, str] = {}
        self.declared = {t.name: t for t in spec.types}
        self.event_fields = self._union("fields")
        self.event_facts = self._union("facts")

    # --- names and types

    def take(self, name: str, what: str) -> str:
        if name in self.taken:
            raise ExportError(
                f"{self.spec.id}: {what} and {self.taken[name]} both become the Quint name "
                f"{name!r}; rename one of them in the spec"
            )
        self.taken[name] = what
        return name

    def qtype(self, t: m.FieldType) -> str:
        if isinstance(t, m.BoolType):
            return "bool"
        if self.declared.get(t.name) == t:
            return type_name(t.name)
        return "str"

    def domain(self, t: m.FieldType) -> str:
        if isinstance(t, m.BoolType):
            return "Bool"
        if self.declared.get(t.name) == t:
            return set_name(t.name)
        if isinstance(t, m.TextType):
            return _set(("", t.representative))
        return _set(t.values if isinstance(t, m.EnumType) else t.abstraction)

    @staticmethod
    def default(t: m.FieldType | None) -> str:
        return "false" if isinstance(t, m.BoolType) else '""'

    def _union(self, kind: str) -> dict[str, m.FieldType]:
        """Every event field (or fact) name with its one type across events."""
        found: dict[str, m.FieldType] = {}
        for event in self.spec.events:
            for f in event.fields if kind == "fields" else event.facts:
                other = found.setdefault(f.name, f.type)
                if isinstance(other, m.BoolType) != isinstance(f.type, m.BoolType):
                    raise ExportError(
                        f"{self.spec.id}: event {kind[:-1]} {f.name!r} is a bool in one event "
                        f"and a value in another; the Quint export needs one type per name"
                    )
                if other != f.type and not isinstance(other, m.BoolType):
                    found[f.name] = widen(other, f.type)
        return found

    def record_type(self, fields: dict[str, m.FieldType]) -> str:
        if not fields:
            return "{ none: bool }"  # Quint has no empty record
        return "{ " + ", ".join(f"{qname(n)}: {self.qtype(t)}" for n, t in fields.items()) + " }"

    def no_record(self, fields: dict[str, m.FieldType]) -> str:
        if not fields:
            return "{ none: false }"
        return "{ " + ", ".join(f"{qname(n)}: {self.default(t)}" for n, t in fields.items()) + " }"

    # --- emitting

    def emit(self, *lines: str) -> None:
        self.lines.extend(lines)

    def render(self) -> str:
        spec = self.spec
        name = self.take(qname(spec.module_name), "the module")
        self.emit(
            f"// {spec.id}: {spec.title}",
            f"// Generated by `pi-context generate` from {spec.id}.yaml "
            f"(sha256 {spec.sha256[:16]}...);",
            "// do not edit. How the spec language maps to Quint: docs/quint.md.",
        )
        if spec.provenance is not None:
            p = spec.provenance
            text = "our own spec" if p.source == "ours" else f"{p.repository} {p.release}"
            self.emit(*_comment(f"{text}. {p.note}", "", "Provenance: "))
        if spec.refines is not None:
            self.emit(*_comment(spec.refines.why, "", f"Refines {spec.refines.spec}: "))
        self.emit(f"module {name} {{")
        self.types()
        self.state()
        self.reducer()
        self.actions()
        self.invariants()
        self.emit("}")
        return "\n".join(self.lines) + "\n"

    def types(self) -> None:
        self.emit(_RULE + "types", "")
        for t in self.spec.types:
            values: tuple[str, ...]
            if isinstance(t, m.TextType):  # "" is absent, the representative present
                kind, values = "optional text", ("", t.representative)
            else:
                kind = "id" if isinstance(t, m.IdType) else "enum"
                values = t.abstraction if isinstance(t, m.IdType) else t.values
            self.emit(*_comment(t.why, "  ", f"{t.name} ({kind}): "))
            alias = self.take(type_name(t.name), f"type {t.name}")
            self.emit(f"  type {alias} = str")
            values_name = self.take(set_name(t.name), f"the values of {t.name}")
            self.emit(f"  pure val {values_name}: Set[{alias}] = {_set(values)}", "")
        self.emit('  // effect: what the host does after a step ("" before the first step)')
        for effect in self.spec.effects:
            host = f" [host: {effect.host}{', duplicate' if effect.duplicate else ''}]"
            carries = "".join(
                f" It carries {f.name} (the state's text the row names, before the step);"
                " the carried value is not modelled here."
                for f in effect.carries
            )
            self.emit(*_comment(effect.meaning + host + carries, "  ", f"{effect.name}: "))
        self.emit(
            f"  pure val {self.take('EFFECTS', 'the effects')}: Set[str] = "
            f"{_set(e.name for e in self.spec.effects)}",
            "",
        )

    def state(self) -> None:
        spec = self.spec
        self.emit(_RULE + "state", "")
        for axis in spec.axes:
            alias = self.take(type_name(axis.name), f"the type of axis {axis.name}")
            if isinstance(axis, m.EnumAxis):
                self.emit(*_comment(axis.why, "  ", f"{axis.name}: "))
                self.emit(f"  type {alias} = {self.qtype(axis.type)}")
                values = self.take(set_name(axis.name), f"the values of axis {axis.name}")
                self.emit(f"  pure val {values}: Set[str] = {_set(axis.type.values)}", "")
                continue
            self.emit(*_comment(axis.why, "  ", f"{axis.name}: "))
            self.emit(f"  // a variant axis: `{axis.tag}` names the variant; a field the variant")
            self.emit('  // does not carry holds "" (false for a bool) and reads as absent.')
            for v in axis.variants:
                carried = ", ".join(f"{f.name}: {f.type.name}" for f in v.fields)
                self.emit(f"  //   {v.tag}: {carried or 'no fields'}")
            fields: dict[str, m.FieldType] = {axis.tag: m.EnumType(axis.tag, ())}
            fields.update({n: self.field_type(axis, n) for n in axis.field_names()})
            if axis.tag in axis.field_names():
                raise ExportError(f"{spec.id}: axis {axis.name} has a field named like its tag")
            body = ", ".join(f"{qname(n)}: {self.qtype(t)}" for n, t in fields.items())
            self.emit(f"  type {alias} = {{ {body} }}")
            tags = self.take(
                set_name(axis.name) + "_" + set_name(axis.tag), f"the variants of axis {axis.name}"
            )
            self.emit(f"  pure val {tags}: Set[str] = {_set(v.tag for v in axis.variants)}", "")
        state = ", ".join(f"{qname(a.name)}: {type_name(a.name)}" for a in spec.axes)
        self.emit(f"  type {self.take('State', 'the state type')} = {{ {state} }}")
        self.emit(
            f"  type {self.take('Fields', 'the event fields type')} = "
            f"{self.record_type(self.event_fields)}"
        )
        self.emit(
            f"  type {self.take('Facts', 'the event facts type')} = "
            f"{self.record_type(self.event_facts)}"
        )
        self.emit('  // the last event: its name ("" before the first step), payload and facts;')
        self.emit("  // what another event does not carry holds its default")
        self.emit(
            f"  type {self.take('Event', 'the event type')} = "
            "{ kind: str, fields: Fields, facts: Facts }"
        )
        self.emit(
            f"  type {self.take('Step', 'the step type')} = "
            "{ state: State, effect: str, row: str }"
        )
        self.emit(
            f"  pure val {self.take('NO_FIELDS', 'no fields')}: Fields = "
            f"{self.no_record(self.event_fields)}"
        )
        self.emit(
            f"  pure val {self.take('NO_FACTS', 'no facts')}: Facts = "
            f"{self.no_record(self.event_facts)}"
        )
        self.emit(
            f"  pure val {self.take('INITIAL', 'the initial state')}: State = {self.initial()}", ""
        )
        for axis in spec.axes:
            self.emit(
                f"  var {self.take(qname(axis.name), f'axis {axis.name}')}: {type_name(axis.name)}"
            )
        self.emit("  // the state before the last step, and the last step's event, effect and row")
        self.emit(f"  var {self.take('pre', 'the previous state')}: State")
        self.emit(f"  var {self.take('event', 'the last event')}: Event")
        self.emit(f"  var {self.take('effect', 'the last effect')}: str")
        self.emit(f"  var {self.take('row', 'the last row')}: str")
        for prop in spec.traces:
            var = self.take(f"monitor_{qname(prop.id)}", f"the monitor of trace {prop.id}")
            self.emit(f"  var {var}: str  // the monitor state of trace property {prop.id}")
        post = ", ".join(f"{qname(a.name)}: {qname(a.name)}" for a in spec.axes)
        self.emit("  // the current state (`post` in a transition invariant)")
        self.emit(f"  val {self.take('post', 'the current state')}: State = {{ {post} }}", "")

    def field_type(self, axis: m.VariantAxis, name: str) -> m.FieldType:
        found = axis.field_type(name)
        assert found is not None
        types = [v.field(name) for v in axis.variants]
        kinds = {isinstance(f.type, m.BoolType) for f in types if f is not None}
        if len(kinds) > 1:
            raise ExportError(
                f"{self.spec.id}: field {name!r} of axis {axis.name} is a bool in one variant "
                f"and a value in another; the Quint export needs one type per field"
            )
        return found

    def initial(self) -> str:
        parts = []
        for axis in self.spec.axes:
            value = self.spec.initial[axis.name]
            if isinstance(axis, m.EnumAxis):
                parts.append(f"{qname(axis.name)}: {_str(str(value))}")
                continue
            assert isinstance(value, dict)
            parts.append(f"{qname(axis.name)}: {self.variant_value(axis, value)}")
        return "{ " + ", ".join(parts) + " }"

    def variant_value(self, axis: m.VariantAxis, wire: dict[str, object]) -> str:
        tag = str(wire[axis.tag])
        parts = [f"{qname(axis.tag)}: {_str(tag)}"]
        for name in axis.field_names():
            value = wire.get(name)
            if value is None:
                parts.append(f"{qname(name)}: {self.default(self.field_type(axis, name))}")
            elif isinstance(value, bool):
                parts.append(f"{qname(name)}: {'true' if value else 'false'}")
            else:
                parts.append(f"{qname(name)}: {_str(str(value))}")
        return "{ " + ", ".join(parts) + " }"

    # --- the reducer

    def reducer(self) -> None:
        self.emit(_RULE + "reducer", "")
        self.emit("  // One pure step per event: its rows in the spec's order, the first whose")
        self.emit("  // guard holds fires. Quint evaluates a guard whole: the order in which the")
        self.emit("  // reducer consults lazy facts is not observed here.", "")
        for event in self.spec.events:
            rows = self.spec.rows_for(event.name)
            fn = self.take(f"step_{qname(event.name)}", f"the step of {event.name}")
            self.emit(f"  pure def {fn}(s: State, e: Event): Step =")
            compile_guard = self.compiler("guard")
            for i, row in enumerate(rows):
                cause = f" (cause: {row.cause.text or row.cause.by})" if row.cause else ""
                self.emit(*_comment(row.why + cause, "    ", f"{row.id}: "))
                body = self.row_step(row)
                last = i == len(rows) - 1
                if last and isinstance(row.guard, ex.Lit) and row.guard.value is True:
                    self.emit(f"    {'else ' if i else ''}{body}")
                    break
                lead = "else if" if i else "if"
                self.emit(f"    {lead} ({compile_guard(row.guard)})", f"      {body}")
            else:
                no_row = f"{{ state: s, effect: {_str(NO_ROW)}, row: {_str(NO_ROW)} }}"
                self.emit("    // no row matches: an incomplete table (see table_complete)")
                self.emit(f"    {'else ' if rows else ''}{no_row}")
            self.emit("")

    def row_step(self, row: m.Row) -> str:
        raw = self.compiler("guard", text_values=True)
        parts = []
        for axis in self.spec.axes:
            nv = row.next_for(axis.name)
            current = f"s.{qname(axis.name)}"
            if nv is None:
                parts.append(f"{qname(axis.name)}: {current}")
            elif isinstance(nv, m.NextLiteral):
                parts.append(f"{qname(axis.name)}: {_str(nv.value)}")
            elif isinstance(nv, m.NextCase):
                text = current
                for old, new in reversed(nv.mapping):
                    text = f"if ({current} == {_str(old)}) {_str(new)} else {text}"
                parts.append(f"{qname(axis.name)}: {text}")
            else:
                assert isinstance(nv, m.NextVariant) and isinstance(axis, m.VariantAxis)
                given = dict(nv.fields)
                fields = [f"{qname(axis.tag)}: {_str(nv.tag)}"]
                for name in axis.field_names():
                    if name in given:
                        fields.append(f"{qname(name)}: {raw(given[name])}")
                    else:
                        fields.append(f"{qname(name)}: {self.default(self.field_type(axis, name))}")
                parts.append(f"{qname(axis.name)}: {{ {', '.join(fields)} }}")
        changed = [p for p, a in zip(parts, self.spec.axes, strict=True) if row.next_for(a.name)]
        if not changed:
            state = "s"
        elif len(changed) == len(parts):
            state = "{ " + ", ".join(parts) + " }"
        else:
            state = "{ ...s, " + ", ".join(changed) + " }"
        return f"{{ state: {state}, effect: {_str(row.effect)}, row: {_str(row.id)} }}"

    # --- actions

    def actions(self) -> None:
        spec = self.spec
        self.emit(_RULE + "actions", "")
        inits = [f"{qname(a.name)}' = INITIAL.{qname(a.name)}" for a in spec.axes]
        inits += [
            "pre' = INITIAL",
            'event\' = { kind: "", fields: NO_FIELDS, facts: NO_FACTS }',
            'effect\' = ""',
            'row\' = ""',
        ]
        inits += [f"monitor_{qname(p.id)}' = {_str(p.initial)}" for p in spec.traces]
        self.emit(f"  action {self.take('init', 'the init action')} = all {{")
        self.emit(*[f"    {line}," for line in inits], "  }", "")
        self.monitors()
        self.emit("  // take one step: the state moves to `pre`, the step's results are recorded")
        self.emit(
            f"  action {self.take('fire', 'the fire action')}(e: Event, r: Step): bool = all {{"
        )
        lines = [f"{qname(a.name)}' = r.state.{qname(a.name)}" for a in spec.axes]
        lines += ["pre' = post", "event' = e", "effect' = r.effect", "row' = r.row"]
        lines += [
            f"monitor_{qname(p.id)}' = next_{qname(p.id)}(monitor_{qname(p.id)}, post, r.state, "
            "e, r.effect)"
            for p in spec.traces
        ]
        self.emit(*[f"    {line}," for line in lines], "  }", "")
        names = []
        for event in spec.events:
            scope = " (decided by the published extension)" if event.scope != "reducer" else ""
            trigger = str(getattr(event, "trigger", "") or "")
            if trigger:
                kind = "the command" if trigger.startswith("/") else "the tool"
                scope += f" (raised by {kind} {trigger})"
            self.emit(*_comment(event.why + scope, "  ", f"{event.name}: "))
            if event.lazy_order:
                order = ", ".join(event.lazy_order)
                fixed = "" if event.lazy_order_fixed else " (the guards fix it per branch)"
                self.emit(f"  // lazy facts, consulted by the reducer in the order {order}{fixed};")
                self.emit("  // here each is a nondeterministic choice like the others")
            action = self.take(f"on_{qname(event.name)}", f"the action of {event.name}")
            names.append(action)
            self.emit(f"  action {action} = {{")
            for f in (*event.fields, *event.facts):
                kind = "fact" if f in event.facts else "field"
                lazy = ", lazy" if f.lazy else ""
                if f.host:
                    lazy += f", the host's {f.host}"
                local = f"{kind}_{qname(f.name)}"
                self.emit(
                    f"    nondet {local} = {self.domain(f.type)}.oneOf()  "
                    f"// {kind}{lazy}: {' '.join(f.why.split())}"
                )
            fields = ", ".join(f"{qname(f.name)}: field_{qname(f.name)}" for f in event.fields)
            facts = ", ".join(f"{qname(f.name)}: fact_{qname(f.name)}" for f in event.facts)
            fields_value = f"{{ ...NO_FIELDS, {fields} }}" if fields else "NO_FIELDS"
            facts_value = f"{{ ...NO_FACTS, {facts} }}" if facts else "NO_FACTS"
            self.emit(
                f"    val e = {{ kind: {_str(event.name)}, fields: {fields_value}, "
                f"facts: {facts_value} }}"
            )
            self.emit(f"    fire(e, step_{qname(event.name)}(post, e))", "  }", "")
        self.emit(f"  action {self.take('step', 'the step action')} = any {{")
        self.emit(*[f"    {name}," for name in names], "  }", "")

    def monitors(self) -> None:
        for prop in self.spec.traces:
            fn = self.take(f"next_{qname(prop.id)}", f"the monitor step of {prop.id}")
            self.emit(*_comment(prop.why, "  ", f"trace property {prop.id}: "))
            self.emit(
                f"  pure def {fn}(m: str, m_pre: State, m_post: State, m_event: Event, "
                "m_effect: str): str ="
            )
            compile_step = self.compiler("monitor")
            for i, step in enumerate(prop.steps):
                source = f"m == {_str(step.source)} and " if step.source is not None else ""
                lead = "else if" if i else "if"
                when = atom_text(compile_step, step.when) if source else compile_step(step.when)
                self.emit(f"    {lead} ({source}{when}) {_str(step.target)}")
            self.emit("    else m", "")

    # --- invariants

    def invariants(self) -> None:
        spec = self.spec
        self.emit(_RULE + "invariants", "")
        names: list[str] = []
        state = self.compiler("state")
        for inv in spec.state_invariants:
            name = self.take(qname(inv.id), f"invariant {inv.id}")
            names.append(name)
            self.emit(*_comment(inv.why, "  ", "state invariant: "))
            self.emit(f"  val {name} = {state(inv.expr)}", "")
        transition = self.compiler("transition")
        for tinv in spec.transition_invariants:
            name = self.take(qname(tinv.id), f"invariant {tinv.id}")
            names.append(name)
            on = f"event.kind.in({_set(tinv.events)})"
            when = f" and {atom_text(transition, tinv.when)}" if tinv.when is not None else ""
            self.emit(
                *_comment(tinv.why, "  ", f"transition invariant on {', '.join(tinv.events)}: ")
            )
            self.emit(
                f"  val {name} =",
                f"    ({on}{when})",
                f"    implies {atom_text(transition, tinv.then)}",
                "",
            )
        for prop in spec.traces:
            name = self.take(f"trace_{qname(prop.id)}", f"trace property {prop.id}")
            names.append(name)
            self.emit(
                *_comment(prop.why, "  ", "trace property (its monitor never reaches violation): ")
            )
            self.emit(f'  val {name} = monitor_{qname(prop.id)} != "violation"', "")
        self.progress()
        complete = self.take("table_complete", "the completeness check")
        names.append(complete)
        self.emit("  // every step found a row (the loader already rejects an incomplete table)")
        self.emit(f"  val {complete} = row != {_str(NO_ROW)}", "")
        self.emit("  // every invariant above, for `quint run --invariant all_invariants`")
        self.emit(f"  val {self.take('all_invariants', 'the conjunction')} = and {{")
        self.emit(*[f"    {n}," for n in names], "  }")

    def progress(self) -> None:
        """Progress (leads-to) properties as ``temporal`` definitions: Quint's simulator
        checks no temporal property, so these are for a reader and a temporal checker; our
        model checker's lasso search is what checks them here."""
        state = self.compiler("state")
        for prop in progress_properties(self.spec):
            name = self.take(f"progress_{qname(prop.id)}", f"progress property {prop.id}")
            fair = "; ".join(
                f"{f.event} with {f.when_text}" if f.when is not None else f.event
                for f in prop.fair
            )
            self.emit(*_comment(prop.why, "  ", "progress property: "))
            self.emit(*_comment(fair or "none", "  ", "assuming weak fairness on: "))
            when, goal = state(prop.when), state(prop.leads_to)
            self.emit(f"  temporal {name} = always(({when}) implies eventually({goal}))", "")

    # --- expressions

    def compiler(self, context: str, *, text_values: bool = False) -> Callable[[ex.Expr], str]:
        """Compile checked expressions of ``context`` (guard, state, transition, monitor).
        A text reads as whether it is present (not ""), or with ``text_values`` as itself
        (a next-state value)."""

        # Where each name lives: a guard reads its step's `s` and `e`, a state invariant
        # the variables, a transition invariant `pre` and the variables, a monitor step
        # its parameters.
        names = {
            "guard": ("s", "s", "s", "e", "effect"),
            "state": ("", "", "post", "event", "effect"),
            "transition": ("pre", "", "post", "event", "effect"),
            "monitor": ("m_pre", "m_post", "m_post", "m_event", "m_effect"),
        }[context]

        def ref(t: ex.Target) -> str:
            pre, post, post_state, event, effect = names
            if t.kind == "axis":
                where = pre if t.where == "pre" else post
                base = f"{where}.{qname(t.name)}" if where else qname(t.name)
                return base if t.member is None else f"{base}.{qname(t.member)}"
            if t.kind == "state":
                return pre if t.where == "pre" else post_state
            if t.kind == "effect":
                return effect
            if t.kind == "event_type":
                return f"{event}.kind"
            if t.kind in ("field", "fact"):
                return f"{event}.{'fields' if t.kind == 'field' else 'facts'}.{qname(t.name)}"
            raise ExportError(f"{self.spec.id}: the Quint export does not know {t.kind!r} refs")

        def optional(e: ex.Expr) -> tuple[str, bool] | None:
            """For a reference to a variant field some variants lack: (presence test, is bool)."""
            if not isinstance(e, ex.Ref) or e.target is None or e.target.kind != "axis":
                return None
            t = e.target
            axis = self.spec.axis(t.name)
            if not isinstance(axis, m.VariantAxis) or t.member in (None, axis.tag):
                return None
            assert t.member is not None
            carriers = axis.carriers(t.member)
            if len(carriers) == len(axis.variants):
                return None
            tag = ref(dataclasses.replace(t, member=axis.tag))
            bool_field = isinstance(self.field_type(axis, t.member), m.BoolType)
            return f"{tag}.in({_set(carriers)})", bool_field

        def go(e: ex.Expr, parent: str = "") -> str:
            """``parent``: the boolean operator around ``e`` ("" at the top or in a call);
            comparisons bind tighter than ``and``, which binds tighter than ``or``, but mixed
            chains are bracketed anyway, as the spec's own rendering does."""
            if isinstance(e, ex.Lit):
                if isinstance(e.value, bool):
                    return "true" if e.value else "false"
                return _str(e.value)
            if isinstance(e, ex.Ref):
                if e.target is None:
                    raise ExportError(f"{self.spec.id}: an unchecked expression")
                if e.target.text and not text_values:
                    return f'({ref(e.target)} != "")'
                return ref(e.target)
            if isinstance(e, ex.Not):
                return f"not({go(e.operand)})"
            if isinstance(e, ex.BoolOp):
                text = f"{go(e.left, e.op)} {e.op} {go(e.right, e.op)}"
                return f"({text})" if parent not in ("", e.op) else text
            if isinstance(e, ex.Cmp):
                left, right = atom(e.left), atom(e.right)
                opts = [o for o in (optional(e.left), optional(e.right)) if o is not None]
                text = f"{left} {e.op} {right}"
                # "" (false) stands for an absent field: exact unless both sides may be
                # absent or the field is a bool; then presence is tested (absent == x is
                # false, absent != x is true, whatever x is).
                if opts and (len(opts) == 2 or opts[0][1]):
                    present = " and ".join(test for test, _ in opts)
                    if e.op == "==":
                        text = f"{present} and {text}"
                        return f"({text})" if parent not in ("", "and") else text
                    return f"(not({present}) or {text})"
                return text
            if isinstance(e, ex.In):
                opt = optional(e.operand)
                text = f"{atom(e.operand)}.in({_set(str(i.value) for i in e.items)})"
                if opt is not None and opt[1]:
                    text = f"{opt[0]} and {text}"
                    return f"({text})" if parent not in ("", "and") else text
                return text
            raise ExportError(f"{self.spec.id}: the Quint export does not know {e!r}")

        def atom(e: ex.Expr) -> str:
            text = go(e)
            return text if isinstance(e, ex.Lit | ex.Ref) else f"({text})"

        return go


def quint_module(spec: m.Spec) -> str:
    """The Quint module of ``spec``; :class:`ExportError` on a construct it does not carry."""
    check_spec(spec)
    return _Module(spec).render()


def quint_outputs(specs: list[m.Spec]) -> dict[str, str]:
    """``pi-context generate --target quint``: one module per spec under ``quint/generated``."""
    return {module_file(spec): quint_module(spec) for spec in specs}
