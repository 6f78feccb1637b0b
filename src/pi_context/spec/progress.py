"""Progress properties of a spec: ``leads_to`` under weak fairness on named events.

A progress property says that whenever a state satisfies ``when``, every fair run from there
eventually reaches a state satisfying ``leads_to`` (the same state counts). ``fair`` names
the events (each optionally narrowed by a condition on its fields, facts and the current
state) that the environment is assumed to keep sending. Every event of a reset-control table
is always enabled (each has a catch-all row), so weak fairness on an event instance means
it occurs infinitely often on the run.

This module reads the ``progress:`` section of a spec (into :class:`~pi_context.spec.model.
ProgressProperty`); the model checker's search for a
violating lasso is :mod:`pi_context.spec.liveness`.
"""

from __future__ import annotations

from pi_context.spec import expr as ex
from pi_context.spec import scope as sc
from pi_context.spec.model import FairEvent, ProgressProperty, Spec
from pi_context.spec.nodes import Ctx, Node, check_expr, parse_expr


def parse_progress(ctx: Ctx, spec: Spec, node: Node) -> list[ProgressProperty]:
    out: list[ProgressProperty] = []
    ids: set[str] = set()
    state_scope = sc.Scope(spec, ("cur",), ())
    for pnode in ctx.seq(node, "progress properties"):
        pm = ctx.keys(pnode, "progress property", ("id", "when", "leads_to", "fair", "why"))
        pid = ctx.scalar(pm["id"][1], "progress id")
        taken = {i.id for i in spec.state_invariants} | {t.id for t in spec.traces}
        if pid in ids or pid in taken:
            ctx.error(pm["id"][1], f"duplicate property id {pid!r}")
        ids.add(pid)
        if not ctx.why(pm).strip():
            ctx.error(pm["why"][1], f"progress {pid}: `why` must say why the property holds")
        when, when_text = parse_expr(ctx, pm["when"][1], f"progress {pid} when")
        check_expr(ctx, pm["when"][1], when, state_scope, f"progress {pid} when")
        goal, goal_text = parse_expr(ctx, pm["leads_to"][1], f"progress {pid} leads_to")
        check_expr(ctx, pm["leads_to"][1], goal, state_scope, f"progress {pid} leads_to")
        fair: list[FairEvent] = []
        for fnode in ctx.seq(pm["fair"][1], f"progress {pid} fair"):
            fm = ctx.keys(fnode, f"progress {pid} fair event", ("event",), ("when",))
            name = ctx.scalar(fm["event"][1], "event")
            event = spec.event(name)
            if event is None:
                ctx.error(fm["event"][1], f"progress {pid}: unknown event {name!r}")
                continue
            fwhen: ex.Expr | None = None
            ftext = ""
            if "when" in fm:
                fwhen, ftext = parse_expr(ctx, fm["when"][1], f"progress {pid} fair {name}")
                scope = sc.Scope(spec, ("cur",), (event,), lazy_facts=False)
                check_expr(ctx, fm["when"][1], fwhen, scope, f"progress {pid} fair {name}")
            fair.append(FairEvent(name, fwhen, ftext))
        out.append(
            ProgressProperty(
                pid, when, when_text, goal, goal_text, tuple(fair), ctx.why(pm), ctx.loc(pnode)
            )
        )
    return out
