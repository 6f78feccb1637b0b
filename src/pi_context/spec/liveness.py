"""Checking progress properties: a shortest violating lasso over the finite abstraction.

A progress property ``P ~> Q`` under weak fairness on some event instances is violated by a
*lasso*: a path from the initial state to a state where ``P`` holds and ``Q`` has not yet
held since, followed by a cycle that never reaches ``Q`` and takes every fair event instance
at least once (every event of a table is always enabled, so weak fairness on an instance is
"it occurs infinitely often"). The search works on any finite transition graph given by
index (the model checker's reachable graph, or a mutant's table in
:mod:`~pi_context.checks.mutate`); written out by :mod:`pi_context.checks.lassos`:

1. the states where ``Q`` fails, their strongly connected components (Tarjan, iterative);
   a component is *fair* when it has an internal edge for each fair instance;
2. a breadth-first search over (state, obligation open) from the initial state finds the
   shortest prefix to a state of a fair component with the obligation open;
3. the cycle walks, inside that component, to an edge of each fair instance in turn and back.

The prefix is shortest; the cycle is a cycle through every fair instance (each leg shortest).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pi_context.spec import expr as ex
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events
from pi_context.spec.interpret import Wire, render_event, render_state, state_key
from pi_context.spec.model import ProgressProperty, Spec


@dataclass(frozen=True)
class TraceStep:
    """One step of a lasso: the event and what the spec makes of it."""

    event: Wire
    state: Wire  # the state after the event
    effect: str
    row: str


Posts = Sequence[Sequence[int]]
"""``posts[state][event]``: the index of the next state."""


def holds(expr: ex.Expr, state: Wire, event: Wire | None = None) -> bool:
    """A progress condition on a state (and, for a fair instance, its event)."""
    facts = event.get("facts", {}) if event is not None else {}

    def lookup(target: ex.Target) -> ex.Value:
        if target.kind == "axis":
            return interpret.axis_lookup_any(state, target)
        assert event is not None
        if target.kind == "field":
            return interpret.field_lookup(event, target)
        return facts[target.name]

    return bool(ex.evaluate(expr, lookup))


@dataclass(frozen=True)
class Labels:
    """A property's conditions evaluated on every state and (state, event) of a graph."""

    when: list[bool]
    goal: list[bool]
    fair: list[list[list[bool]]]  # fair[k][state][event]
    names: list[str]  # each fair instance, rendered


def labels(prop: ProgressProperty, states: Sequence[Wire], events: Sequence[Wire]) -> Labels:
    fair: list[list[list[bool]]] = []
    for f in prop.fair:
        fair.append(
            [
                [e["type"] == f.event and (f.when is None or holds(f.when, s, e)) for e in events]
                for s in states
            ]
        )
    return Labels(
        [holds(prop.when, s) for s in states],
        [holds(prop.leads_to, s) for s in states],
        fair,
        [f.render() for f in prop.fair],
    )


def _components(nodes: set[int], posts: Posts) -> dict[int, int]:
    """Tarjan's strongly connected components of ``nodes`` (edges inside ``nodes`` only),
    iteratively: state -> component number."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    comp: dict[int, int] = {}
    stack: list[int] = []
    on: set[int] = set()
    counter = 0
    ncomp = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, i = work[-1]
            succ = posts[v]
            if i < len(succ):
                work[-1] = (v, i + 1)
                w = succ[i]
                if w not in nodes:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return comp


def _fair_edge(row: list[list[bool]]) -> Callable[[int, int, int], bool]:
    return lambda s, e, _t: row[s][e]


def find_lasso(
    initial: int, posts: Posts, lab: Labels
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """(prefix, cycle) as (state, event) steps, or None when the property holds."""
    reach: set[int] = {initial}
    queue = deque([initial])
    while queue:
        s = queue.popleft()
        for t in posts[s]:
            if t not in reach:
                reach.add(t)
                queue.append(t)
    open_nodes = {s for s in reach if not lab.goal[s]}
    comp = _components(open_nodes, posts)
    members: dict[int, list[int]] = {}
    for s, c in comp.items():
        members.setdefault(c, []).append(s)
    fair_comps: set[int] = set()
    for c, nodes in members.items():
        inside = [
            (s, e) for s in nodes for e, t in enumerate(posts[s]) if t in comp and comp[t] == c
        ]
        if not inside:
            continue
        if all(any(row[s][e] for s, e in inside) for row in lab.fair):
            fair_comps.add(c)
    if not fair_comps:
        return None
    start = (initial, lab.when[initial] and not lab.goal[initial])
    parent: dict[tuple[int, bool], tuple[tuple[int, bool], int] | None] = {start: None}
    frontier = deque([start])
    found: tuple[int, bool] | None = None
    while frontier:
        node = frontier.popleft()
        s, armed = node
        if armed and comp.get(s) in fair_comps:
            found = node
            break
        for e, t in enumerate(posts[s]):
            nxt = (t, (armed or lab.when[t]) and not lab.goal[t])
            if nxt not in parent:
                parent[nxt] = (node, e)
                frontier.append(nxt)
    if found is None:
        return None
    prefix: list[tuple[int, int]] = []
    back = parent[found]
    while back is not None:
        prev, e = back
        prefix.append((prev[0], e))
        back = parent[prev]
    prefix.reverse()
    target = found[0]
    c = comp[target]

    def edges(s: int) -> list[tuple[int, int]]:
        return [(e, t) for e, t in enumerate(posts[s]) if comp.get(t) == c]

    def walk(src: int, hit: Callable[[int, int, int], bool]) -> list[tuple[int, int]]:
        """Shortest path inside the component from ``src`` ending in an edge ``hit``."""
        seen: dict[int, tuple[int, int] | None] = {src: None}
        q = deque([src])
        while q:
            s = q.popleft()
            for e, t in edges(s):
                if hit(s, e, t):
                    path = [(s, e)]
                    link = seen[s]
                    while link is not None:
                        path.append(link)
                        link = seen[link[0]]
                    return list(reversed(path))
                if t not in seen:
                    seen[t] = (s, e)
                    q.append(t)
        raise AssertionError("a fair component holds every fair instance")

    cycle: list[tuple[int, int]] = []
    here = target
    for row in lab.fair:
        leg = walk(here, _fair_edge(row))
        cycle += leg
        here = posts[leg[-1][0]][leg[-1][1]]
    if here != target or not cycle:
        cycle += walk(here, lambda _s, _e, t: t == target)
    return prefix, cycle


def first_lasso(
    spec: Spec, initial: int, posts: Posts, labels_of: Callable[[ProgressProperty], Labels]
) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]] | None:
    """The first of ``spec``'s progress properties a graph violates: (its id, the lasso)."""
    for prop in spec.progress:
        found = find_lasso(initial, posts, labels_of(prop))
        if found is not None:
            return prop.id, found[0], found[1]
    return None


@dataclass(frozen=True)
class Lasso:
    """A progress violation: ``prefix`` from the initial state, then ``cycle`` forever."""

    prop: str
    why: str
    statement: str
    initial: Wire
    prefix: tuple[TraceStep, ...]
    cycle: tuple[TraceStep, ...]
    kind: str = "progress property"

    @property
    def steps(self) -> tuple[TraceStep, ...]:
        """The prefix and one turn of the cycle (a finite trace a replay can run)."""
        return self.prefix + self.cycle

    def render(self, spec: Spec) -> str:
        lines = [
            f"progress property {self.prop!r} violated ({self.why})",
            f"  {self.statement}",
            f"  shortest lasso: a prefix of {len(self.prefix)} step(s), then a cycle of "
            f"{len(self.cycle)} repeated forever:",
            f"    0. {render_state(spec, self.initial)}  (initial)",
        ]
        for i, step in enumerate(self.steps, 1):
            mark = "  <- the cycle starts" if i == len(self.prefix) + 1 else ""
            lines.append(
                f"    {i}. {render_event(step.event)} -> {render_state(spec, step.state)}"
                f"  [{step.row}; effect {step.effect}]{mark}"
            )
        lines.append(f"    (back to step {len(self.prefix)}'s state; the cycle repeats)")
        return "\n".join(lines)


def check_progress(spec: Spec, prop: ProgressProperty) -> Lasso | None:
    """The spec's shortest lasso violating ``prop``, or None when every fair run makes
    progress."""
    events = all_events(spec)
    initial = interpret.initial_state(spec)
    keys: dict[Any, int] = {state_key(spec, initial): 0}
    states: list[Wire] = [initial]
    posts: list[list[int]] = []
    steps: list[list[interpret.Step]] = []
    i = 0
    while i < len(states):
        row_posts: list[int] = []
        row_steps: list[interpret.Step] = []
        for event in events:
            step = interpret.step(spec, states[i], event)
            key = state_key(spec, step.state)
            if key not in keys:
                keys[key] = len(states)
                states.append(step.state)
            row_posts.append(keys[key])
            row_steps.append(step)
        posts.append(row_posts)
        steps.append(row_steps)
        i += 1
    found = find_lasso(0, posts, labels(prop, states, events))
    if found is None:
        return None

    def trace(part: list[tuple[int, int]]) -> tuple[TraceStep, ...]:
        out = []
        for s, e in part:
            st = steps[s][e]
            out.append(TraceStep(events[e], st.state, st.effect, st.row))
        return tuple(out)

    prefix, cycle = found
    return Lasso(prop.id, prop.why, prop.render(), initial, trace(prefix), trace(cycle))


def check_all(spec: Spec) -> list[Lasso]:
    """Every progress property of ``spec`` that some fair run violates, with its lasso."""
    return [lasso for prop in spec.progress if (lasso := check_progress(spec, prop))]
