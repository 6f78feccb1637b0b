"""Shrink a failing trace against a live implementation.

Hypothesis finds the failing random trace; shrinking it is done here, by replaying
candidates against the implementation (feeding its states back, as always), because each
replay is a deterministic round trip and we can bound the total time — hypothesis' own
stateful shrinker may replay thousands of traces over the pipe. A candidate is kept when it
still fails at the same table row. The passes: delete chunks of steps (halving the chunk
size down to single steps), rename each unusual id throughout the trace to one of the
abstraction's representatives, then simplify each event (ids to representatives, true facts
to false, enum values to the first one); repeated until nothing changes. The result has no
single deletable step and no simplifiable value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from pi_context.checks.conformance.traces import Trace
from pi_context.spec.abstraction import domain
from pi_context.spec.interpret import Wire
from pi_context.spec.model import BOOL, EnumType, Field, IdType, Spec

Replay = Callable[[list[Wire]], Trace]


def shrink(spec: Spec, trace: Trace, replay: Replay, *, seconds: float = 20.0) -> Trace:
    failing = trace.failing
    if failing is None:
        return trace
    row = failing.want.row
    deadline = time.monotonic() + seconds
    best = trace

    def attempt(events: list[Wire]) -> Trace | None:
        candidate = replay(events)
        step = candidate.failing
        if step is not None and step.want.row == row:
            return candidate
        return None

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        # 1. delete chunks of steps (never the failing one: it is what we keep)
        size = max(len(best) // 2, 1)
        while size >= 1 and time.monotonic() < deadline:
            start = 0
            while start < len(best) - 1 and time.monotonic() < deadline:
                events = [s.event for s in best.steps]
                stop = min(start + size, len(events) - 1)
                shorter = attempt(events[:start] + events[stop:])
                if shorter is not None and len(shorter) < len(best):
                    best, changed = shorter, True
                else:
                    start += size
            size //= 2
        # 2. rename ids throughout the trace (keeps which steps share a window)
        for old, new in _renamings(spec, [s.event for s in best.steps]):
            if time.monotonic() >= deadline:
                break
            events = [_rename(spec, s.event, old, new) for s in best.steps]
            candidate = attempt(events)
            if candidate is not None and len(candidate) <= len(best):
                best, changed = candidate, True
                break
        # 3. simplify values, step by step
        for index in range(len(best)):
            if time.monotonic() >= deadline or index >= len(best):
                break
            for simpler in _simplifications(spec, best.steps[index].event):
                events = [s.event for s in best.steps]
                events[index] = simpler
                candidate = attempt(events)
                if candidate is not None and len(candidate) <= len(best):
                    best, changed = candidate, True
                    break
    return best


def _id_fields(spec: Spec, event: Wire) -> Iterator[tuple[str, str, IdType]]:
    """(where, name, type) of each id-typed value of an event: where is "" or "facts"."""
    decl = spec.event(str(event["type"]))
    if decl is None:
        return
    for f in decl.fields:
        if isinstance(f.type, IdType):
            yield "", f.name, f.type
    for f in decl.facts:
        if isinstance(f.type, IdType):
            yield "facts", f.name, f.type


def _renamings(spec: Spec, events: list[Wire]) -> Iterator[tuple[str, str]]:
    """(old, new): an id that is not one of the abstraction's, and a representative."""
    seen: list[str] = []
    reps: dict[str, tuple[str, ...]] = {}
    for event in events:
        for where, name, t in _id_fields(spec, event):
            value = (event.get("facts", {}) if where else event).get(name)
            if isinstance(value, str) and value not in t.abstraction and value not in seen:
                seen.append(value)
                reps[value] = t.abstraction
    for value in seen:
        for rep in reps[value]:
            yield value, rep


def _rename(spec: Spec, event: Wire, old: str, new: str) -> Wire:
    out = dict(event)
    for where, name, _t in _id_fields(spec, event):
        if where:
            facts = dict(out["facts"])
            if facts.get(name) == old:
                facts[name] = new
            out["facts"] = facts
        elif out.get(name) == old:
            out[name] = new
    return out


def _simplifications(spec: Spec, event: Wire) -> Iterator[Wire]:
    """Simpler variants of one event, one value at a time."""
    decl = spec.event(str(event["type"]))
    if decl is None:
        return
    for f in decl.fields:
        for value in _simpler(f, event.get(f.name)):
            yield {**event, f.name: value}
    facts: dict[str, Any] = event.get("facts", {})
    for f in decl.facts:
        for value in _simpler(f, facts.get(f.name)):
            yield {**event, "facts": {**facts, f.name: value}}


def _simpler(f: Field, value: Any) -> list[Any]:
    if f.type == BOOL:
        return [False] if value is True else []
    if isinstance(f.type, IdType):
        reps = list(f.type.abstraction)
        return reps[: reps.index(value)] if value in reps else reps
    if isinstance(f.type, EnumType):
        first = domain(f.type)[0]
        return [] if value == first else [first]
    return []
