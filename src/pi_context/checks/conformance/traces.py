"""Traces against an implementation: one checked step, a replayed trace, and the spec's
shortest paths used to turn a failing case into a minimal failing trace from the start."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context.checks.conformance.check import ConsultedShortcut, Problem, check_reply
from pi_context.checks.conformance.protocol import (
    ProtocolError,
    encode_step_reply,
    encode_step_request,
    parse_step_reply,
)
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events
from pi_context.spec.interpret import Step, Wire, render_event, render_state, state_key
from pi_context.spec.model import Spec
from pi_context.spec.modelcheck import trail
from pi_context.statemachine.reset_control import ResetControl


@dataclass(frozen=True)
class TraceStep:
    """One step: the state fed in, the event, what the spec says and what came back."""

    pre: Wire
    event: Wire
    want: Step
    got_state: Any = None
    got_effect: Any = None
    got_consulted: Any = None
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def kind(self) -> str:
        return self.problems[0].kind if self.problems else "ok"

    def describe(self) -> str:
        return "; ".join(p.message for p in self.problems)


@dataclass
class Trace:
    """A trace from ``initial``; when it fails, its last step is the failing one."""

    spec: str
    initial: Wire
    steps: list[TraceStep] = field(default_factory=list)
    source: str = ""

    @property
    def failing(self) -> TraceStep | None:
        return self.steps[-1] if self.steps and not self.steps[-1].ok else None

    def __len__(self) -> int:
        return len(self.steps)

    def render(self, spec: Spec) -> str:
        lines = [f"    0. {render_state(spec, self.initial)}  (initial)"]
        for i, st in enumerate(self.steps, 1):
            mark = "" if st.ok else "   <-- FAILS"
            lines.append(
                f"    {i}. {render_event(st.event)} -> {render_state(spec, st.want.state)}"
                f"  [{st.want.row}; effect {st.want.effect}]{mark}"
            )
        failing = self.failing
        if failing is not None:
            lines.append(f"       implementation: {failing.describe()}")
        return "\n".join(lines)


def judge(
    spec: Spec,
    gen: ResetControl,
    state: Mapping[str, Any],
    event: Mapping[str, Any],
    want: Step,
    raw: bytes,
) -> TraceStep:
    try:
        reply = parse_step_reply(raw)
    except ProtocolError as err:
        return TraceStep(dict(state), dict(event), want, problems=(Problem("protocol", str(err)),))
    try:
        problems = tuple(check_reply(spec, gen, event, want, reply))
    except Exception as err:  # a reply of a shape nothing expects is this case's failure
        problem = Problem("ill-typed", f"the reply cannot be judged ({type(err).__name__}: {err})")
        problems = (problem,)
    got = getattr(reply, "state", None), getattr(reply, "effect", None)
    return TraceStep(
        dict(state),
        dict(event),
        want,
        got[0],
        got[1],
        getattr(reply, "consulted", None),
        problems,
    )


def replay(
    impl: Implementation,
    spec: Spec,
    gen: ResetControl,
    initial: Mapping[str, Any],
    events: Iterable[Mapping[str, Any]],
    source: str,
    what: str = "a replayed trace",
) -> Trace:
    """Run ``events`` from ``initial`` and stop at the first step that does not conform."""
    return next(replay_many(impl, spec, gen, [(initial, events)], source, what))


def replay_many(
    impl: Implementation,
    spec: Spec,
    gen: ResetControl,
    runs: Sequence[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]],
    source: str,
    what: str = "a replayed trace",
    memo: dict[bytes, tuple[Step, bytes]] | None = None,
) -> Iterator[Trace]:
    """Run each ``(initial, events)`` of ``runs`` in turn, as one pipelined batch: the
    traces in order, each stopped at its first step that does not conform, and none after
    the first trace that fails.

    Each request carries the spec's state before that step, which is what the
    implementation returned for the step before as long as the trace conforms — and the
    first step where it does not is where the trace stops anyway. Replies still on their way
    after a failing step are read and dropped, so the stream stays in step.

    ``memo`` (a dict the caller keeps across calls) remembers the spec's answer and its
    reference reply line per request line: the same request always has the same answer, and
    random traces ask the same steps again and again.
    """
    memo = {} if memo is None else memo
    plans: list[list[tuple[Wire, Wire, Step, bytes]]] = []
    lines: list[bytes] = []
    for initial, events in runs:
        plan: list[tuple[Wire, Wire, Step, bytes]] = []
        state: Wire = dict(initial)
        for event in events:
            line = encode_step_request(spec.id, state, event)
            known = memo.get(line)
            if known is None:
                want = interpret.step(spec, state, event)
                consulted = list(want.consulted)
                expected = encode_step_reply(want.state, want.effect, consulted, dict(want.carried))
                known = memo[line] = (want, expected[:-1])
            plan.append((state, dict(event), *known))
            lines.append(line)
            state = known[0].state
        plans.append(plan)
    try:
        impl.send(lines)
    except ImplementationFailure as fail:
        trace = Trace(spec.id, dict(runs[0][0]), source=source)
        if plans[0]:
            pre, event, want, _ = plans[0][0]
            trace.steps.append(
                TraceStep(pre, event, want, problems=(Problem(fail.kind, fail.message),))
            )
        yield trace
        return
    left = sum(len(plan) for plan in plans)
    shortcut = ConsultedShortcut(spec)
    for (initial, _), plan in zip(runs, plans, strict=True):
        trace = Trace(spec.id, dict(initial), source=source)
        for i, (pre, event, want, expected) in enumerate(plan, 1):
            try:
                raw = impl.receive(f"step {i} of {what}")
            except ImplementationFailure as fail:  # the implementation is gone: nothing to drain
                trace.steps.append(
                    TraceStep(pre, event, want, problems=(Problem(fail.kind, fail.message),))
                )
                yield trace
                return
            left -= 1
            reads = list(want.consulted) if raw == expected else None
            if reads is None:
                passed = shortcut.passes(raw, expected, str(event["type"]))
                reads = None if passed is None else list(passed)
            if reads is not None:
                # the spec's answer in the reference encoding, perhaps but for reads that
                # pass: what the judge passes
                step = TraceStep(pre, event, want, want.state, want.effect, reads)
            else:
                step = judge(spec, gen, pre, event, want, raw)
            trace.steps.append(step)
            if not step.ok:
                _drop_replies(impl, left)
                yield trace
                return
        yield trace


def _drop_replies(impl: Implementation, count: int) -> None:
    for n in range(count):
        try:
            impl.receive(f"a reply to drop after a failing step ({n + 1} of {count})")
        except ImplementationFailure:
            return


class ShortestPaths:
    """Breadth-first paths of the spec from its initial state over the finite abstraction."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.initial = interpret.initial_state(spec)
        start = state_key(spec, self.initial)
        self._parent: dict[Any, tuple[Any, Wire] | None] = {start: None}
        queue: deque[tuple[Any, Wire]] = deque([(start, self.initial)])
        events = all_events(spec)
        while queue:
            key, state = queue.popleft()
            for event in events:
                post = interpret.step(spec, state, event).state
                post_key = state_key(spec, post)
                if post_key not in self._parent:
                    self._parent[post_key] = (key, event)
                    queue.append((post_key, post))

    def events_to(self, state: Mapping[str, Any]) -> list[Wire] | None:
        """The events of a shortest path to ``state``, or None if it is unreachable."""
        key = state_key(self.spec, state)
        if key not in self._parent:
            return None
        return [event for _, event in trail(self._parent, key)]

    def depth(self, state: Mapping[str, Any]) -> int | None:
        path = self.events_to(state)
        return None if path is None else len(path)
