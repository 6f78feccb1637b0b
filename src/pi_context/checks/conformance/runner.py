"""Run an implementation against the specs: handshake, the exhaustive case set (pipelined),
random traces (hypothesis) and, for every failing row, a minimal failing trace.

Nothing here can hang: every reply has a timeout, and crashes and hangs count against a
per-spec budget after which the spec is reported as failed and the run moves on.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pi_context.checks.conformance import order
from pi_context.checks.conformance.check import Problem
from pi_context.checks.conformance.protocol import (
    PROTOCOL,
    ErrorReply,
    ProtocolError,
    encode,
    hello_request,
    parse_hello_reply,
)
from pi_context.checks.conformance.results import ConformanceReport, SpecResult
from pi_context.checks.conformance.stateful import Budget, run_random_traces
from pi_context.checks.conformance.traces import (
    ShortestPaths,
    Trace,
    TraceStep,
    judge,
    replay,
)
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure
from pi_context.codegen.fresh import reset_control
from pi_context.spec import interpret, load, spec_paths
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import Step, Wire
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl
from pi_context.statemachine.reset_control import reducer_only as reducer_only_handle
from pi_context.support.progress import Progress

CRASH_BUDGET = 4  # crashes + hangs tolerated per spec before giving up on it
TRACE_CRASH_BUDGET = 2  # ... and while replaying minimal traces
TRACE_CANDIDATES = 3  # failing cases tried per row when building its minimal trace
SHORTEST = "shortest path to a failing case of the exhaustive set"
NOT_REPRODUCED = "the failing case alone (replays from the initial state did not fail there)"


_INTERPRETERS = ("node", "nodejs", "python", "python3", "deno", "bun", "tsx", "ruby", "perl")
_SCRIPTS = (".mjs", ".cjs", ".js", ".ts", ".py", ".rb", ".pl")


def script_problem(command: str, cwd: Path) -> str | None:
    """Why ``command`` cannot start: an interpreter given a script path that does not exist
    (relative paths are taken from ``cwd``, as the shell would). ``None`` when it looks
    startable; anything else is the runner's to report."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) < 2 or not os.path.basename(argv[0]).startswith(_INTERPRETERS):
        return None
    script = next((a for a in argv[1:] if not a.startswith("-")), None)
    if script is None or not script.endswith(_SCRIPTS) or "-m" in argv[1:]:
        return None
    path = Path(script) if os.path.isabs(script) else cwd / script
    if path.exists():
        return None
    return f"{script} does not exist (relative paths are taken from {cwd})"


def run_conformance(
    command: str | Sequence[str] | Implementation,
    specs: Sequence[Spec] | None = None,
    *,
    examples: int = 100,
    steps: int = 30,
    seed: int | None = None,
    timeout: float = 5.0,
    startup_timeout: float | None = None,
    exhaustive: bool = True,
    show: bool = False,
    stream: TextIO | None = None,
    reducer_only: bool = False,
) -> ConformanceReport:
    """Check ``command`` against ``specs`` (default: every committed spec it serves).

    Quiet unless ``show`` (progress bars on ``stream``, default stderr). A command that names
    a script that is not there (``node bindings-ts/adapter.mjs`` run from another folder) is
    refused before it starts, the reason in ``report.errors`` (``print(report)`` shows it).

    ``reducer_only`` leaves out the events a spec says its published extension decides
    (``scope: extension``): for a published reducer run without its extension.

    ``timeout`` bounds the wait for each reply; the first reply after the implementation
    (re)starts may also take ``startup_timeout`` (default: the larger of ``timeout`` and 10 s).
    ``command`` may be an :class:`Implementation` the caller started early, so that its
    start-up overlaps the caller's own imports (its timeouts then apply).
    """
    options = RunOptions(examples, steps, seed, exhaustive, show, stream or sys.stderr)
    started = time.monotonic()
    if not isinstance(command, Implementation):
        text = command if isinstance(command, str) else shlex.join(command)
        problem = script_problem(text, Path.cwd())
        if problem is not None:  # said, not left to an interpreter's stack trace
            report = ConformanceReport(text)
            report.errors.append(f"cannot start the implementation: {problem}")
            return report
    if isinstance(command, Implementation):
        impl = command
    else:
        impl = Implementation(command, timeout=timeout, startup_timeout=startup_timeout)
    report = ConformanceReport(impl.command)
    try:
        try:
            if not impl.running:
                impl.start()  # it loads while the specs are loaded here
        except ImplementationFailure as fail:
            report.errors.append(f"handshake failed: {fail.message}")
            return report
        explicit = specs is not None
        chosen = list(specs) if specs is not None else committed_specs()
        # while it starts: import the generated packages and work out the spec's answers
        plans = {}
        gens = {
            s.id: (reducer_only_handle(reset_control(s)) if reducer_only else reset_control(s))
            for s in chosen
        }
        for spec in chosen:
            if exhaustive:
                plans[spec.id] = ExhaustivePlan.of(gens[spec.id].spec)
        if not _handshake(impl, report):
            return report
        for spec in chosen:
            if spec.id not in report.served:
                if explicit:
                    result = SpecResult(spec, served=False)
                    result.problems.append(
                        f"the implementation does not serve {spec.id} "
                        f"(it serves: {', '.join(report.served) or 'nothing'})"
                    )
                    report.specs.append(result)
                continue
            report.specs.append(run_spec(impl, gens[spec.id], options, plans.get(spec.id)))
        if not report.specs:
            ours = ", ".join(s.id for s in chosen)
            report.errors.append(
                f"the implementation serves none of the specs checked here ({ours}); "
                f"it serves: {', '.join(report.served) or 'nothing'}"
            )
    finally:
        impl.close()
        report.seconds = time.monotonic() - started
    return report


def committed_specs() -> list[Spec]:
    """The committed specs, without re-running the table analysis: ``pi-context verify`` and
    the test suite analyse them, and skipping it takes ~0.5 s off every default run."""
    return [load(path, analyse=False) for path in spec_paths()]


def _handshake(impl: Implementation, report: ConformanceReport) -> bool:
    try:
        raw = impl.request(encode(hello_request()), "hello")
        reply = parse_hello_reply(raw)
    except ImplementationFailure as fail:
        report.errors.append(f"handshake failed: {fail.message}")
        return False
    except ProtocolError as err:
        report.errors.append(f"handshake failed: {err}")
        return False
    if isinstance(reply, ErrorReply):
        report.errors.append(f"handshake failed: hello answered ok:false: {reply.error}")
        return False
    report.protocol = reply.protocol
    report.served = reply.specs
    if reply.protocol != PROTOCOL:
        report.errors.append(
            f"the implementation speaks protocol {reply.protocol}; this runner speaks {PROTOCOL}"
        )
        return False
    return True


@dataclass(frozen=True)
class RunOptions:
    """How ``run_conformance`` checks each spec (its keyword arguments of the same names)."""

    examples: int
    steps: int
    seed: int | None
    exhaustive: bool
    show: bool
    stream: TextIO


def run_spec(
    impl: Implementation,
    gen: ResetControl,
    options: RunOptions,
    plan: ExhaustivePlan | None = None,
) -> SpecResult:
    examples, show, stream = options.examples, options.show, options.stream
    spec = gen.spec
    started = time.monotonic()
    result = SpecResult(spec)
    budget = Budget(CRASH_BUDGET)
    if show:
        print(f"{spec.id} against {impl.command}", file=stream)
    if options.exhaustive:
        run_exhaustive(impl, gen, result, budget, show=show, stream=stream, plan=plan)
        if result.failures:
            minimal_traces(impl, gen, result)
    if examples > 0 and budget.left > 0:
        progress = Progress(f"{spec.id} random traces", examples, stream) if show else None

        def tick() -> None:
            if progress is not None and progress.done < examples:
                progress.advance()

        found = run_random_traces(
            impl,
            gen,
            result,
            examples=examples,
            steps=options.steps,
            seed=options.seed,
            budget=budget,
            on_example=tick,
        )
        if progress is not None:
            progress.finish(f", {result.stateful_steps} steps" + (", FAILED" if found else ""))
        if found is not None:
            result.random_trace = found
            failing = found.failing
            assert failing is not None
            current = result.traces.get(failing.want.row)
            if current is None or len(found) < len(current):
                result.traces[failing.want.row] = found
    elif examples > 0:
        result.notes.append("random traces skipped: the crash/hang budget is used up")
    result.seconds = time.monotonic() - started
    return result


def step_lines(spec: Spec, states: list[Wire], events: list[Wire]) -> list[bytes]:
    """The step requests for states × events, in ``exhaustive_cases`` order: each state and
    event is encoded once and spliced in — the same bytes as ``encode(step_request(...))``."""
    head = encode({"op": "step", "spec": spec.id, "state": None})[: -len(b"null}\n")]
    encoded_events = [encode(e)[:-1] for e in events]
    return [
        b"".join((head, encode(s)[:-1], b',"event":', e, b"}\n"))
        for s in states
        for e in encoded_events
    ]


def exhaustive_cases(spec: Spec) -> list[tuple[dict[str, object], dict[str, object]]]:
    return [(state, event) for state in all_states(spec) for event in all_events(spec)]


@dataclass(frozen=True)
class ExhaustivePlan:
    """The exhaustive set of a spec ready to send: cases, request lines and the spec's answer
    to each (worked out by the interpreter, e.g. while the implementation starts up)."""

    cases: list[tuple[Wire, Wire]]
    lines: list[bytes]
    wants: list[Step]

    @classmethod
    def of(cls, spec: Spec) -> ExhaustivePlan:
        states, events = all_states(spec), all_events(spec)
        cases = [(state, event) for state in states for event in events]
        wants = [interpret.step(spec, state, event) for state, event in cases]
        return cls(cases, step_lines(spec, states, events), wants)


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
    """Every (state, event) of the finite abstraction, pipelined."""
    spec = gen.spec
    plan = plan or ExhaustivePlan.of(spec)
    cases, lines, wants = plan.cases, plan.lines, plan.wants
    result.exhaustive_cases = len(cases)
    progress = Progress(f"{spec.id} exhaustive", len(cases), stream) if show else None
    judged: list[TraceStep] = []
    i = 0
    while i < len(cases):
        try:
            impl.send(lines[i:])
            while i < len(cases):
                state, event = cases[i]
                raw = impl.receive(f"exhaustive case {i + 1} of {len(cases)}")
                judged.append(judge(spec, gen, state, event, wants[i], raw))
                i += 1
                if progress is not None:
                    progress.advance()
        except ImplementationFailure as fail:
            state, event = cases[i]
            judged.append(
                TraceStep(
                    dict(state),
                    dict(event),
                    wants[i],
                    problems=(Problem(fail.kind, fail.message),),
                )
            )
            i += 1
            if progress is not None:
                progress.advance()
            if not budget.spend():
                left = len(cases) - i
                result.problems.append(
                    f"gave up after {CRASH_BUDGET + 1} crashes or hangs; "
                    f"{left} exhaustive cases not run"
                )
                break
    misplaced = order.misplaced(judged)
    if misplaced:
        result.problems.append(order.summary(misplaced, len(judged)))
    for n, step in enumerate(judged):
        result.record(order.relabel(step, n, misplaced.get(n)))
        result.exhaustive_checked += 1
    if progress is not None:
        failed = sum(t.failed for t in result.rows.values())
        progress.finish(f", {failed} failing" if failed else "")
    if budget.left >= 0 and impl.running:
        problem = check_in_step(impl)
        if problem:
            result.problems.append(problem)


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


def minimal_traces(impl: Implementation, gen: ResetControl, result: SpecResult) -> None:
    """For each failing row, replay a shortest spec path to one of its failing cases.

    Breadth-first paths are shortest, so the shallowest failing case of a row gives the
    shortest trace that reaches that row's failure (the replay confirms it, feeding the
    implementation's own states back in). Replays that crash or hang have their own small
    budget, so a broken implementation still gets a trace or two without stalling the run.
    """
    spec = gen.spec
    paths = ShortestPaths(spec)
    budget = Budget(TRACE_CRASH_BUDGET)
    for row, failing in list(result.failures.items()):
        if row in result.traces:
            continue  # an earlier replay already diverged here, on a shorter path
        ranked = sorted(
            ((paths.depth(step.pre), n) for n, step in enumerate(failing)),
            key=lambda item: (item[0] is None, item[0] or 0, item[1]),
        )
        for depth, n in ranked[:TRACE_CANDIDATES]:
            step = failing[n]
            if depth is None:
                # not reachable from the initial state: the one-step case is the trace
                result.traces[row] = Trace(spec.id, step.pre, [step], "unreachable state")
                break
            events = [*(paths.events_to(step.pre) or []), step.event]
            trace = replay(impl, spec, gen, paths.initial, events, SHORTEST)
            failing_step = trace.failing
            if failing_step is None:
                continue
            where = failing_step.want.row
            if where not in result.traces or len(trace) < len(result.traces[where]):
                result.traces[where] = trace
            if failing_step.kind in ("crash", "hang") and not budget.spend():
                return
            if where == row:
                break
        if row not in result.traces:
            # No replay from the initial state failed here (an implementation that answers
            # differently each time): the failing case itself is the trace to look at.
            step = failing[0]
            result.traces[row] = Trace(spec.id, step.pre, [step], NOT_REPRODUCED)
