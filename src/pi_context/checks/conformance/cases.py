"""The exhaustive set against an implementation: the plan (request lines and the spec's
answers), the pipelined run that judges every reply, and the check that replies are still in
step with requests afterwards."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TextIO

from pi_context.checks.conformance import order
from pi_context.checks.conformance.answers import Answers, answers
from pi_context.checks.conformance.check import ConsultedShortcut, Problem
from pi_context.checks.conformance.protocol import (
    ErrorReply,
    ProtocolError,
    encode,
    hello_request,
    parse_hello_reply,
)
from pi_context.checks.conformance.results import SpecResult, Tally
from pi_context.checks.conformance.stateful import Budget
from pi_context.checks.conformance.traces import TraceStep, judge
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import Step, Wire
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl
from pi_context.support.progress import Progress

CRASH_BUDGET = 4  # crashes + hangs tolerated per spec before giving up on it


def step_lines(spec: Spec, states: list[Wire], events: list[Wire]) -> list[bytes]:
    """The step requests for states × events, in ``exhaustive_cases`` order: each state and
    event is encoded once and spliced in — the same bytes as ``encode(step_request(...))``."""
    head = encode({"op": "step", "spec": spec.id, "state": None})[: -len(b"null}\n")]
    tails = [b"".join((b',"event":', encode(e)[:-1], b"}\n")) for e in events]
    lines: list[bytes] = []
    for state in states:
        start = head + encode(state)[:-1]
        lines += [start + tail for tail in tails]
    return lines


def exhaustive_cases(spec: Spec) -> list[tuple[dict[str, object], dict[str, object]]]:
    return [(state, event) for state in all_states(spec) for event in all_events(spec)]


@dataclass(frozen=True)
class ExhaustivePlan:
    """The exhaustive set of a spec ready to send: its states and events (case ``i`` is
    ``states[i // len(events)] × events[i % len(events)]``), the request lines and the
    spec's answers (:mod:`.answers`: kept from an earlier run, or worked out, e.g. while
    the implementation starts up)."""

    spec: Spec
    states: list[Wire]
    events: list[Wire]
    lines: list[bytes]
    answers: Answers

    @classmethod
    def of(cls, spec: Spec) -> ExhaustivePlan:
        states, events = all_states(spec), all_events(spec)
        found = answers(spec, states, events)
        return cls(spec, states, events, step_lines(spec, states, events), found)

    def __len__(self) -> int:
        return len(self.lines)

    def case(self, i: int) -> tuple[Wire, Wire]:
        per_state = len(self.events)
        return self.states[i // per_state], self.events[i % per_state]

    def want(self, i: int) -> Step:
        """The spec's answer to case ``i`` (the interpreter's, worked out now)."""
        state, event = self.case(i)
        return interpret.step(self.spec, state, event)

    def tally(self, result: SpecResult, count: int) -> None:
        """Record the first ``count`` cases as conforming, per row and per event type
        (what ``result.record`` of each would add up to)."""
        rows, per_state = self.answers.rows, len(self.events)
        for k, n in Counter(self.answers.index[:count]).items():
            result.rows.setdefault(rows[k], Tally()).checked += n
        for j, event in enumerate(self.events):
            n = count // per_state + (1 if j < count % per_state else 0)
            if n:
                result.events.setdefault(str(event["type"]), Tally()).checked += n
        result.exhaustive_checked += count


def run_exhaustive(
    impl: Implementation,
    gen: ResetControl,
    result: SpecResult,
    budget: Budget,
    *,
    show: bool = True,
    stream: TextIO | None = None,
    plan: ExhaustivePlan | None = None,
) -> None:
    """Every (state, event) of the finite abstraction, pipelined.

    A reply that is byte for byte the expected line of its case conforms, and so does one
    that differs from it in its ``consulted`` list alone where that list passes
    (:class:`ConsultedShortcut`). Any other reply is judged in full — once per distinct
    reply to the same answer: the judge's verdict depends only on the reply and the spec's
    answer (its state, effect, reads and row, so its event type), so a reply that passed for
    one case passes for every case with the same answer. When every case conforms the
    tallies come straight from the answers;
    otherwise every case is judged as one list (so replies out of order are named)."""
    spec = gen.spec
    plan = plan or ExhaustivePlan.of(spec)
    lines, expected, index = plan.lines, plan.answers.expected(), plan.answers.index
    total = len(lines)
    result.exhaustive_cases = total
    progress = Progress(f"{spec.id} exhaustive", total, stream) if show else None
    odd: dict[int, TraceStep] = {}  # cases whose reply does not conform
    other: dict[int, bytes] = {}  # cases whose reply conforms in another spelling
    passed: set[tuple[bytes, int]] = set()  # (reply, answer) pairs the judge passed
    shortcut = ConsultedShortcut(spec)  # replies that differ in their reads alone
    types, per_state = [str(e["type"]) for e in plan.events], len(plan.events)
    crashed: dict[int, Problem] = {}
    i = 0
    while i < total:
        try:
            impl.send(lines[i:])
            while i < total:
                got = impl.receive_ready(f"exhaustive case {i + 1} of {total}", total - i)
                for line in got:
                    if line != expected[i]:
                        key = (line, index[i])
                        if key in passed:
                            pass
                        elif shortcut.passes(line, expected[i], types[i % per_state]) is not None:
                            passed.add(key)
                        else:
                            state, event = plan.case(i)
                            step = judge(spec, gen, state, event, plan.want(i), line)
                            if not step.ok:
                                odd[i] = step
                            else:
                                passed.add(key)
                        if i not in odd:
                            other[i] = line
                    i += 1
                if progress is not None:
                    progress.advance(len(got))
        except ImplementationFailure as fail:
            crashed[i] = Problem(fail.kind, fail.message)
            i += 1
            if progress is not None:
                progress.advance()
            if not budget.spend():
                left = total - i
                result.problems.append(
                    f"gave up after {CRASH_BUDGET + 1} crashes or hangs; "
                    f"{left} exhaustive cases not run"
                )
                break
    if not crashed and not odd:
        plan.tally(result, i)
    else:
        _record_judged(plan, gen, result, i, odd, other, crashed)
    if progress is not None:
        failed = sum(t.failed for t in result.rows.values())
        progress.finish(f", {failed} failing" if failed else "")
    if budget.left >= 0 and impl.running:
        problem = check_in_step(impl)
        if problem:
            result.problems.append(problem)


def _record_judged(
    plan: ExhaustivePlan,
    gen: ResetControl,
    result: SpecResult,
    count: int,
    odd: dict[int, TraceStep],
    other: dict[int, bytes],
    crashed: dict[int, Problem],
) -> None:
    """Record the first ``count`` cases one by one, as judged (a reply equal to its expected
    line is the spec's answer itself), with replies out of order named as such."""
    judged: list[TraceStep] = []
    for n in range(count):
        step = odd.get(n)
        if step is None:
            state, event = plan.case(n)
            want = plan.want(n)
            problem = crashed.get(n)
            line = other.get(n)
            if problem is not None:
                step = TraceStep(dict(state), dict(event), want, problems=(problem,))
            elif line is not None:
                step = judge(plan.spec, gen, state, event, want, line)
            else:
                step = TraceStep(
                    dict(state), dict(event), want, want.state, want.effect, list(want.consulted)
                )
        judged.append(step)
    misplaced = order.misplaced(judged)
    if misplaced:
        result.problems.append(order.summary(misplaced, len(judged)))
    for n, step in enumerate(judged):
        result.record(order.relabel(step, n, misplaced.get(n)))
        result.exhaustive_checked += 1


def check_in_step(impl: Implementation) -> str | None:
    """After a pipelined batch, a hello must get the hello reply: an implementation that
    wrote an extra line (or skipped one) has its replies out of step with the requests, and
    every verdict after that point would be about the wrong request."""
    what = "a hello sent after the exhaustive set"
    try:
        raw = impl.request(encode(hello_request()), what)
        reply = parse_hello_reply(raw)
    except ImplementationFailure as fail:
        return f"{what}: {fail.message}"
    except ProtocolError:
        impl.kill()  # start afresh, in step
        text = raw.decode("utf-8", "replace")
        shown = text if len(text) <= 80 else text[:77] + "..."
        return (
            "replies are out of step with requests (an extra or a missing reply line): "
            f"{what} was answered with {shown}"
        )
    if isinstance(reply, ErrorReply):
        return f"{what} was answered ok:false: {reply.error}"
    return None
