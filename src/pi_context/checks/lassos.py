"""A progress property's lasso written out like the conformance bundle's counterexamples:
ITF JSON (with ``loop``, the index of the state the cycle returns to) and Mermaid."""

from __future__ import annotations

from typing import Any

from pi_context.checks.conformance.report import to_itf as trace_itf
from pi_context.checks.conformance.report import to_mermaid as trace_mermaid
from pi_context.checks.conformance.traces import Trace
from pi_context.checks.conformance.traces import TraceStep as Checked
from pi_context.spec import interpret
from pi_context.spec.liveness import Lasso
from pi_context.spec.model import Spec


def to_itf(spec: Spec, lasso: Lasso) -> dict[str, Any]:
    """The lasso in the Informal Trace Format: its states as a conformance trace's, and
    ``loop``, the index of the state the cycle returns to."""
    data = trace_itf(spec, _trace(spec, lasso), "the spec's own reducer")
    data["#meta"]["generated-by"] = "pi-context verify (progress)"
    data["loop"] = len(lasso.prefix)
    return data


def to_mermaid(spec: Spec, lasso: Lasso) -> str:
    """The lasso as a Mermaid flowchart: the prefix, the cycle and the edge back."""
    text = trace_mermaid(spec, _trace(spec, lasso))
    last = len(lasso.steps)
    label = "the cycle repeats"
    back = f'  s{last} -.->|"{label}"| s{len(lasso.prefix)}\n'
    return text.replace("  classDef path", back + "  classDef path", 1)


def _trace(spec: Spec, lasso: Lasso) -> Trace:
    trace = Trace(spec.id, lasso.initial, source=f"progress property {lasso.prop}: lasso")
    pre = lasso.initial
    for step in lasso.steps:
        want = interpret.Step(step.state, step.effect, step.row, ())
        trace.steps.append(Checked(pre, step.event, want))
        pre = step.state
    return trace
