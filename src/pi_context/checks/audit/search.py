"""Is a session's record a run of a spec? A forward search over sets of abstract states.

The session's observations (:mod:`pi_context.checks.audit.observe`) are read in order. Before each,
the search holds every *node* a run of the spec could be in after the prefix: the spec's
abstract state (the active window is ``w1``, every earlier window ``w2``), the boundary the
host still owes (a committing effect owes the checkpoint, marker, boot and continuation, in
that order), the unrecorded settings (constant over the branch), the bounds the turns so far
put on the one unknown usage line of the hard reserve, and which silent events may fire.
Each observation maps, through the family's declared mapping
(:mod:`pi_context.checks.audit.mapping`), to the events it stands for; unrecorded facts are tried
with every value. The set stays small (it is a set of states, not of runs), so the search
is linear in the session; the first observation that leaves it empty is the first one no
run of the spec explains.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context.checks.audit.mapping import EventPattern, Mapping, Rule, Silent
from pi_context.checks.audit.observe import Observation
from pi_context.spec import interpret
from pi_context.spec.abstraction import all_events
from pi_context.spec.interpret import Wire, state_key
from pi_context.spec.model import Spec

CURRENT, OTHER = "w1", "w2"
INF = float("inf")

# A node: (state key, owed, settings, lo, hi, ready silents, root booted, marked).
Node = tuple[Any, str, tuple[Any, ...], float, float, frozenset[str], bool, bool]
Fired = tuple[str, Wire, str, str]  # (silent id or "", event, row, effect)
BOUNDARY = ("boundary", "boot", "continuation")


@dataclass(frozen=True)
class Explained:
    """One observation of the run found, with the events that fired for it."""

    observation: Observation
    fired: tuple[Fired, ...]
    state: Wire
    owed: str


@dataclass
class Verdict:
    spec: Spec
    observations: int = 0
    explained: bool = False
    run: list[Explained] = field(default_factory=list)
    """The run found (explained) or the shortest explanation of the prefix (not)."""
    failed_at: Observation | None = None
    alternatives: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    line: tuple[float, float] = (-1.0, INF)


class Auditor:
    """A spec and its family's mapping, compiled for the search."""

    def __init__(self, spec: Spec, mapping: Mapping, line: int | None = None) -> None:
        self.spec = spec
        self.line = line
        """The hard-reserve line in tokens (context window minus reserve) when known."""
        self.mapping = mapping
        self.events = all_events(spec)
        self.by_type: dict[str, list[int]] = {}
        for index, event in enumerate(self.events):
            self.by_type.setdefault(event["type"], []).append(index)
        self.lazy = {(e.name, f.name) for e in spec.events for f in e.facts if f.lazy}
        self.commits = {e.name for e in spec.effects if e.commits}
        self.duplicates = {e.name for e in spec.effects if e.duplicate}
        self.settings = [name for name, _values in mapping.settings]
        self.rules: dict[str, list[Rule]] = {}
        for rule in mapping.rules:
            usable = self._usable(rule.events)
            if usable is not None:
                self.rules.setdefault(rule.on, []).append(
                    Rule(rule.on, rule.when, usable, rule.why)
                )
        self.silent: list[Silent] = []
        for silent in mapping.silent:
            usable = self._usable(silent.events)
            if usable is not None:
                self.silent.append(
                    Silent(
                        silent.id,
                        silent.after,
                        silent.before,
                        usable,
                        silent.why,
                        silent.sets,
                        silent.stale,
                    )
                )
        self._states: dict[Any, Wire] = {}
        self._steps: dict[tuple[Any, int], tuple[Any, str, str, tuple[str, ...]]] = {}
        self._demoted: dict[Any, Any] = {}
        self._chosen: dict[tuple[Any, ...], list[int]] = {}

    def _usable(self, patterns: Sequence[EventPattern]) -> tuple[EventPattern, ...] | None:
        """The patterns this spec can take (an optional one it lacks is dropped); None when a
        required one names an event or only effects the spec lacks."""
        out: list[EventPattern] = []
        for p in patterns:
            ok = p.event in self.by_type and (
                p.effects is None or any(self.spec.effect(e) for e in p.effects)
            )
            if ok:
                out.append(p)
            elif not p.optional:
                return None
        return tuple(out)

    # -- the spec, memoised ----------------------------------------------------------------

    def key(self, state: Wire) -> Any:
        k = state_key(self.spec, state)
        self._states.setdefault(k, state)
        return k

    def step(self, key: Any, index: int) -> tuple[Any, str, str, tuple[str, ...]]:
        memo = self._steps.get((key, index))
        if memo is None:
            result = interpret.step(self.spec, self._states[key], self.events[index])
            memo = (self.key(result.state), result.effect, result.row, result.consulted)
            self._steps[(key, index)] = memo
        return memo

    def demote(self, key: Any) -> Any:
        """The state once a new window starts: the active window becomes an earlier one."""
        if key not in self._demoted:
            state = self._states[key]
            moved = {
                axis: (
                    {f: (OTHER if v == CURRENT else v) for f, v in value.items()}
                    if isinstance(value, dict)
                    else value
                )
                for axis, value in state.items()
            }
            self._demoted[key] = self.key(moved)
        return self._demoted[key]

    # -- events of a pattern -----------------------------------------------------------------

    def _resolve(self, binding: Any, attrs: dict[str, Any], settings: dict[str, Any]) -> Any:
        if binding == "current":
            return CURRENT
        if binding == "other":
            return OTHER
        if isinstance(binding, str) and binding.startswith("$"):
            return attrs.get(binding[1:])
        if isinstance(binding, str) and binding.startswith("setting."):
            return settings.get(binding[len("setting.") :])
        return binding

    def instances(
        self, pattern: EventPattern, attrs: dict[str, Any], settings: tuple[Any, ...]
    ) -> list[int]:
        fixed = tuple(
            (name, attrs.get(b[1:]) if isinstance(b, str) and b.startswith("$") else None)
            for name, b in pattern.bind
        )
        memo_key = (pattern, fixed, settings)
        chosen = self._chosen.get(memo_key)
        if chosen is not None:
            return chosen
        named = dict(zip(self.settings, settings, strict=True))
        want: dict[str, Any] = {}
        for name, binding in pattern.bind:
            if binding in ("any", "threshold"):
                continue
            want[name] = self._resolve(binding, attrs, named)
        chosen = []
        for index in self.by_type[pattern.event]:
            event = self.events[index]
            facts = event.get("facts", {})
            if all(
                (event[n] if n in event else facts[n]) == v
                for n, v in want.items()
                if n in event or n in facts
            ):
                chosen.append(index)
        self._chosen[memo_key] = chosen
        return chosen

    # -- applying a sequence of patterns ---------------------------------------------------------

    def apply(
        self,
        node: Node,
        patterns: Sequence[EventPattern],
        attrs: dict[str, Any],
        silent: str = "",
    ) -> Iterable[tuple[Node, tuple[Fired, ...]]]:
        frontier: list[tuple[Node, tuple[Fired, ...]]] = [(node, ())]
        for pattern in patterns:
            nxt: list[tuple[Node, tuple[Fired, ...]]] = []
            for current, fired in frontier:
                if pattern.optional:
                    nxt.append((current, fired))
                nxt += self._one(current, fired, pattern, attrs, silent)
            frontier = nxt
        return frontier

    def _one(
        self,
        node: Node,
        fired: tuple[Fired, ...],
        pattern: EventPattern,
        attrs: dict[str, Any],
        silent: str,
    ) -> list[tuple[Node, tuple[Fired, ...]]]:
        key, owed, settings, lo, hi, ready, booted, marked = node
        named = dict(zip(self.settings, settings, strict=True))
        thresholds = [n for n, b in pattern.bind if b == "threshold"]
        usage = attrs.get("usage")
        out: list[tuple[Node, tuple[Fired, ...]]] = []
        for index in self.instances(pattern, attrs, settings):
            post, effect, row, consulted = self.step(key, index)
            if pattern.effects is not None and effect not in pattern.effects:
                continue
            if pattern.duplicate is not None and (effect in self.duplicates) != pattern.duplicate:
                continue
            new_owed = owed
            if effect in self.commits:
                if owed != "none":
                    continue  # a second boundary while one is owed
                new_owed = "boundary"
            new_lo, new_hi = lo, hi
            event = self.events[index]
            facts = event.get("facts", {})
            for name in thresholds:
                if name not in facts:
                    continue
                if (event["type"], name) in self.lazy and name not in consulted:
                    continue
                if facts[name]:
                    if usage is None or named.get("automatic") is False:
                        break
                    new_hi = min(new_hi, float(usage))
                elif usage is not None and named.get("automatic") is not False:
                    new_lo = max(new_lo, float(usage))
            else:
                if new_lo >= new_hi:
                    continue
                step: Fired = (silent, event, row, effect)
                node2: Node = (post, new_owed, settings, new_lo, new_hi, ready, booted, marked)
                out.append((node2, (*fired, step)))
        return out

    # -- one observation -------------------------------------------------------------------------

    def silent_options(
        self, node: Node, obs: Observation, last_turn: dict[str, Any]
    ) -> list[tuple[Node, tuple[Fired, ...]]]:
        options: list[tuple[Node, tuple[Fired, ...]]] = [(node, ())]
        for silent in self.silent:
            if obs.kind not in silent.before:
                continue
            grown: list[tuple[Node, tuple[Fired, ...]]] = []
            for current, fired in options:
                grown.append((current, fired))
                if silent.stale:
                    if current[1] != "boundary":
                        continue
                    current = (current[0], "none", *current[2:])
                elif current[1] != "none":
                    continue
                if silent.after and silent.id not in current[5]:
                    continue
                if silent.sets:
                    switched = self._set(current, silent.sets)
                    if switched is None:
                        continue
                    current = switched
                for after, more in self.apply(current, silent.events, last_turn, silent.id):
                    ready = after[5] - {silent.id}
                    marks = more or ((silent.id, {"type": silent.id}, "-", "none"),)
                    grown.append(((*after[:5], ready, *after[6:]), fired + marks))
            unique: dict[Node, tuple[Fired, ...]] = {}
            for option, fired in grown:  # the first (fewest silent events) way to each node
                unique.setdefault(option, fired)
            options = list(unique.items())
        return options

    def _set(self, node: Node, sets: tuple[tuple[str, Any], ...]) -> Node | None:
        """``node`` with settings changed; None when nothing changes (a switch to the same
        value is no switch)."""
        values = list(node[2])
        for name, value in sets:
            values[self.settings.index(name)] = value
        if tuple(values) == node[2]:
            return None
        return (node[0], node[1], tuple(values), *node[3:])

    def observe(self, node: Node, obs: Observation) -> list[tuple[Node, tuple[Fired, ...]]]:
        key, owed, settings, lo, hi, ready, booted, marked = node
        kind = obs.kind
        if kind == "checkpoint":
            return [(node, ())] if owed == "boundary" else []
        if kind == "marker":
            if owed != "boundary":
                return []
            return [((self.demote(key), "boot", settings, lo, hi, ready, booted, True), ())]
        if kind == "boot":
            if owed == "boot" and obs.attrs.get("of_marker"):
                return [((key, "continuation", settings, lo, hi, ready, booted, marked), ())]
            if owed == "none" and not booted and not marked:
                return [((key, owed, settings, lo, hi, ready, True, marked), ())]
            return []
        if kind == "continuation":
            if owed != "continuation":
                return []
            return [((key, "none", settings, lo, hi, ready, booted, marked), ())]
        keep: list[tuple[Node, tuple[Fired, ...]]] = []
        if kind == "navigation" and owed != "none":
            # the boundary goes on along this branch, or its rest is on the branch the host
            # navigated away from
            keep = [(node, ())]
            node = (key, "none", settings, lo, hi, ready, booted, marked)
            owed = "none"
        rules = [r for r in self.rules.get(kind, ()) if r.matches(obs.attrs)]
        if kind in ("warning", "reminder") and owed == "boundary" and not rules:
            return [(node, ())]
        if owed != "none":
            return []
        if not rules:
            return [*keep, (node, ())]
        out: list[tuple[Node, tuple[Fired, ...]]] = keep
        for rule in rules:
            out += self.apply(node, rule.events, obs.attrs)
        return out

    def initial_nodes(self) -> list[Node]:
        key = self.key(interpret.initial_state(self.spec))
        combos: list[tuple[Any, ...]] = [()]
        for _name, values in self.mapping.settings:
            combos = [(*c, v) for c in combos for v in values]
        lo, hi = (self.line - 0.5, float(self.line)) if self.line is not None else (-1.0, INF)
        return [(key, "none", c, lo, hi, frozenset(), False, False) for c in combos]

    def state_of(self, key: Any) -> Wire:
        return self._states[key]


def audit(auditor: Auditor, observations: Iterable[Observation]) -> Verdict:
    """Search for a run of the spec that explains ``observations``."""
    verdict = Verdict(auditor.spec)
    frontier: dict[Node, tuple[Node | None, tuple[Fired, ...]]] = {
        n: (None, ()) for n in auditor.initial_nodes()
    }
    history: list[tuple[Observation, dict[Node, tuple[Node | None, tuple[Fired, ...]]]]] = []
    last_turn: dict[str, Any] = {"aborted": False, "failed": False}
    afters = {kind for s in auditor.silent for kind in s.after}
    for obs in observations:
        verdict.observations += 1
        nxt: dict[Node, tuple[Node | None, tuple[Fired, ...]]] = {}
        for node in frontier:
            for mid, silent_fired in auditor.silent_options(node, obs, last_turn):
                for post, fired in auditor.observe(mid, obs):
                    if obs.kind in afters:
                        ready = post[5] | {s.id for s in auditor.silent if obs.kind in s.after}
                        post = (*post[:5], ready, *post[6:])
                    if post not in nxt:
                        nxt[post] = (node, silent_fired + fired)
        if obs.kind == "end" and nxt:
            nxt = {n: link for n, link in nxt.items() if n[1] == "none"}
        nxt = _widest(nxt)
        if not nxt:
            verdict.failed_at = obs
            verdict.alternatives = _alternatives(auditor, frontier, obs, last_turn)
            verdict.run = _walk(auditor, history, next(iter(frontier)))
            return verdict
        history.append((obs, nxt))
        frontier = nxt
        if obs.kind == "turn-end":
            last_turn = obs.attrs
    verdict.explained = True
    best = next(iter(frontier))
    verdict.run = _walk(auditor, history, best)
    verdict.settings = dict(zip(auditor.settings, best[2], strict=True))
    verdict.line = (best[3], best[4])
    return verdict


def _widest(
    nodes: dict[Node, tuple[Node | None, tuple[Fired, ...]]],
) -> dict[Node, tuple[Node | None, tuple[Fired, ...]]]:
    """Drop each node whose bounds on the usage line another node, equal in everything
    else, contains: every future of the narrower one is a future of the wider one, so the
    set stays small (without this it grows with the distinct usages seen)."""
    groups: dict[tuple[Any, ...], list[Node]] = {}
    for node in nodes:
        groups.setdefault((*node[:3], *node[5:]), []).append(node)
    if len(groups) == len(nodes):
        return nodes
    kept: dict[Node, tuple[Node | None, tuple[Fired, ...]]] = {}
    for group in groups.values():
        group.sort(key=lambda n: (n[3], -n[4]))  # by lower bound, widest first
        front: list[Node] = []
        for node in group:
            if not any(f[3] <= node[3] and f[4] >= node[4] for f in front):
                front.append(node)
        for node in front:
            kept[node] = nodes[node]
    return kept


def _walk(
    auditor: Auditor,
    history: list[tuple[Observation, dict[Node, tuple[Node | None, tuple[Fired, ...]]]]],
    node: Node,
) -> list[Explained]:
    """The run ending in ``node``: each observation with what fired for it."""
    out: list[Explained] = []
    for obs, links in reversed(history):
        prev, fired = links[node]
        out.append(Explained(obs, fired, auditor.state_of(node[0]), node[1]))
        if prev is None:
            break
        node = prev
    out.reverse()
    return out


def _alternatives(
    auditor: Auditor,
    frontier: dict[Node, Any],
    obs: Observation,
    last_turn: dict[str, Any],
) -> list[str]:
    """What the spec allows where the observation failed, per distinct state and debt."""
    from pi_context.spec.interpret import render_event, render_state

    lines: list[str] = []
    seen: set[tuple[Any, str]] = set()
    for node in frontier:
        if (node[0], node[1]) in seen:
            continue
        seen.add((node[0], node[1]))
        state = render_state(auditor.spec, auditor.state_of(node[0]))
        if node[1] != "none":
            lines.append(f"in {state}: the host owes the boundary's {node[1]} next")
            continue
        rules = [r for r in auditor.rules.get(obs.kind, ()) if r.matches(obs.attrs)]
        outcomes: set[str] = set()
        for rule in rules:
            for pattern in rule.events:
                for index in auditor.instances(pattern, obs.attrs, node[2])[:64]:
                    _post, effect, row, _c = auditor.step(node[0], index)
                    outcomes.add(f"{render_event(auditor.events[index])} → {row} / {effect}")
        if obs.kind in ("marker", "checkpoint"):
            lines.append(f"in {state}: no boundary is owed (no committing effect fired)")
        elif obs.kind == "boot":
            lines.append(
                f"in {state}: no marker is waiting for a boot (or the root boot is doubled)"
            )
        elif obs.kind == "continuation":
            lines.append(f"in {state}: no boot of a new window precedes it")
        elif outcomes:
            shown = sorted(outcomes)[:4]
            lines.append(f"in {state}: the spec allows " + "; ".join(shown))
        else:
            lines.append(f"in {state}: nothing the mapping allows for {obs.kind}")
        if len(lines) >= 8:
            break
    return lines
