"""Judge one reply of an implementation against the spec's step.

The spec's step comes from the interpreter (the reference semantics). A reply conforms when
its state is well typed and equal to the spec's, its effect is the spec's, and, if it reports
``consulted``, the lazy facts it read are exactly the ones the spec's guards read, in order.
"""

from __future__ import annotations

import json
import re
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
        problems += _check_consulted(spec, str(event["type"]), want.consulted, reply.consulted)
    return problems


def _check_consulted(
    spec: Spec, event_type: str, wanted: tuple[str, ...], consulted: Any
) -> list[Problem]:
    """What is wrong with a reply's ``consulted`` list where the spec's guards read the lazy
    facts ``wanted`` (in that order) for an event of ``event_type``."""
    if consulted == list(wanted):
        return []  # the spec's own reads: distinct lazy fact names of this event, in order
    decl = spec.event(event_type)
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
    if tuple(lazy) == wanted:
        return []
    order = ", ".join(decl.lazy_order)
    if decl.lazy_order_fixed and not lazy_order_ok(decl.lazy_order, tuple(lazy)):
        detail = f"out of the declared order ({order})"
    else:
        extra = [n for n in lazy if n not in wanted]
        missing = [n for n in wanted if n not in lazy]
        detail = (
            f"{', '.join(extra)} not needed on this branch"
            if extra
            else f"never read {', '.join(missing)}, which the spec's guards read here"
        )
    return [
        Problem(
            "consulted",
            f"read lazy facts {lazy}, spec reads {list(wanted)}: {detail}",
        )
    ]


_NAMES = re.compile(rb'\[(?:"[A-Za-z_][A-Za-z0-9_]*"(?:,"[A-Za-z_][A-Za-z0-9_]*")*)?\]')
_CONSULTED = b',"consulted":'


class ConsultedShortcut:
    """Passes replies that are the spec's answer in the reference encoding but for their
    ``consulted`` list, judged by that list alone, once per distinct list and answer.

    Adapters that wrap every fact in a getter list the eager facts they read too (the
    protocol allows it: only the lazy facts in the list are checked), so their replies are
    rarely byte for byte the expected line, and judging each in full (parse, type checks,
    comparison) costs more than the step. A reply qualifies only when it is the expected
    line with the list replaced by a plain JSON array of identifier names (nothing else
    can hide there), so it parses to the spec's state, effect and prompt; its verdict is
    then :func:`_check_consulted`'s on the names, which depends only on the event type and
    the spec's reads. Only passes are answered here: ``None`` means "judge it in full",
    which names what is wrong."""

    def __init__(self, spec: Spec) -> None:
        self._spec = spec
        self._split: dict[bytes, tuple[bytes, bytes, bytes, tuple[str, ...]]] = {}
        self._verdicts: dict[tuple[str, bytes, bytes], tuple[str, ...] | None] = {}

    def passes(self, raw: bytes, expected: bytes, event_type: str) -> tuple[str, ...] | None:
        """The reply's ``consulted`` names if ``raw`` conforms where ``expected`` is the
        spec's answer (its reference reply line, without the newline) to an event of
        ``event_type``; ``None`` if it must be judged in full."""
        split = self._split.get(expected)
        if split is None:
            split = self._split[expected] = _split(expected)
        head, reads, tail, want = split
        if not head or len(raw) < len(head) + len(tail) + 2:
            return None
        if not (raw.startswith(head) and raw.endswith(tail)):
            return None
        names = raw[len(head) : len(raw) - len(tail)]
        key = (event_type, reads, names)
        if key in self._verdicts:
            return self._verdicts[key]
        verdict = None
        if _NAMES.fullmatch(names):
            consulted = json.loads(names)
            if not _check_consulted(self._spec, event_type, want, consulted):
                verdict = tuple(consulted)
        self._verdicts[key] = verdict
        return verdict


def _split(expected: bytes) -> tuple[bytes, bytes, bytes, tuple[str, ...]]:
    """The reference reply line cut around its ``consulted`` array: the bytes before it,
    the array, the bytes after it and the names it lists (an empty head if it has none)."""
    at = expected.find(_CONSULTED)
    if at < 0:
        return b"", b"", b"", ()
    start = at + len(_CONSULTED)
    end = expected.find(b"]", start) + 1
    reads = expected[start:end]
    if not end or not _NAMES.fullmatch(reads):
        return b"", b"", b"", ()
    return expected[:start], reads, expected[end:], tuple(json.loads(reads))


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
