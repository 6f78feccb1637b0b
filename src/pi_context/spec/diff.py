"""Where two specs disagree: every case of their shared finite abstraction on which the next
state, the effect or the lazy facts consulted differ, grouped by the pair of rows that fired.

Two specs share an abstraction when their events carry the same payloads and their states
have the same shape, or when one declares ``refines`` the other: its states are then
enumerated and projected onto the other's (dropping the variant fields the base lacks).
Each group carries a shortest trace from the initial state whose every earlier step the two
specs agree on, so a reviewer sees how the case is reached. Pure: no I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.interpret import Wire, render_event, render_state, state_key
from pi_context.spec.model import EnumType, Event, FieldType, IdType, Spec, TextType

Projection = Callable[[Mapping[str, Any]], Wire]


class DiffError(Exception):
    """The two specs share no finite abstraction (the message says where they part)."""


@dataclass(frozen=True)
class Outcome:
    state: Wire  # already projected onto the coarser spec's states
    effect: str
    row: str
    consulted: tuple[str, ...]
    carried: tuple[tuple[str, str], ...] = ()  # what the effect carries (a follow-up prompt)


@dataclass(frozen=True)
class Case:
    state: Wire  # in the enumerated (finer) spec's states
    event: Wire
    a: Outcome
    b: Outcome

    @property
    def differs_in(self) -> tuple[str, ...]:
        parts = [
            ("state", self.a.state != self.b.state),
            ("effect", self.a.effect != self.b.effect),
            ("consulted", self.a.consulted != self.b.consulted),
            ("carried", self.a.carried != self.b.carried),
        ]
        return tuple(name for name, differs in parts if differs)


@dataclass
class Group:
    row_a: str
    row_b: str
    count: int = 0
    differs_in: set[str] = field(default_factory=set)
    example: Case | None = None
    trace: tuple[Wire, ...] | None = None  # events from the initial state; the last differs


@dataclass
class SpecDiff:
    a: Spec
    b: Spec
    cases: int
    projection: str  # human description, "" when the states are the same
    groups: list[Group]
    enumerated: Spec  # whose states the cases (and traces) are written in

    @property
    def differing(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def same(self) -> bool:
        return not self.groups


def _drop_projection(spec: Spec) -> Projection:
    assert spec.refines is not None
    drops = {(axis, tag): set(fields) for axis, tag, fields in spec.refines.drop}
    maps = {(axis, tag): base for axis, tag, base in spec.refines.map}
    tags = {a.name: a.tag for a in spec.axes if hasattr(a, "tag")}

    def project(state: Mapping[str, Any]) -> Wire:
        out: Wire = {}
        for name, value in state.items():
            if isinstance(value, dict) and name in tags:
                tag = value[tags[name]]
                gone = drops.get((name, tag), set())
                kept = {k: v for k, v in value.items() if k not in gone}
                if (name, tag) in maps:
                    kept[tags[name]] = maps[(name, tag)]
                out[name] = kept
            else:
                out[name] = value
        return out

    return project


def _extension_only(a: Spec, b: Spec) -> tuple[str, ...]:
    """Events one spec has and the other lacks that the extension decides (``scope:
    extension``): not compared, since the other spec says nothing about that hook (unless
    an embedding says how the other reads it, as 0.26 reads 0.25's /wipe-memory)."""
    embedded = {
        name
        for x in (a, b)
        if x.refines is not None and x.refines.embed is not None
        for name, _ in x.refines.embed.events
    }
    return tuple(
        e.name
        for x, y in ((a, b), (b, a))
        for e in x.events
        if e.scope == "extension" and y.event(e.name) is None and e.name not in embedded
    )


def _same_events(a: Spec, b: Spec) -> None:
    skip = set(_extension_only(a, b))
    names_a = [e.name for e in a.events if e.name not in skip]
    names_b = [e.name for e in b.events if e.name not in skip]
    if sorted(names_a) != sorted(names_b):
        only_a = sorted(set(names_a) - set(names_b))
        only_b = sorted(set(names_b) - set(names_a))
        raise DiffError(
            f"{a.id} and {b.id} have different events "
            f"(only in {a.id}: {', '.join(only_a) or '-'}; "
            f"only in {b.id}: {', '.join(only_b) or '-'})"
        )
    for ea in a.events:
        if ea.name in skip:
            continue
        eb = b.event(ea.name)
        assert eb is not None
        if _payload(ea) != _payload(eb):
            raise DiffError(
                f"event {ea.name!r} carries different fields or facts in {a.id} and {b.id}"
            )


def _payload(event: Event) -> tuple[object, ...]:
    # An optional text may be absent, so an event without it is an instance of one with it:
    # the spec without the text reads the event as it is (the text left unread).
    return (
        tuple(
            (f.name, _type_sig(f.type)) for f in event.fields if not isinstance(f.type, TextType)
        ),
        tuple((f.name, _type_sig(f.type), f.lazy) for f in event.facts),
    )


def _type_sig(t: FieldType) -> object:
    if isinstance(t, EnumType):
        return ("enum", t.values)
    if isinstance(t, IdType):
        return ("id", t.abstraction)
    return "bool"


def _plan(a: Spec, b: Spec) -> tuple[Spec, Projection, str]:
    """Which spec's states to enumerate and how they project onto the other's."""
    identity: Projection = dict
    keys_a = {state_key(a, s) for s in all_states(a)} if _shape(a) == _shape(b) else None
    if keys_a is not None and keys_a == {state_key(b, s) for s in all_states(b)}:
        return a, identity, ""
    for fine, coarse in ((b, a), (a, b)):
        if fine.refines is not None and fine.refines.spec == coarse.id:
            project = _drop_projection(fine)
            coarse_keys = {state_key(coarse, s) for s in all_states(coarse)}
            stray = [
                s for s in all_states(fine) if state_key(coarse, project(s)) not in coarse_keys
            ]
            if stray:
                raise DiffError(
                    f"{fine.id}'s projection onto {coarse.id} leaves "
                    f"{render_state(fine, stray[0])} outside {coarse.id}'s states"
                )
            how = _projection_text(fine, coarse)
            return fine, project, f"{fine.id} refines {coarse.id}; its states project {how}"
    raise DiffError(
        f"{a.id} and {b.id} have different states and neither declares that it refines the "
        f"other (add `refines: {{spec: {a.id}, drop: ...}}` to {b.id})"
    )


def _projection_text(fine: Spec, coarse: Spec) -> str:
    assert fine.refines is not None
    parts = [f"reading {ax} `{tag}` as `{base}`" for ax, tag, base in fine.refines.map] + [
        f"dropping {ax}.{tag}.{'/'.join(fs)}" for ax, tag, fs in fine.refines.drop
    ]
    if parts:
        return "by " + " and ".join(parts)
    fine_n, coarse_n = len(all_states(fine)), len(all_states(coarse))
    if fine_n < coarse_n:
        return (
            f"as they are: its {fine_n} states are among {coarse.id}'s {coarse_n} "
            f"(the {coarse_n - fine_n} others cannot arise under {fine.id})"
        )
    return "as they are"


def _shape(spec: Spec) -> tuple[str, ...]:
    return tuple(a.name for a in spec.axes)


StepOutcome = Callable[[Spec, Mapping[str, Any], Wire], Outcome]


def _outcomes(a: Spec, b: Spec) -> tuple[Spec, str, StepOutcome]:
    """Whose states to enumerate, how the two are compared, and each one's outcome."""
    for base, spec in ((a, b), (b, a)):
        if spec.refines is not None and spec.refines.spec == base.id and spec.refines.embed:
            how = f"{spec.id} refines {base.id}, whose cases it reads {_EMBED_HOW}"
            return base, how, _embedded_outcome(base, spec)
    _same_events(a, b)
    fine, project, how = _plan(a, b)
    for name in _extension_only(a, b):
        owner = a if a.event(name) is not None else b
        how += (
            f"; {owner.id}'s `{name}` (decided by the extension around the reducer) has no "
            "counterpart and is not compared"
        )

    def outcome(spec: Spec, state: Mapping[str, Any], event: Wire) -> Outcome:
        on = state if spec is fine else project(state)
        step = interpret.step(spec, on, event)
        post = project(step.state) if spec is fine else step.state
        return Outcome(post, step.effect, step.row, step.consulted, step.carried)

    return fine, how, outcome


def _cases(a: Spec, b: Spec) -> tuple[Spec, str, Callable[[Wire, Wire], Case]]:
    fine, how, outcome = _outcomes(a, b)

    def case(state: Wire, event: Wire) -> Case:
        return Case(state, event, outcome(a, state, event), outcome(b, state, event))

    return fine, how, case


def case_comparer(a: Spec, b: Spec) -> tuple[Spec, Callable[[Wire, Wire], Case]]:
    """The spec whose states a case is written in, and how ``diff_specs`` compares one case
    (any state and event of that spec, concrete window ids included)."""
    fine, _how, case = _cases(a, b)
    return fine, case


def diff_specs(a: Spec, b: Spec) -> SpecDiff:
    fine, how, case = _cases(a, b)
    skip = set(_extension_only(a, b))
    events = [e for e in all_events(fine) if e["type"] not in skip]
    groups: dict[tuple[str, str], Group] = {}
    total = 0
    for state in all_states(fine):
        for event in events:
            total += 1
            c = case(state, event)
            if not c.differs_in:
                continue
            g = groups.setdefault((c.a.row, c.b.row), Group(c.a.row, c.b.row))
            g.count += 1
            g.differs_in.update(c.differs_in)
            if g.example is None:
                g.example = c
    _shortest_traces(fine, events, case, groups)
    ordered = sorted(groups.values(), key=lambda g: (_row_index(a, g.row_a), g.row_b))
    return SpecDiff(a, b, total, how, ordered, fine)


_EMBED_HOW = (
    "as its `embed` says (states, events, facts and effects renamed; outcomes are compared "
    "in the later spec's terms, on the lazy facts both read lazily)"
)


def _embedded_outcome(base: Spec, spec: Spec) -> StepOutcome:
    """Step a case of ``base`` in either spec, the outcome in ``spec``'s terms."""
    assert spec.refines is not None and spec.refines.embed is not None
    emb = spec.refines.embed
    states = {axis: dict(values) for axis, values in emb.states}
    events = dict(emb.events)
    facts = {name: dict(values) for name, values in emb.facts}
    effects = dict(emb.effects)

    def lazy(s: Spec, event: str) -> set[str]:
        e = s.event(event)
        return {f.name for f in e.facts if f.lazy} if e is not None else set()

    def state_in(wire: Mapping[str, Any]) -> Wire:
        out: Wire = {}
        for axis, value in wire.items():
            mapped = states.get(axis)
            if mapped is None:
                out[axis] = value
            elif str(value) in mapped:
                out[axis] = mapped[str(value)]
            else:
                raise DiffError(f"{spec.id} embed: no reading for {base.id}'s {axis} {value!r}")
        return out

    def renames(event: str) -> dict[str, str]:  # base fact -> this spec's fact
        return {
            v.removeprefix("facts."): k
            for k, v in facts.get(event, {}).items()
            if isinstance(v, str) and v.startswith("facts.")
        }

    def event_in(wire: Wire) -> Wire:
        kind = str(wire["type"])
        if kind in events:
            mapped = events[kind]
            assert isinstance(mapped, dict)  # (the loader checked it)
            return dict(mapped)
        target = spec.event(kind)
        if target is None:
            raise DiffError(f"{spec.id} embed: no reading for {base.id}'s event {kind!r}")
        out: Wire = {k: v for k, v in wire.items() if k != "facts"}
        if "facts" in wire:
            given = dict(wire["facts"])
            new: dict[str, Any] = {}
            for f in target.facts:
                value = facts.get(kind, {}).get(f.name, f.name if f.name in given else None)
                if isinstance(value, str) and value.startswith("facts."):
                    value = given[value.removeprefix("facts.")]
                elif value == f.name:
                    value = given[f.name]
                if value is None:
                    raise DiffError(f"{spec.id} embed: no value for {kind} fact {f.name!r}")
                new[f.name] = value
            out["facts"] = new
        return out

    def outcome(which: Spec, state: Mapping[str, Any], event: Wire) -> Outcome:
        kind = str(event["type"])
        mapped_kind = str(event_in(event)["type"])
        both = lazy(spec, mapped_kind) & {renames(kind).get(n, n) for n in lazy(base, kind)}
        if which is base:
            step = interpret.step(base, state, event)
            read = tuple(r for r in (renames(kind).get(n, n) for n in step.consulted) if r in both)
            return Outcome(
                state_in(step.state), effects.get(step.effect, step.effect), step.row, read
            )
        step = interpret.step(spec, state_in(state), event_in(event))
        read = tuple(n for n in step.consulted if n in both)
        return Outcome(step.state, step.effect, step.row, read)

    return outcome


def _row_index(spec: Spec, row: str) -> int:
    return next((i for i, r in enumerate(spec.rows) if r.id == row), len(spec.rows))


def _shortest_traces(
    fine: Spec,
    events: list[Wire],
    case: Callable[[Wire, Wire], Case],
    groups: dict[tuple[str, str], Group],
) -> None:
    """Breadth-first over the states both specs agree on; the first differing step of each
    group ends its trace (and replaces the group's example, so the two match)."""
    start = interpret.initial_state(fine)
    seen = {state_key(fine, start)}
    queue: deque[tuple[Wire, tuple[Wire, ...]]] = deque([(start, ())])
    missing = set(groups)
    while queue and missing:
        state, path = queue.popleft()
        for event in events:
            c = case(state, event)
            key = (c.a.row, c.b.row)
            if c.differs_in and key in missing:
                missing.discard(key)
                groups[key].trace = (*path, event)
                groups[key].example = c
            if "state" in c.differs_in:
                continue  # the specs part ways here; later steps compare different states
            nxt = interpret.step(fine, state, event).state
            k = state_key(fine, nxt)
            if k not in seen:
                seen.add(k)
                queue.append((nxt, (*path, event)))


# ---------------------------------------------------------------- rendering


def _outcome_text(spec: Spec, o: Outcome) -> str:
    reads = f", reading {list(o.consulted)}" if o.consulted else ""
    carried = "".join(f" carrying {name} `{value}`" for name, value in o.carried)
    return f"`{render_state(spec, o.state)}` / `{o.effect}`{carried}{reads}"


def render_markdown(d: SpecDiff, *, heading: str = "#") -> str:
    coarse = d.a if d.enumerated is d.b else d.b  # outcomes are written in its terms
    out = [f"{heading} Differences: {d.a.id} → {d.b.id}", ""]
    if d.projection:
        out += [f"{d.projection}.", ""]
    if d.same:
        out.append(f"The two specs agree on all {d.cases} cases of their shared abstraction.")
        return "\n".join(out) + "\n"
    out += [
        f"{d.differing} of {d.cases} cases differ, in {len(d.groups)} group(s) by the pair of "
        f"rows that fired (row in {d.a.id} → row in {d.b.id}).",
        "",
    ]
    for g in d.groups:
        assert g.example is not None
        c = g.example
        out += [
            f"{heading}# `{g.row_a}` → `{g.row_b}` ({g.count} case(s); differs in "
            f"{', '.join(sorted(g.differs_in))})",
            "",
            f"- case: `{render_state(d.enumerated, c.state)}` + `{render_event(c.event)}`",
            f"- {d.a.id}: {_outcome_text(coarse, c.a)}",
            f"- {d.b.id}: {_outcome_text(coarse, c.b)}",
        ]
        if g.trace is None:
            out.append("- not reachable from the initial state along steps the specs agree on")
        else:
            steps = " → ".join(f"`{render_event(e)}`" for e in g.trace)
            out.append(f"- shortest trace from the initial state: {steps}")
        out.append("")
    return "\n".join(out)


def to_json(d: SpecDiff) -> dict[str, Any]:
    def outcome(o: Outcome) -> dict[str, Any]:
        return {
            "state": o.state,
            "effect": o.effect,
            "row": o.row,
            "consulted": list(o.consulted),
            **({"carried": dict(o.carried)} if o.carried else {}),
        }

    groups = []
    for g in d.groups:
        assert g.example is not None
        groups.append(
            {
                "row_a": g.row_a,
                "row_b": g.row_b,
                "count": g.count,
                "differs_in": sorted(g.differs_in),
                "example": {
                    "state": g.example.state,
                    "event": g.example.event,
                    "a": outcome(g.example.a),
                    "b": outcome(g.example.b),
                },
                "trace": list(g.trace) if g.trace is not None else None,
            }
        )
    return {
        "a": d.a.id,
        "b": d.b.id,
        "projection": d.projection or None,
        "cases": d.cases,
        "differing": d.differing,
        "groups": groups,
    }
