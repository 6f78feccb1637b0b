"""Judge one reply of an implementation against the spec's step.

The spec's step comes from the interpreter (the reference semantics). A reply conforms when
its state is well typed and equal to the spec's, its effect is the spec's, and, if it reports
``consulted``, the lazy facts it read are exactly the ones the spec's guards read, in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pi_context.checks.conformance.protocol import ErrorReply, StepReply
from pi_context.checks.exhaustive import lazy_order_ok
from pi_context.spec.interpret import Step
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl
from pi_context.statemachine.wirecheck import WireError


@dataclass(frozen=True)
class Problem:
    """One way a reply fails; ``kind`` is crash, hang, protocol (not a protocol message),
    error-reply (ok:false for a good request), ill-typed, mismatch, consulted or
    out-of-order (the reply answers another request of a pipelined batch)."""

    kind: str
    message: str


def check_reply(
    spec: Spec,
    gen: ResetControl,
    event: Mapping[str, Any],
    want: Step,
    reply: StepReply | ErrorReply,
) -> list[Problem]:
    if isinstance(reply, ErrorReply):
        return [
            Problem("error-reply", f"answered ok:false for a well-typed request: {reply.error}")
        ]
    problems: list[Problem] = []
    try:
        gen.wire.state_from_wire(reply.state, "reply.state")
    except WireError as err:
        problems.append(Problem("ill-typed", f"returned an ill-typed state: {err}"))
    if reply.effect.__class__ is not str or reply.effect != want.effect:  # else known
        try:
            gen.wire.effect_from_wire(reply.effect, "reply.effect")
        except WireError as err:
            problems.append(Problem("ill-typed", f"returned an unknown effect: {err}"))
    if problems:
        return problems
    if reply.state != want.state:
        problems.append(
            Problem("mismatch", f"state {_json(reply.state)}, spec: {_json(want.state)}")
        )
    if reply.effect != want.effect:
        problems.append(Problem("mismatch", f"effect {reply.effect!r}, spec: {want.effect!r}"))
    prompt = dict(want.carried).get("prompt")
    if reply.prompt != prompt:
        got = "no prompt" if reply.prompt is None else f"prompt {_json(reply.prompt)}"
        wanted = "no prompt" if prompt is None else f"prompt {_json(prompt)}"
        problems.append(Problem("mismatch", f"{got}, spec: {wanted}"))
    if reply.consulted is not None:
        problems += _check_consulted(spec, event, want, reply.consulted)
    return problems


def _check_consulted(
    spec: Spec, event: Mapping[str, Any], want: Step, consulted: Any
) -> list[Problem]:
    if consulted == list(want.consulted):
        return []  # the spec's own reads: distinct lazy fact names of this event, in order
    decl = spec.event(str(event["type"]))
    assert decl is not None
    if not isinstance(consulted, list) or not all(isinstance(n, str) for n in consulted):
        return [
            Problem("ill-typed", f"'consulted' must be a list of fact names, got {consulted!r}")
        ]
    facts = [f.name for f in decl.facts]
    unknown = [n for n in consulted if n not in facts]
    if unknown:
        known = ", ".join(facts) or "none"
        return [
            Problem(
                "ill-typed",
                f"'consulted' names {unknown[0]!r}, which is not a fact of {decl.name} "
                f"(facts: {known})",
            )
        ]
    repeated = sorted({n for n in consulted if consulted.count(n) > 1})
    if repeated:
        return [Problem("ill-typed", f"'consulted' lists {repeated[0]!r} twice (first reads only)")]
    lazy = [n for n in consulted if (f := decl.fact(n)) is not None and f.lazy]
    if tuple(lazy) == want.consulted:
        return []
    order = ", ".join(decl.lazy_order)
    if decl.lazy_order_fixed and not lazy_order_ok(decl.lazy_order, tuple(lazy)):
        detail = f"out of the declared order ({order})"
    else:
        extra = [n for n in lazy if n not in want.consulted]
        missing = [n for n in want.consulted if n not in lazy]
        detail = (
            f"{', '.join(extra)} not needed on this branch"
            if extra
            else f"never read {', '.join(missing)}, which the spec's guards read here"
        )
    return [
        Problem(
            "consulted",
            f"read lazy facts {lazy}, spec reads {list(want.consulted)}: {detail}",
        )
    ]


def _json(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
