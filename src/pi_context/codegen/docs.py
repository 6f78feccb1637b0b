"""Render a spec's reference page (``docs/reset-control/<version>.md``) from the spec and the
model checker's results, so the table, invariants, reachable states, diagrams and witness
traces in the docs cannot drift from the semantics."""

from __future__ import annotations

from pathlib import Path

from pi_context.spec import expr as ex
from pi_context.spec import model as m
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import render_event, render_state
from pi_context.spec.modelcheck import ModelCheckResult, model_check


def restored_invariants(base: m.Spec, spec: m.Spec) -> str:
    """The invariants of ``spec`` that ``base``'s table violates, each with ``base``'s shortest
    counterexample: what a proposal restores. Empty when the states differ in shape (a
    projection) or nothing is violated."""
    from dataclasses import replace

    ours = spec.provenance is not None and spec.provenance.source == "ours"
    if spec.refines is None or spec.refines.drop or spec.refines.map or not ours:
        return ""
    mixed = replace(
        base,
        state_invariants=spec.state_invariants,
        transition_invariants=spec.transition_invariants,
        traces=spec.traces,
        expect_all_reachable=False,
    )
    violations = model_check(mixed, show=False).violations
    if not violations:
        return ""
    out = [
        "## Invariants this spec restores",
        "",
        f"Invariants of `{spec.id}` that `{base.id}` violates, each with its shortest",
        f"counterexample under `{base.id}`'s table (the rows named are `{base.id}`'s).",
    ]
    for counter in violations:
        out += ["", f"### `{counter.property}`", "", "```text", counter.render(base), "```"]
    return "\n".join(out) + "\n"


def provenance_section(spec: m.Spec) -> list[str]:
    """What the spec reproduces: the upstream file, release and commit, or our own reading."""
    prov = spec.provenance
    if prov is None:
        return ["## Provenance", "", "The spec declares no provenance.", ""]
    out = ["## Provenance", ""]
    if prov.source == "ours":
        return [*out, f"Our own spec, reproducing no published reducer. {prov.note}", ""]
    out += [
        "Reproduces the published code below.",
        "",
        "| | |",
        "| --- | --- |",
        f"| repository | `{prov.repository}` |",
        f"| path | `{prov.path}` |",
        f"| release | `{prov.release}` |",
        f"| commit | `{prov.commit}` |",
    ]
    if prov.package:
        out.append(f"| package | `{prov.package}` |")
    if prov.note:
        out += ["", _cell(prov.note)]
    return [*out, ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _type(t: m.FieldType) -> str:
    if t == m.BOOL:
        return "bool"
    if isinstance(t, m.EnumType):
        return " \\| ".join(f"`{v}`" for v in t.values)
    if isinstance(t, m.TextType):
        return f"optional `{t.name}` text"
    assert isinstance(t, m.IdType)
    return f"`{t.name}` id"


def render_next(spec: m.Spec, row: m.Row) -> str:
    parts: list[str] = []
    for axis in spec.axes:
        nv = row.next_for(axis.name)
        if nv is None:
            continue
        if isinstance(nv, m.NextLiteral):
            parts.append(f"{axis.name}=`{nv.value}`")
        elif isinstance(nv, m.NextCase):
            mapping = ", ".join(f"{a}→{b}" for a, b in nv.mapping)
            parts.append(f"{axis.name}: {mapping}")
        else:
            assert isinstance(nv, m.NextVariant)
            fields = ", ".join(f"{k}={ex.render(v)}" for k, v in nv.fields)
            parts.append(f"{axis.name}=`{nv.tag}`" + (f"({fields})" if fields else ""))
    parts += [f"carrying {name}={ex.render(v)}" for name, v in row.carry]
    return "; ".join(parts) or "unchanged"


def _mermaid_id(value: str) -> str:
    return "s_" + value.replace("-", "_")


def axis_diagram(spec: m.Spec, result: ModelCheckResult, axis_name: str) -> list[str]:
    """Mermaid state diagram of one axis: which events move it between values."""
    axis = spec.axis(axis_name)
    assert axis is not None
    edges: dict[tuple[str, str], set[str]] = {}
    from pi_context.spec import interpret

    def value_of(state: dict[str, object]) -> str:
        v = state[axis_name]
        return (
            str(v[axis.tag]) if isinstance(axis, m.VariantAxis) and isinstance(v, dict) else str(v)
        )

    events = all_events(spec)
    for pre in result.reachable:
        for event in events:
            post = interpret.step(spec, pre, event).state
            a, b = value_of(pre), value_of(post)
            if a != b:
                edges.setdefault((a, b), set()).add(event["type"])
    values = (
        axis.type.values if isinstance(axis, m.EnumAxis) else tuple(v.tag for v in axis.variants)
    )
    initial = spec.initial[axis_name]
    start = (
        str(initial[axis.tag])
        if isinstance(initial, dict) and isinstance(axis, m.VariantAxis)
        else str(initial)
    )
    lines = ["```mermaid", "stateDiagram-v2"]
    for v in values:
        lines.append(f'    state "{v}" as {_mermaid_id(v)}')
    lines.append(f"    [*] --> {_mermaid_id(start)}")
    order = {e.name: i for i, e in enumerate(spec.events)}
    for (a, b), names in sorted(
        edges.items(), key=lambda kv: (values.index(kv[0][0]), values.index(kv[0][1]))
    ):
        label = ", ".join(sorted(names, key=lambda n: order[n]))
        lines.append(f"    {_mermaid_id(a)} --> {_mermaid_id(b)}: {label}")
    lines.append("```")
    return lines


def render(
    spec: m.Spec,
    result: ModelCheckResult | None = None,
    mutation: str | None = None,
    differences: str | None = None,
) -> str:
    result = result or model_check(spec, show=False)
    name = Path(spec.path).name
    out = [
        f"# {spec.title}",
        "",
        f"> Generated by `pi-context docs` from `src/pi_context/spec/specs/{name}`",
        f"> (sha256 `{spec.sha256[:16]}…`). Do not edit: change the spec and regenerate.",
        "",
        f"Spec id `{spec.id}`. Rows are tried in order for the event; the first whose guard holds",
        "fires, sets the listed axes (the others keep their value) and names one effect for the",
        "host to perform. The reducer does no I/O.",
        "",
        *provenance_section(spec),
        "## State",
        "",
        "| axis | values | meaning |",
        "| --- | --- | --- |",
    ]
    for axis in spec.axes:
        if isinstance(axis, m.EnumAxis):
            values = ", ".join(f"`{v}`" for v in axis.type.values)
        else:
            values = "; ".join(
                f"`{v.tag}`"
                + (
                    f" {{{', '.join(f.name + ': ' + _type(f.type) for f in v.fields)}}}"
                    if v.fields
                    else ""
                )
                for v in axis.variants
            )
        out.append(f"| `{axis.name}` | {values} | {_cell(axis.why)} |")
    initial = render_state(spec, spec.initial)
    out += ["", f"Initial state: `{initial}`.", ""]
    if spec.types:
        out += ["| type | kind | meaning |", "| --- | --- | --- |"]
        for t in spec.types:
            if isinstance(t, m.IdType):
                kind = f"id (abstracted by {', '.join(f'`{r}`' for r in t.abstraction)})"
            elif isinstance(t, m.TextType):
                kind = (
                    f"optional text, kept trimmed and only when non-empty (abstracted as "
                    f"absent or `{t.representative}`)"
                )
            else:
                kind = _type(t)
            out.append(f"| `{t.name}` | {kind} | {_cell(t.why)} |")
        out.append("")
    out += [
        "## Events",
        "",
        "| event | payload | facts (lazy in *italics*) | lazy order | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for e in spec.events:
        payload = ", ".join(f"`{f.name}`: {_type(f.type)}" for f in e.fields) or "—"
        facts = ", ".join(_fact_cell(f) for f in e.facts) or "—"
        order = " → ".join(e.lazy_order) or "—"
        name = f"`{e.name}`" + (" (decided by the extension)" if e.scope == "extension" else "")
        if e.tool:
            name += f" (the model's `{e.tool}`)"
        elif e.command:
            name += f" (the user's `{e.command}`)"
        out.append(f"| {name} | {payload} | {facts} | {order} | {_cell(e.why)} |")
    out += ["", "## Effects", "", "| effect | host action | the host… |", "| --- | --- | --- |"]
    for eff in spec.effects:
        host = f"`{eff.host}`" if eff.host else "—"
        carries = "".join(f" Carries `{f.name}` ({_type(f.type)}): {f.why}" for f in eff.carries)
        out.append(f"| `{eff.name}` | {host} | {_cell(eff.meaning + carries)} |")
    out += ["", "## Transition table", ""]
    for e in spec.events:
        out += [
            f"### `{e.name}`",
            "",
            "| # | row | guard | next | effect | why |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for i, row in enumerate(spec.rows_for(e.name), 1):
            out.append(
                f"| {i} | `{row.id}` | `{_cell(ex.render(row.guard))}` | {_cell(render_next(spec, row))} "
                f"| `{row.effect}` | {_cell(row.why)} |"
            )
        out.append("")
    out += ["## Invariants", ""]
    if spec.state_invariants:
        out += [
            "State invariants (hold in every reachable state):",
            "",
            "| id | holds | why |",
            "| --- | --- | --- |",
        ]
        for inv in spec.state_invariants:
            out.append(f"| `{inv.id}` | `{_cell(ex.render(inv.expr))}` | {_cell(inv.why)} |")
        out.append("")
    out += [
        "Transition invariants (hold on every reachable transition of the listed events):",
        "",
        "| id | on | when | then | why |",
        "| --- | --- | --- | --- | --- |",
    ]
    for tinv in spec.transition_invariants:
        when = f"`{_cell(ex.render(tinv.when))}`" if tinv.when is not None else "always"
        out.append(
            f"| `{tinv.id}` | {', '.join(tinv.events)} | {when} | `{_cell(ex.render(tinv.then))}` | {_cell(tinv.why)} |"
        )
    if spec.traces:
        out += [
            "",
            "Trace properties (monitors checked on the product; reaching `violation` fails):",
            "",
        ]
        for prop in spec.traces:
            out.append(f"- `{prop.id}` — {prop.why} Monitor starts in `{prop.initial}`:")
            for step in prop.steps:
                src = step.source or "any"
                out.append(f"  - from `{src}` when `{ex.render(step.when)}` → `{step.target}`")
    out += _progress_section(spec, result)
    out += [
        "",
        "## Reachable states",
        "",
        f"{len(result.reachable)} of {result.states} states of the finite abstraction are reachable from the initial state"
        + (
            " (every combination, as the spec expects)."
            if spec.expect_all_reachable and not result.unreachable_expected
            else "."
        ),
        "",
    ]
    for state in result.reachable:
        out.append(f"- `{render_state(spec, state)}`")
    out += ["", "## Diagrams", ""]
    for axis in spec.axes:
        out += [f"`{axis.name}` axis (events that change it):", ""]
        out += axis_diagram(spec, result, axis.name)
        out.append("")
    out += [
        "## How to reach each row",
        "",
        "Shortest witness trace from the initial state (breadth-first).",
        "",
    ]
    out += ["| row | trace |", "| --- | --- |"]
    for row in spec.rows:
        steps = result.witnesses.get(row.id, ())
        trace = " → ".join(f"`{render_event(s.event)}`" for s in steps)
        out.append(f"| `{row.id}` | {_cell(trace)} |")
    full_guards = sum(1 for v in result.guard_outcomes.values() if len(v) == 2)
    out += [
        "",
        "## Coverage",
        "",
        f"- rows fired: {result.rows_fired()} of {len(spec.rows)}",
        f"- row pairs observed (row then row, on reachable paths): {len(result.pairs_seen)}",
        f"- lazy-guard outcomes: {full_guards} of {len(result.guard_outcomes)} (row, fact) reads seen both true and false",
        f"- transitions explored: {result.transitions}; invariant checks: {result.invariant_checks}",
        "",
        "## The finite abstraction",
        "",
    ]
    ids = [t for t in spec.types if isinstance(t, m.IdType)]
    out += [
        f"The exhaustive case set is every state of the abstraction ({len(all_states(spec))}) times every event",
        f"instance ({len(all_events(spec))}): {len(all_states(spec)) * len(all_events(spec))} cases. Booleans take both values",
        "and enumerations every value.",
    ]
    for t in ids:
        out += [
            f"Window-like ids of type `{t.name}` are represented by {len(t.abstraction)} distinct values"
            f" ({', '.join(f'`{r}`' for r in t.abstraction)}). This is sound because guards may only compare ids",
            "for equality and next values may only copy them: any concrete run is mapped onto the",
            "abstraction by renaming its ids, and a single comparison distinguishes at most two ids.",
            "The conformance runner and the hypothesis tests use arbitrary strings as well.",
        ]
    if spec.refines is not None:
        out += ["", "## Refines", "", f"This spec is read against `{spec.refines.spec}`."]
        if spec.refines.why:
            out += ["", spec.refines.why]
    if differences:
        out += ["", differences.rstrip()]
    if mutation:
        out += ["", "## Mutation adequacy", "", mutation]
    out.append("")
    return "\n".join(out)


def _progress_section(spec: m.Spec, result: ModelCheckResult) -> list[str]:
    """The spec's progress properties (leads-to under weak fairness) and their verdicts."""
    out = ["", "## Progress properties", ""]
    if not spec.progress:
        return out + ["The spec states no progress property."]
    out += [
        "Each holds when every run that is weakly fair to the listed event instances (each",
        "occurs infinitely often) reaches `leads to` after any state where `when` holds; the",
        "model checker searches for a lasso that never does (`pi-context verify`).",
        "",
        "| id | when | leads to | weakly fair | verdict | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    broken = {lasso.prop for lasso in result.lassos}
    for prop in spec.progress:
        fair = "; ".join(f"`{_cell(f.render())}`" for f in prop.fair) or "none"
        verdict = "violated" if prop.id in broken else "holds"
        out.append(
            f"| `{prop.id}` | `{_cell(ex.render(prop.when))}` | "
            f"`{_cell(ex.render(prop.leads_to))}` | {fair} | {verdict} | {_cell(prop.why)} |"
        )
    return out


def _fact_cell(f: m.Field) -> str:
    """A fact in the events table: lazy in italics, the host fact it reads when the spec
    names it differently (``host:``)."""
    name = f"*{f.name}*" if f.lazy else f.name
    return f"{name} (host fact `{f.host}`)" if f.host else name
