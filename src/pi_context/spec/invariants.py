"""The invariants of a spec: state invariants, transition invariants and trace properties
(monitor automata), each read from YAML with its expressions type-checked in its scope."""

from __future__ import annotations

from pi_context.spec import expr as ex
from pi_context.spec import scope as sc
from pi_context.spec.model import (
    Event,
    MonitorStep,
    Spec,
    StateInvariant,
    TraceProperty,
    TransitionInvariant,
)
from pi_context.spec.nodes import Ctx, Node, check_expr, parse_expr


def parse_invariants(
    ctx: Ctx, spec: Spec, node: Node
) -> tuple[list[StateInvariant], list[TransitionInvariant], list[TraceProperty]]:
    m = ctx.keys(node, "invariants", (), ("state", "transition", "trace"))
    ids: set[str] = set()

    def fresh(n: Node, kind: str) -> str:
        iid = ctx.scalar(n, f"{kind} id")
        if iid in ids:
            ctx.error(n, f"duplicate invariant id {iid!r}")
        ids.add(iid)
        return iid

    states: list[StateInvariant] = []
    for inode in ctx.seq(m["state"][1], "state invariants") if "state" in m else []:
        im = ctx.keys(inode, "state invariant", ("id", "holds", "why"))
        iid = fresh(im["id"][1], "invariant")
        e, text = parse_expr(ctx, im["holds"][1], f"invariant {iid}")
        check_expr(ctx, im["holds"][1], e, sc.Scope(spec, ("cur",), ()), f"invariant {iid}")
        states.append(StateInvariant(iid, e, text, ctx.why(im), ctx.loc(inode)))

    transitions: list[TransitionInvariant] = []
    for inode in ctx.seq(m["transition"][1], "transition invariants") if "transition" in m else []:
        im = ctx.keys(inode, "transition invariant", ("id", "on", "then", "why"), ("when",))
        iid = fresh(im["id"][1], "invariant")
        evs: list[Event] = []
        for name in ctx.names(im["on"][1], f"invariant {iid} on"):
            event = spec.event(name)
            if event is None:
                ctx.error(im["on"][1], f"invariant {iid}: unknown event {name!r}")
            else:
                evs.append(event)
        if not evs:
            continue
        scope = sc.Scope(
            spec, ("pre", "post"), tuple(evs), allow_effect=True, allow_event_type=True
        )
        when: ex.Expr | None = None
        when_text = ""
        if "when" in im:
            when, when_text = parse_expr(ctx, im["when"][1], f"invariant {iid} when")
            check_expr(ctx, im["when"][1], when, scope, f"invariant {iid} when")
        then, then_text = parse_expr(ctx, im["then"][1], f"invariant {iid} then")
        check_expr(ctx, im["then"][1], then, scope, f"invariant {iid} then")
        transitions.append(
            TransitionInvariant(
                iid,
                tuple(e.name for e in evs),
                when,
                when_text,
                then,
                then_text,
                ctx.why(im),
                ctx.loc(inode),
            )
        )

    traces: list[TraceProperty] = []
    for tnode in ctx.seq(m["trace"][1], "trace properties") if "trace" in m else []:
        tm = ctx.keys(tnode, "trace property", ("id", "initial", "steps", "why"))
        tid = fresh(tm["id"][1], "trace property")
        scope = sc.Scope(spec, ("pre", "post"), (), allow_effect=True, allow_event_type=True)
        steps: list[MonitorStep] = []
        for snode in ctx.seq(tm["steps"][1], f"trace {tid} steps"):
            sm = ctx.keys(snode, f"trace {tid} step", ("when", "to"), ("from",))
            source = ctx.scalar(sm["from"][1], "from") if "from" in sm else None
            e, text = parse_expr(ctx, sm["when"][1], f"trace {tid} step")
            check_expr(ctx, sm["when"][1], e, scope, f"trace {tid} step")
            steps.append(
                MonitorStep(source, e, text, ctx.scalar(sm["to"][1], "to"), ctx.loc(snode))
            )
        prop = TraceProperty(
            tid,
            ctx.why(tm),
            ctx.scalar(tm["initial"][1], "initial"),
            tuple(steps),
            ctx.loc(tnode),
        )
        if "violation" not in prop.monitor_states:
            ctx.error(tnode, f"trace {tid}: no step leads to 'violation', so nothing is checked")
        if prop.initial == "violation":
            ctx.error(tm["initial"][1], f"trace {tid}: the monitor cannot start in 'violation'")
        traces.append(prop)
    return states, transitions, traces
