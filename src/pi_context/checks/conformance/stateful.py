"""Random traces against an implementation, chosen by hypothesis.

Hypothesis draws one seed per trace. The seed expands into the trace: first its *swarm*, the
subset of event types the trace may use (often a single type or all of them; leaving some
types out makes long runs of the others likely, which is what reaches states such as "a
close-out pending for the same window"), then its length (mostly the full
``steps``), each step's event type from the swarm, and payloads — booleans, enumeration
values, and window ids that are the abstraction's representatives two times in three and
arbitrary short strings otherwise. Drawing one value per trace instead of several per step
keeps hypothesis' per-draw cost (a drawn set costs about a millisecond) out of the run. The
seeds are drawn before any trace runs (a passing trace does not change what hypothesis
draws next), so the traces go to the implementation in pipelined batches
(:func:`.traces.replay_many`) instead of one round trip each, and are compared step by step
with the spec in order; the first failing trace is then shrunk by
:mod:`pi_context.checks.conformance.shrink` against the implementation, within a time bound
(hypothesis' own shrinking and its replay of a failure are not used: they would replay traces
against a live process with a history).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from pi_context.checks.conformance.results import SpecResult
from pi_context.checks.conformance.shrink import shrink
from pi_context.checks.conformance.traces import Trace, replay, replay_many
from pi_context.checks.conformance.transport import Implementation
from pi_context.spec import interpret
from pi_context.spec.interpret import Step, Wire
from pi_context.spec.model import BOOL, EnumType, Event, Field, IdType, Spec, TextType
from pi_context.statemachine.reset_control import ResetControl

SOURCE = "random trace (hypothesis, shrunk)"
BATCH = 25  # traces sent in one pipelined batch
# arbitrary window ids: printable ASCII and non-ASCII letters (no surrogates: not UTF-8)
_ID_CHARS = [chr(c) for c in range(33, 127)] + ["é", "ß", "Ж", "漢", "🙂", "\u00a0", "\t"]


@dataclass
class Budget:
    """How many crashes and hangs a spec's run tolerates before giving up."""

    left: int

    def spend(self) -> bool:
        """Use one; False when none are left."""
        self.left -= 1
        return self.left >= 0


def run_random_traces(
    impl: Implementation,
    gen: ResetControl,
    result: SpecResult,
    *,
    examples: int,
    steps: int,
    seed: int | None,
    budget: Budget,
    shrink_seconds: float = 20.0,
    on_example: Callable[[], None] | None = None,
) -> Trace | None:
    """The shrunk failing trace, or None when every trace conformed.

    Hypothesis draws the traces' seeds first (its draws do not depend on what a passing
    trace did); the traces then go to the implementation ``BATCH`` at a time, pipelined,
    and are judged in order, up to the first that fails — the one a trace-by-trace run
    would stop at."""
    spec = gen.spec
    initial = interpret.initial_state(spec)
    names = [e.name for e in spec.events]
    try:
        seeds = draw_seeds(examples, seed)
    except Exception as err:  # hypothesis itself gave up; say so in our words
        result.problems.append(
            f"random traces stopped early: the trace generator reported {_first_line(str(err))!r}"
        )
        return None
    found: Trace | None = None
    memo: dict[bytes, tuple[Step, bytes]] = {}  # the spec's answers, per request line
    for start in range(0, len(seeds), BATCH):
        runs = []
        for trace_seed in seeds[start : start + BATCH]:
            rng = random.Random(trace_seed)
            runs.append((initial, random_events(spec, rng, random_swarm(names, rng), steps)))
        for trace in replay_many(impl, spec, gen, runs, SOURCE, "a random trace", memo):
            result.stateful_examples += 1
            if on_example is not None:
                on_example()
            result.stateful_steps += len(trace)
            for step in trace.steps:
                if step.ok:
                    result.record(step)
            if trace.failing is not None:
                found = trace
                break
        if found is not None:
            break
    if found is None or found.failing is None:
        return None
    if found.failing.kind in ("crash", "hang") and not budget.spend():
        result.problems.append(
            "random traces stopped: the implementation keeps crashing or hanging"
        )
    elif budget.left > 0:
        start_state = found.initial

        def again(events: list[Wire]) -> Trace:
            return replay(impl, spec, gen, start_state, events, SOURCE)

        again_trace = again([s.event for s in found.steps])
        if again_trace.failing is None:
            # the same steps pass from a fresh state: the failure depends on the process's
            # history (what it did before this trace), so there is nothing to shrink
            result.notes.append(
                f"the failing random trace ({len(found)} step(s), {found.failing.kind}) "
                "conformed when replayed: the failure depends on what the implementation "
                "did earlier in its life, not on this trace alone"
            )
        else:
            found = shrink(spec, again_trace, again, seconds=shrink_seconds)
    failing = found.failing
    assert failing is not None
    result.record(failing)
    return found


def draw_seeds(examples: int, seed: int | None) -> list[int]:
    """One seed per trace, drawn by hypothesis (derandomized unless ``seed`` is given).

    What hypothesis draws depends only on ``examples`` and ``seed`` (derandomized, on the
    drawing test's own source), so every spec of a run gets the same seeds (each expands
    them into traces of its own events): they are drawn once per process and setting, not
    once per spec (a hypothesis run costs tens of milliseconds)."""
    with _HYPOTHESIS:
        found = _DRAWN.get((examples, seed))
        if found is None:
            found = _DRAWN[(examples, seed)] = _draw(examples, seed)
    return list(found)


def _draw(examples: int, seed: int | None) -> list[int]:
    seeds: list[int] = []

    @given(st.integers(0, 2**64 - 1))
    def one_trace(trace_seed: int) -> None:
        seeds.append(trace_seed)

    config = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        phases=(Phase.explicit, Phase.generate),  # shrinking is ours, bounded in time
    )
    test = config(one_trace)
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    test()
    return seeds


_HYPOTHESIS = threading.Lock()
"""One hypothesis run at a time: specs checked at once (``run_lanes``) draw in turn."""
_DRAWN: dict[tuple[int, int | None], list[int]] = {}


def random_swarm(names: list[str], rng: random.Random) -> list[str]:
    """A non-empty subset of ``names``: one type alone three times in ten, all of them a
    quarter of the time, otherwise something in between — the shape hypothesis' own set
    draws have, which makes the long single-type runs that reach deep states common."""
    roll = rng.random()
    if roll < 0.3:
        size = 1
    elif roll < 0.55:
        size = len(names)
    else:
        size = rng.randint(min(2, len(names)), max(1, len(names) - 1))
    chosen = set(rng.sample(names, size))
    return [name for name in names if name in chosen]


def random_events(spec: Spec, rng: random.Random, swarm: list[str], steps: int) -> list[Wire]:
    """A trace of wire events (canonical key order) from ``rng``, using only ``swarm``."""
    length = steps if rng.random() < 0.7 else rng.randint(1, steps)
    decls = [d for d in spec.events if d.name in swarm]
    return [_event(rng.choice(decls), rng) for _ in range(length)]


def _event(decl: Event, rng: random.Random) -> Wire:
    out: Wire = {"type": decl.name}
    for f in decl.fields:
        value = _value(f, rng)
        if value is not None:  # (an absent text is left out)
            out[f.name] = value
    if decl.facts:
        out["facts"] = {f.name: _value(f, rng) for f in decl.facts}
    return out


def _value(f: Field, rng: random.Random) -> Any:
    if f.type == BOOL:
        return rng.random() < 0.5
    if isinstance(f.type, EnumType):
        return rng.choice(f.type.values)
    if isinstance(f.type, TextType):  # absent, the representative, or a padded or blank text
        roll = rng.random()
        if roll < 1 / 3:
            return None
        if roll < 2 / 3:
            return f.type.representative
        word = "".join(rng.choice(_ID_CHARS) for _ in range(rng.randint(0, 4)))
        return " " * rng.randint(0, 2) + word + " " * rng.randint(0, 2)
    assert isinstance(f.type, IdType)
    if rng.random() < 2 / 3:
        return rng.choice(f.type.abstraction)
    return "".join(rng.choice(_ID_CHARS) for _ in range(rng.randint(1, 6)))


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "no detail"
    return line if len(line) <= 160 else line[:157] + "..."
