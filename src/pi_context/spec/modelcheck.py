"""Breadth-first model checking of a spec over its finite abstraction.

From the initial state, every event instance is applied to every reachable state. Each
declared invariant is checked on every reachable state or transition, and every trace
property on the product of the states with its monitor. Because the search is breadth-first,
the first violation found has a shortest counterexample, and the first time a row fires gives
its shortest witness trace. Coverage (rows, row pairs, lazy-guard outcomes) is collected on
the way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pi_context.spec import expr as ex
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import Wire, render_event, render_state, state_key
from pi_context.spec.model import Row, Spec, TransitionInvariant
from pi_context.support.progress import Progress

Key = tuple[Any, ...]
K = TypeVar("K", bound=Hashable)
S = TypeVar("S")


def trail(parents: Mapping[K, tuple[K, S] | None], key: K) -> list[tuple[K, S]]:
    """The links of a breadth-first search's path to ``key``, from its root on: ``parents``
    holds each key's (predecessor, step from it), the root's None."""
    links: list[tuple[K, S]] = []
    link = parents[key]
    while link is not None:
        links.append(link)
        link = parents[link[0]]
    links.reverse()
    return links


@dataclass(frozen=True)
class TraceStep:
    event: Wire
    state: Wire  # the state after the event
    effect: str
    row: str


@dataclass(frozen=True)
class Counterexample:
    property: str
    kind: str  # "state invariant" | "transition invariant" | "trace property"
    why: str
    initial: Wire
    steps: tuple[TraceStep, ...]

    def render(self, spec: Spec) -> str:
        lines = [
            f"{self.kind} {self.property!r} violated ({self.why})",
            f"  shortest counterexample, {len(self.steps)} step(s):",
            f"    0. {render_state(spec, self.initial)}  (initial)",
        ]
        for i, step in enumerate(self.steps, 1):
            lines.append(
                f"    {i}. {render_event(step.event)} -> {render_state(spec, step.state)}"
                f"  [{step.row}; effect {step.effect}]"
            )
        return "\n".join(lines)


@dataclass
class ModelCheckResult:
    states: int = 0
    reachable: list[Wire] = field(default_factory=list)
    transitions: int = 0
    invariant_checks: int = 0
    violations: list[Counterexample] = field(default_factory=list)
    witnesses: dict[str, tuple[TraceStep, ...]] = field(default_factory=dict)
    row_counts: dict[str, int] = field(default_factory=dict)
    pairs_seen: set[tuple[str, str]] = field(default_factory=set)
    guard_outcomes: dict[tuple[str, str], set[bool]] = field(default_factory=dict)
    unreachable_expected: list[Wire] = field(default_factory=list)
    lassos: list[Any] = field(default_factory=list)
    """Progress properties violated, each with its shortest lasso (``liveness.Lasso``)."""
    progress_checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations and not self.unreachable_expected and not self.lassos

    def rows_fired(self) -> int:
        return sum(1 for n in self.row_counts.values() if n)


def _lookup_transition(
    pre: Mapping[str, Any], post: Mapping[str, Any], event: Mapping[str, Any], effect: str
) -> Any:
    def lookup(target: ex.Target) -> ex.Value:
        if target.kind in ("state", "axis"):
            state = pre if target.where == "pre" else post
            if target.kind == "state":
                return dict(state)
            return interpret.axis_lookup_any(state, target)
        if target.kind == "effect":
            return effect
        if target.kind == "event_type":
            return event["type"]
        if target.kind == "field":
            return interpret.field_lookup(event, target)
        return event["facts"][target.name]

    return lookup


def broken_transition_invariants(
    spec: Spec, pre: Wire, post: Wire, event: Wire, effect: str
) -> Iterator[TransitionInvariant]:
    """The transition invariants of ``spec`` that the step ``pre`` -``event``-> ``post``
    (with ``effect``) breaks, in the spec's order."""
    lookup = _lookup_transition(pre, post, event, effect)
    for inv in spec.transition_invariants:
        if event["type"] not in inv.events:
            continue
        if inv.when is not None and not ex.evaluate(inv.when, lookup):
            continue
        if not ex.evaluate(inv.then, lookup):
            yield inv


def _state_lookup(state: Mapping[str, Any]) -> Any:
    def lookup(target: ex.Target) -> ex.Value:
        return interpret.axis_lookup_any(state, target)

    return lookup


def _guard_reads(
    spec: Spec, rows: tuple[Row, ...], state: Wire, event: Wire
) -> list[tuple[str, str, bool]]:
    """(row, lazy fact, value) for each lazy-fact reference each tried guard reached."""
    reads: list[tuple[str, str, bool]] = []
    facts = event.get("facts", {})
    for row in rows:

        def lookup(target: ex.Target, row_id: str = row.id) -> ex.Value:
            if target.kind == "axis":
                return interpret.axis_lookup(spec, state, target)
            if target.kind == "field":
                return interpret.field_lookup(event, target)
            value = facts[target.name]
            if target.lazy:
                reads.append((row_id, target.name, bool(value)))
            return value

        if ex.evaluate(row.guard, lookup):
            break
    return reads


class _Search:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.events = all_events(spec)

    def path(self, parents: dict[Key, tuple[Key, TraceStep] | None], key: Key) -> list[TraceStep]:
        return [step for _prev, step in trail(parents, key)]


def model_check(spec: Spec, *, show: bool = True) -> ModelCheckResult:
    result = ModelCheckResult(states=len(all_states(spec)))
    search = _Search(spec)
    initial = interpret.initial_state(spec)
    init_key = state_key(spec, initial)
    parents: dict[Key, tuple[Key, TraceStep] | None] = {init_key: None}
    states: dict[Key, Wire] = {init_key: initial}
    queue: deque[Key] = deque([init_key])
    rows_from: dict[Key, set[str]] = {}
    edges: list[tuple[Key, str, Key]] = []
    violated: set[str] = set()
    result.row_counts = {row.id: 0 for row in spec.rows}
    for row in spec.rows:
        for ref in ex.refs(row.guard):
            if ref.target is not None and ref.target.kind == "fact" and ref.target.lazy:
                result.guard_outcomes.setdefault((row.id, ref.target.name), set())
    progress = Progress(f"{spec.id} model check", result.states) if show else None

    def report(kind: str, prop: str, why: str, steps: list[TraceStep]) -> None:
        if prop in violated:
            return
        violated.add(prop)
        result.violations.append(Counterexample(prop, kind, why, initial, tuple(steps)))

    for inv in spec.state_invariants:
        if not ex.evaluate(inv.expr, _state_lookup(initial)):
            report("state invariant", inv.id, inv.why, [])
    checked_per_event = {
        event["type"]: sum(event["type"] in t.events for t in spec.transition_invariants)
        for event in search.events
    }

    while queue:
        key = queue.popleft()
        pre = states[key]
        if progress:
            progress.advance()
        for event in search.events:
            step = interpret.step(spec, pre, event)
            post = step.state
            post_key = state_key(spec, post)
            result.transitions += 1
            result.row_counts[step.row] += 1
            rows_from.setdefault(key, set()).add(step.row)
            edges.append((key, step.row, post_key))
            trace_step = TraceStep(event, post, step.effect, step.row)
            if step.row not in result.witnesses:
                result.witnesses[step.row] = tuple(search.path(parents, key) + [trace_step])
            for row_id, fact, value in _guard_reads(spec, spec.rows_for(event["type"]), pre, event):
                result.guard_outcomes.setdefault((row_id, fact), set()).add(value)
            result.invariant_checks += checked_per_event.get(event["type"], 0)
            for tinv in broken_transition_invariants(spec, pre, post, event, step.effect):
                report(
                    "transition invariant",
                    tinv.id,
                    tinv.why,
                    search.path(parents, key) + [trace_step],
                )
            if post_key not in parents:
                parents[post_key] = (key, trace_step)
                states[post_key] = post
                queue.append(post_key)
                for inv in spec.state_invariants:
                    result.invariant_checks += 1
                    if not ex.evaluate(inv.expr, _state_lookup(post)):
                        report("state invariant", inv.id, inv.why, search.path(parents, post_key))
    if progress:
        progress.finish(f", {len(states)} reachable")
    result.reachable = list(states.values())
    for _pre, fired, post_key in edges:
        for nxt in rows_from.get(post_key, ()):
            result.pairs_seen.add((fired, nxt))
    if spec.expect_all_reachable:
        reached = set(states)
        result.unreachable_expected = [
            s for s in all_states(spec) if state_key(spec, s) not in reached
        ]
    for prop in spec.traces:
        counter = check_trace(spec, prop.id)
        if counter is not None:
            result.violations.append(counter)
    from pi_context.spec.liveness import check_all

    result.lassos = check_all(spec)
    result.progress_checked = len(spec.progress)
    return result


def monitor_next(
    spec: Spec, prop_id: str, monitor: str, pre: Wire, post: Wire, event: Wire, effect: str
) -> str:
    prop = next(p for p in spec.traces if p.id == prop_id)
    lookup = _lookup_transition(pre, post, event, effect)
    for mstep in prop.steps:
        if mstep.source is not None and mstep.source != monitor:
            continue
        if ex.evaluate(mstep.when, lookup):
            return mstep.target
    return monitor


def check_trace(spec: Spec, prop_id: str) -> Counterexample | None:
    """BFS over (state, monitor state); a shortest path into ``violation`` or None."""
    prop = next(p for p in spec.traces if p.id == prop_id)
    events = all_events(spec)
    initial = interpret.initial_state(spec)
    start = (state_key(spec, initial), prop.initial)
    parents: dict[Any, tuple[Any, TraceStep] | None] = {start: None}
    states: dict[Any, Wire] = {start: initial}
    queue: deque[Any] = deque([start])
    while queue:
        node = queue.popleft()
        pre = states[node]
        for event in events:
            step = interpret.step(spec, pre, event)
            monitor = monitor_next(spec, prop.id, node[1], pre, step.state, event, step.effect)
            trace_step = TraceStep(event, step.state, step.effect, step.row)
            nxt = (state_key(spec, step.state), monitor)
            if monitor == "violation":
                steps = (*(back for _prev, back in trail(parents, node)), trace_step)
                return Counterexample(prop.id, "trace property", prop.why, initial, steps)
            if nxt not in parents:
                parents[nxt] = (node, trace_step)
                states[nxt] = step.state
                queue.append(nxt)
    return None
