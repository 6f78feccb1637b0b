"""Mutation adequacy of a spec's table.

Every single-cell mutant: each row's effect replaced by every other effect, each row's next
value of each axis replaced by every alternative (keep the value, each literal, each way to
fill a variant from the event, the facts, the current state or literals; rows of an event the
extension decides keep the state and have no such cells), and each top-level guard conjunct
dropped or negated. Each mutant is then checked by what is independent of the
table cell it changes:

* the loader's table analysis (a row that can never fire, an input no row matches, a copied
  field the current variant lacks),
* the seeds' scenarios (literal expected states, effects and reads),
* the spec's invariants and trace properties, model-checked from the initial state,
* the spec's progress properties (a fair lasso that never makes progress),
* the model checker's reachability and row-coverage expectations.

A mutant is *equivalent* when the loader accepts it and it behaves exactly like the spec on
every case of the finite abstraction (same next state, effect and lazy reads), or differs only
in states that no run from the initial state reaches (its reachable transitions are the
spec's); no check can kill it and it is left out of the kill rate. A *surviving* mutant names
a table cell whose behaviour only the table itself specifies.

The checks run incrementally against the spec's own exhaustive table: a mutant only changes
the cases its row decides (or, for a guard, the cases that reach its row), so only those are
re-interpreted, and only changed transitions can break a transition invariant the spec
satisfies.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context.spec import expr as ex
from pi_context.spec import interpret, model
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import NoRowMatches, Wire, render_event, render_state, state_key
from pi_context.spec.model import Row, Spec
from pi_context.spec.modelcheck import (
    broken_transition_invariants,
    monitor_next,
    trail,
)
from pi_context.support.progress import Progress

CATEGORIES = (
    "loader",
    "scenarios",
    "invariants",
    "trace properties",
    "progress properties",
    "model checker",
)


@dataclass(frozen=True)
class Mutant:
    number: int
    row: str
    cell: str  # "effect", "next.<axis>", "guard"
    change: str  # what changed, in spec terms
    spec: Spec

    @property
    def id(self) -> str:
        return f"M{self.number:03d}"


UNREACHED = "differs only in states no run from the initial state reaches"


@dataclass
class Outcome:
    mutant: Mutant
    status: str = "survived"  # "killed" | "survived" | "equivalent"
    killers: dict[str, str] = field(default_factory=dict)  # category -> first reason
    witness: str = ""  # survivors: a shortest trace where the mutant differs from the spec


@dataclass
class MutationReport:
    spec: Spec
    outcomes: list[Outcome]
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def relevant(self) -> int:
        return len(self.outcomes) - self.count("equivalent")

    @property
    def rate(self) -> float:
        return self.count("killed") / self.relevant if self.relevant else 1.0


# ---------------------------------------------------------------- mutants


def _same_type(a: model.FieldType, b: model.FieldType) -> bool:
    if isinstance(a, model.IdType) and isinstance(b, model.IdType):
        return a.name == b.name
    if isinstance(a, model.EnumType) and isinstance(b, model.EnumType):
        return a.values == b.values
    return a == b


def _sources(
    spec: Spec, row: Row, axis: model.VariantAxis, ftype: model.FieldType
) -> list[ex.Expr]:
    """Every value of type ``ftype`` a next state of ``row`` could copy or name."""
    event = spec.event(row.event)
    assert event is not None
    out: list[ex.Expr] = []
    text = isinstance(ftype, model.TextType)
    for f in event.fields:
        if _same_type(f.type, ftype):
            out.append(ex.Ref(("event", f.name), 0, ex.Target("field", name=f.name, text=text)))
    for f in event.facts:
        if _same_type(f.type, ftype):
            target = ex.Target("fact", name=f.name, lazy=f.lazy)
            out.append(ex.Ref(("facts", f.name), 0, target))
    for name in axis.field_names():
        member_type = axis.field_type(name)
        if member_type is not None and _same_type(member_type, ftype):
            target = ex.Target("axis", where="cur", name=axis.name, member=name, text=text)
            out.append(ex.Ref((axis.name, name), 0, target))
    if isinstance(ftype, model.EnumType):
        out += [ex.Lit(v, 0) for v in ftype.values]
    return out


def _alternatives(spec: Spec, row: Row, axis_name: str) -> list[model.NextValue | None]:
    axis = spec.axis(axis_name)
    assert axis is not None
    if isinstance(axis, model.EnumAxis):
        return [None, *(model.NextLiteral(v) for v in axis.type.values)]
    out: list[model.NextValue | None] = [None]
    for variant in axis.variants:
        # each field's sources (a text may also be left out: None, absent)
        choices = [
            [*_sources(spec, row, axis, f.type), *[None] * isinstance(f.type, model.TextType)]
            for f in variant.fields
        ]
        for combo in itertools.product(*choices):
            kept = [(f.name, e) for f, e in zip(variant.fields, combo, strict=True) if e]
            out.append(model.NextVariant(variant.tag, tuple(kept)))
    return out


def show_next(nv: model.NextValue | None) -> str:
    if nv is None:
        return "keep"
    if isinstance(nv, model.NextLiteral):
        return nv.value
    if isinstance(nv, model.NextCase):
        return "{" + ", ".join(f"{a}→{b}" for a, b in nv.mapping) + "}"
    fields = ", ".join(f"{k}={ex.render(v)}" for k, v in nv.fields)
    return f"{nv.tag}({fields})" if fields else nv.tag


def _with_next(spec: Spec, row: Row, axis_name: str, value: model.NextValue | None) -> Row:
    current = dict(row.next)
    if value is None:
        current.pop(axis_name, None)
    else:
        current[axis_name] = value
    ordered = tuple((a.name, current[a.name]) for a in spec.axes if a.name in current)
    return dataclasses.replace(row, next=ordered)


def _and(parts: Sequence[ex.Expr]) -> ex.Expr:
    if not parts:
        return ex.Lit(True, 0)
    out = parts[0]
    for part in parts[1:]:
        out = ex.BoolOp("and", out, part, 0)
    return out


def _with_guard(row: Row, guard: ex.Expr) -> Row:
    return dataclasses.replace(row, guard=guard, guard_text=ex.render(guard))


def _row_mutants(spec: Spec, row: Row) -> Iterator[tuple[str, str, Row]]:
    for effect in spec.effects:
        if effect.name != row.effect:
            yield (
                "effect",
                f"effect `{row.effect}` → `{effect.name}`",
                dataclasses.replace(row, effect=effect.name),
            )
    event = spec.event(row.event)
    # A row of an event the extension decides keeps the state by the language's rules (the
    # loader refuses a `next` there), so it has no next-value cells to mutate.
    axes = () if event is not None and event.scope == "extension" else spec.axes
    for axis in axes:
        current = row.next_for(axis.name)
        shown = show_next(current)
        for alt in _alternatives(spec, row, axis.name):
            if show_next(alt) == shown:
                continue
            yield (
                f"next.{axis.name}",
                f"{axis.name} `{shown}` → `{show_next(alt)}`",
                _with_next(spec, row, axis.name, alt),
            )
    parts = ex.conjuncts(row.guard)
    trivial = len(parts) == 1 and isinstance(parts[0], ex.Lit) and parts[0].value is True
    for i, part in enumerate(parts):
        text = ex.render(part)
        if not trivial:
            rest = [p for j, p in enumerate(parts) if j != i]
            yield "guard", f"drop conjunct `{text}`", _with_guard(row, _and(rest))
        negated = [ex.Not(p, 0) if j == i else p for j, p in enumerate(parts)]
        yield "guard", f"negate conjunct `{text}`", _with_guard(row, _and(negated))


def mutants(spec: Spec) -> list[Mutant]:
    """Every single-cell mutant of the table, numbered in table order."""
    out: list[Mutant] = []
    for index, row in enumerate(spec.rows):
        for cell, change, mutated in _row_mutants(spec, row):
            rows = spec.rows[:index] + (mutated,) + spec.rows[index + 1 :]
            out.append(
                Mutant(len(out) + 1, row.id, cell, change, dataclasses.replace(spec, rows=rows))
            )
    return out


# ---------------------------------------------------------------- the spec's own table


@dataclass(frozen=True)
class _Cell:
    post: int  # index of the next state
    effect: str
    row: str
    consulted: tuple[str, ...]


class Baseline:
    """The spec's exhaustive table, shortest paths and monitor steps, computed once."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.states = all_states(spec)
        self.events = all_events(spec)
        self.index = {state_key(spec, s): i for i, s in enumerate(self.states)}
        self.initial = self.index[state_key(spec, interpret.initial_state(spec))]
        self.table: list[list[_Cell]] = []
        self.position: dict[str, int] = {}  # row id -> its position among its event's rows
        for decl in spec.events:
            for i, row in enumerate(spec.rows_for(decl.name)):
                self.position[row.id] = i
        self.by_row: dict[str, list[tuple[int, int]]] = {r.id: [] for r in spec.rows}
        for si, state in enumerate(self.states):
            cells: list[_Cell] = []
            for ei, event in enumerate(self.events):
                step = interpret.step(spec, state, event)
                cell = _Cell(
                    self.index[state_key(spec, step.state)], step.effect, step.row, step.consulted
                )
                cells.append(cell)
                self.by_row[step.row].append((si, ei))
            self.table.append(cells)
        self.parent: dict[int, tuple[int, int] | None] = {self.initial: None}
        queue = deque([self.initial])
        while queue:
            si = queue.popleft()
            for ei, cell in enumerate(self.table[si]):
                if cell.post not in self.parent:
                    self.parent[cell.post] = (si, ei)
                    queue.append(cell.post)
        self.posts = [[c.post for c in cells] for cells in self.table]
        self.fires = [{c.row for c in cells} for cells in self.table]
        self.monitor_names = {p.id: list(p.monitor_states) for p in spec.traces}
        for names in self.monitor_names.values():
            if "violation" not in names:
                names.append("violation")
        self._monitor: dict[tuple[str, int, int], list[int]] = {}
        self._labels: dict[str, Any] = {}

    def labels(self, prop: Any) -> Any:
        """A progress property's conditions on every state and event (computed once)."""
        if prop.id not in self._labels:
            from pi_context.spec.liveness import labels

            self._labels[prop.id] = labels(prop, self.states, self.events)
        return self._labels[prop.id]

    def path(self, si: int) -> list[int] | None:
        """Event indices of a shortest path from the initial state to state ``si``."""
        if si not in self.parent:
            return None
        return [ei for _prev, ei in trail(self.parent, si)]

    def monitors(self, prop: str, m: int, si: int) -> list[int]:
        """The monitor state after each event from state ``si`` in monitor state ``m``."""
        key = (prop, m, si)
        if key not in self._monitor:
            cells = self.table[si]
            self._monitor[key] = [
                self.monitor_step(prop, m, si, ei, cell) for ei, cell in enumerate(cells)
            ]
        return self._monitor[key]

    def monitor_step(self, prop: str, m: int, si: int, ei: int, cell: _Cell) -> int:
        names = self.monitor_names[prop]
        target = monitor_next(
            self.spec,
            prop,
            names[m],
            self.states[si],
            self.states[cell.post],
            self.events[ei],
            cell.effect,
        )
        return names.index(target)


# ---------------------------------------------------------------- checking one mutant


def _has_absent(state: Wire) -> bool:
    return any(isinstance(v, dict) and ex.ABSENT in v.values() for v in state.values())


def check_mutant(base: Baseline, mutant: Mutant, scenarios: Sequence[Any] = ()) -> Outcome:
    spec, mspec = base.spec, mutant.spec
    outcome = Outcome(mutant)
    row = next(r for r in mspec.rows if r.id == mutant.row)
    event_type = row.event
    if mutant.cell == "guard":
        position = base.position[row.id]
        cases = [
            (si, ei)
            for si in range(len(base.states))
            for ei, event in enumerate(base.events)
            if event["type"] == event_type and base.position[base.table[si][ei].row] >= position
        ]
    else:
        cases = base.by_row[row.id]
    changed: dict[tuple[int, int], _Cell] = {}
    broken = False  # the table cannot even be stepped (loader rejects it)
    for si, ei in cases:
        state, event = base.states[si], base.events[ei]
        try:
            step = interpret.step(mspec, state, event)
        except NoRowMatches:
            outcome.killers["loader"] = (
                f"event {event_type!r}: no row matches "
                f"{render_state(spec, state)} with {render_event(event)}"
            )
            broken = True
            break
        if _has_absent(step.state):
            outcome.killers["loader"] = (
                f"row {step.row!r} copies a field the current variant lacks, e.g. at "
                f"{render_state(spec, state)} with {render_event(event)}"
            )
            broken = True
            break
        cell = _Cell(base.index[state_key(spec, step.state)], step.effect, step.row, step.consulted)
        if cell != base.table[si][ei]:
            changed[(si, ei)] = cell
    if not broken and mutant.cell == "guard":
        fired = {
            (changed.get((si, ei)) or base.table[si][ei]).row
            for si in range(len(base.states))
            for ei, event in enumerate(base.events)
            if event["type"] == event_type
        }
        dead = [r.id for r in mspec.rows_for(event_type) if r.id not in fired]
        if dead:
            outcome.killers["loader"] = f"row {dead[0]!r} can never fire"
    differs = {
        k: c
        for k, c in changed.items()
        if (c.post, c.effect, c.consulted)
        != (
            base.table[k[0]][k[1]].post,
            base.table[k[0]][k[1]].effect,
            base.table[k[0]][k[1]].consulted,
        )
    }
    if not outcome.killers and not differs:
        outcome.status = "equivalent"
        return outcome
    if not outcome.killers and all(base.path(si) is None for si, _ei in differs):
        # It changes only transitions out of states no run reaches; the transitions a run
        # takes are the spec's, so no run from the initial state can tell it from the spec.
        outcome.status = "equivalent"
        outcome.witness = UNREACHED
        return outcome
    failure = _scenarios(mspec, scenarios)
    if failure:
        outcome.killers["scenarios"] = failure
    if not broken:
        _model_check(base, mspec, changed, outcome)
    if outcome.killers:
        outcome.status = "killed"
    else:
        outcome.witness = _witness(base, differs)
    return outcome


def _scenarios(mspec: Spec, scenarios: Sequence[Any]) -> str:
    from pi_context.checks.scenarios import run_scenario

    def step(state: Wire, event: Wire) -> tuple[Wire, str, tuple[str, ...] | None]:
        try:
            result = interpret.step(mspec, state, event)
        except NoRowMatches:
            return {}, "<no row matches>", None
        return result.state, result.effect, result.consulted

    for scenario in scenarios:
        failures = run_scenario(scenario, step)
        if failures:
            return f"scenario {scenario.id!r}: {failures[0]}"
    return ""


def _model_check(
    base: Baseline, mspec: Spec, changed: dict[tuple[int, int], _Cell], outcome: Outcome
) -> None:
    spec = base.spec
    n_states = len(base.states)
    # the mutant's transition table: the spec's, patched where the mutant differs
    posts: list[list[int]] = list(base.posts)
    patched: dict[int, dict[int, _Cell]] = {}
    for (si, ei), c in changed.items():
        patched.setdefault(si, {})[ei] = c
    for si, cells in patched.items():
        posts[si] = [cells[ei].post if ei in cells else p for ei, p in enumerate(base.posts[si])]
    parent: dict[int, tuple[int, int] | None] = {base.initial: None}
    queue = deque([base.initial])
    fired: set[str] = set()
    while queue:
        si = queue.popleft()
        if si in patched:
            cells = patched[si]
            fired |= {(cells.get(ei) or c).row for ei, c in enumerate(base.table[si])}
        else:
            fired |= base.fires[si]
        for ei, post in enumerate(posts[si]):
            if post not in parent:
                parent[post] = (si, ei)
                queue.append(post)

    def trace(steps: list[tuple[int, int]]) -> str:
        shown = [render_event(base.events[ei]) for _si, ei in steps]
        return f"{len(steps)} step(s): " + " → ".join(shown)

    # invariants: only changed transitions can break a transition invariant the spec keeps
    best: tuple[int, str] | None = None
    for (si, ei), c in changed.items():
        if si not in parent:
            continue
        before, after = base.states[si], base.states[c.post]
        for inv in broken_transition_invariants(spec, before, after, base.events[ei], c.effect):
            steps = [*trail(parent, si), (si, ei)]
            if best is None or len(steps) < best[0]:
                best = (len(steps), f"invariant {inv.id!r}, {trace(steps)}")
            break
    for si in parent:
        state = base.states[si]

        def lookup_state(target: ex.Target, state: Wire = state) -> ex.Value:
            return interpret.axis_lookup_any(state, target)

        for sinv in spec.state_invariants:
            if not ex.evaluate(sinv.expr, lookup_state):
                steps = trail(parent, si)
                if best is None or len(steps) < best[0]:
                    best = (len(steps), f"state invariant {sinv.id!r}, {trace(steps)}")
    if best is not None:
        outcome.killers["invariants"] = best[1]
    # trace properties: breadth-first over (state, monitor state)
    for prop in spec.traces:
        hit = _trace_violation(base, prop.id, prop.initial, posts, patched)
        if hit is not None:
            outcome.killers["trace properties"] = f"trace property {prop.id!r}, {trace(hit)}"
            break
    # progress properties: a fair lasso that never reaches the goal
    from pi_context.spec.liveness import first_lasso

    found = first_lasso(spec, base.initial, posts, base.labels)
    if found is not None:
        prop_id, prefix, cycle = found
        outcome.killers["progress properties"] = (
            f"progress property {prop_id!r}, a lasso: {trace(prefix)}, then forever {trace(cycle)}"
        )
    # the model checker's expectations: every state reachable, every row fires
    if spec.expect_all_reachable and len(parent) < n_states:
        missing = next(s for i, s in enumerate(base.states) if i not in parent)
        outcome.killers["model checker"] = f"state {render_state(spec, missing)} is unreachable"
    else:
        unfired = [r.id for r in mspec.rows if r.id not in fired]
        if unfired:
            outcome.killers["model checker"] = (
                f"row {unfired[0]!r} never fires from the initial state"
            )


def _trace_violation(
    base: Baseline,
    prop: str,
    initial: str,
    posts: list[list[int]],
    patched: dict[int, dict[int, _Cell]],
) -> list[tuple[int, int]] | None:
    """A shortest path into the monitor's ``violation`` state, as (state, event) steps."""
    names = base.monitor_names[prop]
    violation = names.index("violation")
    start = (base.initial, names.index(initial))
    seen: dict[tuple[int, int], tuple[tuple[int, int], int] | None] = {start: None}
    frontier = deque([start])
    while frontier:
        node = frontier.popleft()
        si, m = node
        nexts = base.monitors(prop, m, si)
        cells = patched.get(si)
        if cells:
            nexts = list(nexts)
            for ei, c in cells.items():
                nexts[ei] = base.monitor_step(prop, m, si, ei, c)
        for ei, (post, nm) in enumerate(zip(posts[si], nexts, strict=True)):
            if nm == violation:
                steps = [(si, ei)]
                back = seen[node]
                while back is not None:
                    steps.append((back[0][0], back[1]))
                    back = seen[back[0]]
                return list(reversed(steps))
            nxt = (post, nm)
            if nxt not in seen:
                seen[nxt] = (node, ei)
                frontier.append(nxt)
    return None


def _witness(base: Baseline, differs: dict[tuple[int, int], _Cell]) -> str:
    """A shortest trace of the spec whose last step the mutant answers differently."""
    spec = base.spec

    def depth(key: tuple[int, int]) -> int:
        path = base.path(key[0])
        return len(path) if path is not None else 1 << 30

    si, ei = min(differs, key=lambda k: (depth(k), k))
    events = [base.events[e] for e in base.path(si) or []] + [base.events[ei]]
    want, got = base.table[si][ei], differs[(si, ei)]
    lead = " → ".join(render_event(e) for e in events)
    return (
        f"{lead}: spec {render_state(spec, base.states[want.post])} / {want.effect}"
        f"{_reads(want)}, mutant {render_state(spec, base.states[got.post])} / {got.effect}"
        f"{_reads(got)}"
    )


def _reads(cell: _Cell) -> str:
    return f" reading {list(cell.consulted)}" if cell.consulted else ""


# ---------------------------------------------------------------- the whole run


def mutation_report(
    spec: Spec,
    *,
    show: bool = True,
    only: Callable[[Mutant], bool] | None = None,
) -> MutationReport:
    started = time.monotonic()
    from pi_context.checks.scenarios import SCENARIOS

    scenarios = SCENARIOS.get(spec.id, ())
    base = Baseline(spec)
    chosen = [m for m in mutants(spec) if only is None or only(m)]
    progress = Progress(f"{spec.id} mutants", len(chosen)) if show else None
    outcomes: list[Outcome] = []
    for mutant in chosen:
        outcomes.append(check_mutant(base, mutant, scenarios))
        if progress is not None:
            progress.advance()
    report = MutationReport(spec, outcomes, time.monotonic() - started)
    if progress is not None:
        progress.finish(
            f", {report.count('killed')} killed, {report.count('survived')} survived, "
            f"{report.count('equivalent')} equivalent"
        )
    return report
