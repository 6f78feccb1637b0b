"""Run an implementation against the specs: handshake, then for each spec the exhaustive
case set (pipelined, ``cases``), random traces (hypothesis) and, for every failing row, a
minimal failing trace — the specs shared out over several processes of the implementation
at once where the machine has the CPUs (``run_lanes``), each spec checked whole by one.

Nothing here can hang: every reply has a timeout, and crashes and hangs count against a
per-spec budget after which the spec is reported as failed and the run moves on.
"""

from __future__ import annotations

import os
import queue
import shlex
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pi_context.checks.conformance import default_jobs
from pi_context.checks.conformance.cases import (
    CRASH_BUDGET,
    ExhaustivePlan,
    run_exhaustive,
)
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
    replay,
)
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure
from pi_context.codegen.fresh import reset_control
from pi_context.spec import load, spec_paths
from pi_context.spec.abstraction import instance_count, state_count
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl
from pi_context.statemachine.reset_control import reducer_only as reducer_only_handle
from pi_context.support.progress import Progress

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
    jobs: int | None = None,
    twins: Sequence[Implementation] = (),
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

    ``jobs`` is how many processes of the implementation check specs at once (default: 2
    on a machine with more than one CPU; :func:`run_lanes`); 1 checks every spec through
    one process. Either way each spec gets the same checks, through one process.
    ``twins`` are more processes of the implementation the caller started early, for
    those lanes (the run stops them all).
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
    others: list[Implementation] = list(twins)
    try:
        try:
            if not impl.running:
                impl.start()  # it loads while the specs are loaded here
        except ImplementationFailure as fail:
            report.errors.append(f"handshake failed: {fail.message}")
            return report
        lanes = _lanes(jobs) if specs is None or len(specs) > 1 else 1
        while len(others) > lanes - 1:
            others.pop().close()
        while len(others) < lanes - 1:
            twin = impl.start_twin()  # it loads while the specs' plans are made here
            if twin is None:
                break
            others.append(twin)
        explicit = specs is not None
        chosen = list(specs) if specs is not None else committed_specs()
        gens = {s.id: Deferred(s, reducer_only) for s in chosen}
        plans: dict[str, ExhaustivePlan] = {}
        if exhaustive and not others:
            # through one process: each spec's plan is made while it starts; through several,
            # each lane makes its spec's plan while the other processes work
            plans = {s.id: ExhaustivePlan.of(gens[s.id].spec) for s in chosen}
        if not _handshake(impl, report):
            return report
        todo = [gens[spec.id] for spec in chosen if spec.id in report.served]
        others = [twin for twin in others if _same_service(twin, report)]
        if others and len(todo) > 1:
            results = run_lanes([impl, *others], todo, options, plans)
        else:
            results = {g.spec.id: run_spec(impl, g, options, plans.get(g.spec.id)) for g in todo}
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
            report.specs.append(results[spec.id])
        if not report.specs:
            ours = ", ".join(s.id for s in chosen)
            report.errors.append(
                f"the implementation serves none of the specs checked here ({ours}); "
                f"it serves: {', '.join(report.served) or 'nothing'}"
            )
    finally:
        impl.close()
        for twin in others:
            twin.close()
        report.seconds = time.monotonic() - started
    return report


def _lanes(jobs: int | None) -> int:
    if jobs is not None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        return jobs
    return default_jobs()


def _same_service(twin: Implementation, report: ConformanceReport) -> bool:
    """Whether the second process answers the handshake as the first one did; if not it is
    stopped and the run goes on through the first alone."""
    other = ConformanceReport(twin.command)
    if _handshake(twin, other) and other.served == report.served:
        return True
    twin.close()
    return False


class Deferred(ResetControl):
    """A spec's generated core, imported on first use: judging a reply in the reference
    encoding needs only the spec (``.spec``), so a run against the reference server never
    imports the generated packages here. Anything else of the handle loads it (and its
    reducer-only view with ``reducer_only``), then reads as the handle itself would."""

    def __init__(self, spec: Spec, reducer_only: bool = False) -> None:
        # the base's attributes come from the real handle, on first use (__getattr__)
        self._spec = spec.reducer_view() if reducer_only else spec
        self._path = None
        self._full = spec
        self._reducer_only = reducer_only

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "_loaded" in self.__dict__:
            raise AttributeError(name)
        full = reset_control(self._full)
        real = reducer_only_handle(full) if self._reducer_only else full
        self.__dict__.update({k: v for k, v in vars(real).items() if k != "_spec"})
        self.__dict__["_loaded"] = True
        return getattr(self, name)

    def __repr__(self) -> str:
        return f"<ResetControl {self.spec.id} (imported on first use)>"


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
    """Check one spec through one implementation: its exhaustive set (and minimal traces
    of the rows that fail there), then random traces."""
    result, budget = exhaustive_part(impl, gen, options, plan)
    random_part(impl, gen, options, result, budget)
    return result


def exhaustive_part(
    impl: Implementation,
    gen: ResetControl,
    options: RunOptions,
    plan: ExhaustivePlan | None = None,
) -> tuple[SpecResult, Budget]:
    """The first part of :func:`run_spec`: a spec's result with its exhaustive set checked,
    and the crash/hang budget its random traces may still use."""
    show, stream = options.show, options.stream
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
    result.seconds = time.monotonic() - started
    return result, budget


def random_part(
    impl: Implementation,
    gen: ResetControl,
    options: RunOptions,
    result: SpecResult,
    budget: Budget,
) -> None:
    """The second part of :func:`run_spec`: the random traces, while the budget lasts."""
    examples, show, stream = options.examples, options.show, options.stream
    spec = gen.spec
    started = time.monotonic()
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
    result.seconds += time.monotonic() - started


def run_lanes(
    impls: Sequence[Implementation],
    gens: Sequence[ResetControl],
    options: RunOptions,
    plans: Mapping[str, ExhaustivePlan],
) -> dict[str, SpecResult]:
    """:func:`run_spec` for every spec, through several processes of the implementation at
    once: each process takes the next spec not yet taken (the largest first) and checks it
    whole, exactly as a run through one process would, in a thread of its own (waiting on a
    process's replies leaves the interpreter to the others)."""
    todo: queue.SimpleQueue[ResetControl] = queue.SimpleQueue()
    for gen in sorted(gens, key=lambda g: -_work(g, options)):
        todo.put(gen)
    results: dict[str, SpecResult] = {}
    failed: list[BaseException] = []

    def lane(impl: Implementation) -> None:
        try:
            while not failed:
                try:
                    gen = todo.get_nowait()
                except queue.Empty:
                    return
                results[gen.spec.id] = run_spec(impl, gen, options, plans.get(gen.spec.id))
        except BaseException as err:  # raised again in the caller's thread
            failed.append(err)

    others = [
        threading.Thread(target=lane, args=(impl,), name="conformance lane", daemon=True)
        for impl in impls[1:]
    ]
    for thread in others:
        thread.start()
    lane(impls[0])
    for thread in others:
        thread.join()
    if failed:
        raise failed[0]
    return results


def _work(gen: ResetControl, options: RunOptions) -> int:
    """About how many steps checking ``gen``'s spec takes (its exhaustive set counted, not
    enumerated)."""
    spec = gen.spec
    cases = state_count(spec) * sum(instance_count(e) for e in spec.events)
    return (cases if options.exhaustive else 0) + options.examples * options.steps


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
