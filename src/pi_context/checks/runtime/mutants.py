"""Runtime mutants: the runtime broken one way each (a gate removed, a fact inverted, the abort
check dropped, the cause table shifted, ...), and the conformance run against each."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl

from .run import ConformanceResult, run_conformance


@dataclass(frozen=True)
class Mutant:
    """One way to break the runtime, applied for the duration of a ``with``."""

    name: str
    what: str
    apply: Callable[[], contextlib.AbstractContextManager[None]]
    equivalent: Mapping[str, str] = field(default_factory=dict)
    """Spec id -> why no host-level run of that spec can tell it from the real runtime (a
    mutant not listed for a spec must be killed there)."""


BREAKS = {
    "abort-check-dropped": "a boundary build ignores an abort that happened meanwhile",
    "stale-check-dropped": "a boundary build is never checked for staleness",
    "append-check-dropped": "a boundary returned before a lifecycle change is written after it",
    "cause-table-shifted": "each row's cause is the next row's",
    "enabled-gate-removed": "the enabled precondition always passes",
    "enabled-fact-inverted": "the reducer reads enabled inverted",
    "queued-fact-inverted": "the reducer reads queued inverted",
    "aborted-fact-dropped": "the reducer never hears that a turn or run was aborted",
    "hard-reserve-fold-dropped": "hardReserveDue ignores the automatic-reset setting",
    "lazy-facts-eager": "every lazy fact is read before the reducer asks",
    "duplicate-flag-dropped": "no step is ever reported as a duplicate",
    "continue-inverted": (
        "commit-and-continue and commit-and-stop swap what they do after the boundary"
    ),
    "retry-dropped": "an overflow recovery never retries",
    "run-outcome-forgotten": "before_settle always hears that the run completed",
    "follow-up-sent": "a provider request the spec cancels is sent all the same",
    "announced-before-durable": "memory cleared is announced as soon as a boundary is built",
    "boundary-order-swapped": "the boot is built before the marker",
    "root-boot-repeated": "every session start and tree navigation appends another root boot",
    "window-of-root": "every request is tagged with the root window",
}
"""Every runtime mutant, by name: what it breaks (in the order they run)."""


def patch(owner: Any, attribute: str, build: Callable[[Any], Any]) -> Callable[[], Any]:
    """A patch of ``owner.attribute``; ``build`` gets the original and returns the mutant."""

    @contextlib.contextmanager
    def apply() -> Iterator[None]:
        original = owner.__dict__[attribute]
        setattr(owner, attribute, build(original))
        try:
            yield
        finally:
            setattr(owner, attribute, original)

    return apply


Patch = tuple[Any, str, Callable[[Any], Any]]
"""Where a mutant breaks the runtime: ``owner.attribute`` becomes ``build(original)``."""


def mutant_table(
    breaks: Mapping[str, str],
    patches: Mapping[str, Patch],
    *,
    equivalent: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[Mutant, ...]:
    """The mutants ``breaks`` names (name -> what it breaks), in its order, each applying its
    patch; ``equivalent``: name -> spec id -> why no run of that spec can tell it apart."""
    assert set(patches) == set(breaks), set(patches) ^ set(breaks)
    known = equivalent or {}
    return tuple(
        Mutant(name, what, patch(*patches[name]), known.get(name, {}))
        for name, what in breaks.items()
    )


def returning(value: Any) -> Callable[[Any], Any]:
    """A build that replaces a function by one returning ``value``, whatever it is given."""
    return lambda _original: lambda *args, **kwargs: value


def becomes(value: Any) -> Callable[[Any], Any]:
    """A build that replaces the original by ``value`` outright."""
    return lambda _original: value


def _property(getter: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    return lambda original: property(lambda self: getter(self, original.fget(self)))


def _caller_is(function: Any) -> bool:
    """Whether ``current`` was called from ``function`` (the check the mutant drops)."""
    import sys

    frame = sys._getframe(2)
    return frame.f_code is getattr(function, "__code__", None)


def _shifted_cause(original: Any) -> Any:
    def cause(self: Any, row: str, state: Any) -> str:
        real: str = original(self, row, state)
        texts: list[str] = list(dict.fromkeys(self.types.ROW_CAUSE.values()))
        if real in texts and len(texts) > 1:
            return texts[(texts.index(real) + 1) % len(texts)]
        return real

    return cause


def _eager_facts(original: Any) -> Any:
    def watch(self: Any, declared: Any) -> None:
        original(self, declared)
        for name in self.gathered():  # every fact read before the reducer asks
            self.read(name)

    return watch


def _not(value: Any) -> bool:
    return not value


def _false(value: Any) -> bool:
    return False


def _fact_read(fact: str, change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A build of ``EventFacts.read`` that hands the reducer ``change(value)`` for the host
    fact ``fact`` (whatever event it is gathered for)."""

    def build(original: Any) -> Any:
        def read(self: Any, host: str) -> Any:
            value = original(self, host)
            return change(value) if host == fact else value

        return read

    return build


def _announce_early(original: Any) -> Any:
    async def perform(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        if result.window_id is not None:
            from pi_context.bindings.runtime.protocol import cleared_notice

            self._notices.notify("info", cleared_notice(result.window_id))
        return result

    return perform


def _swapped_boundary(original: Any) -> Any:
    def reset_drafts(self: Any) -> Any:
        drafts = original(self)
        drafts[1], drafts[2] = drafts[2], drafts[1]  # boot before marker
        return drafts

    return reset_drafts


def _follow_up_sent(original: Any) -> Any:
    from dataclasses import replace

    return property(lambda self: replace(original.fget(self), cancels=False))


def _without(event: str, why: str) -> dict[str, str]:
    """``why`` for every committed reset-control spec that has no ``event``."""
    from pi_context.statemachine.reset_control import reset_control, spec_ids

    return {sid: why for sid in spec_ids() if not reset_control(sid).accepts(event)}


def _mutants() -> tuple[Mutant, ...]:
    from pi_context.bindings.runtime import (
        budget,
        builder,
        control,
        effects,
        lifecycle,
        runtime,
        window,
    )
    from pi_context.bindings.session import windows
    from pi_context.statemachine.lazy_facts import EventFacts

    lc, st_ = lifecycle.Lifecycle, control.Step
    inverted = _property(lambda self, value: not value)
    dropped = _property(lambda self, value: False)

    def no_aborts(orig: Any) -> Any:
        return lambda self: lifecycle.Token(**{**orig(self).__dict__, "aborts": 0})

    def append_unchecked(orig: Any) -> Any:
        return lambda self, token: orig(self, token) or _caller_is(effects.Effects.append)

    def unfolded(orig: Any) -> Any:
        return lambda self, remaining: (
            remaining is not None and remaining <= self.thresholds.hard_reserve
        )

    def root_window(orig: Any) -> Any:
        return lambda branch, session_id, **_: windows.root_window_id(session_id)

    return mutant_table(
        BREAKS,
        {
            "abort-check-dropped": (lc, "token", no_aborts),
            "stale-check-dropped": (lc, "current", returning(True)),
            "append-check-dropped": (lc, "current", append_unchecked),
            "cause-table-shifted": (ResetControl, "cause", _shifted_cause),
            "enabled-gate-removed": (lc, "refuse_while_off", returning(None)),
            "enabled-fact-inverted": (EventFacts, "read", _fact_read("enabled", _not)),
            "queued-fact-inverted": (EventFacts, "read", _fact_read("queued", _not)),
            "aborted-fact-dropped": (EventFacts, "read", _fact_read("aborted", _false)),
            "hard-reserve-fold-dropped": (budget.Budget, "hard_reserve_due", unfolded),
            "lazy-facts-eager": (EventFacts, "watch", _eager_facts),
            "duplicate-flag-dropped": (ResetControl, "duplicate", returning(False)),
            "continue-inverted": (st_, "continues", inverted),
            "retry-dropped": (st_, "retries", dropped),
            "run-outcome-forgotten": (runtime.Runtime, "run_outcome", returning("completed")),
            "follow-up-sent": (st_, "meaning", _follow_up_sent),
            "announced-before-durable": (effects.Effects, "perform", _announce_early),
            "boundary-order-swapped": (builder.Boundaries, "reset_drafts", _swapped_boundary),
            "root-boot-repeated": (builder, "needs_root_boot", returning(True)),
            "window-of-root": (window, "current_window_id", root_window),
        },
        equivalent={
            "run-outcome-forgotten": {
                "reset-control@0.25": (
                    "0.25 reads the run's outcome only as aborted, and only behind a pending "
                    "overflow chain; every way an abort reaches the runtime (an abort, an "
                    "aborted turn) clears that chain first, so no settle that reads it follows"
                )
            },
            "follow-up-sent": _without(
                "provider_context",
                "the spec decides nothing at the provider-context hook, so no request of its "
                "runs is ever cancelled",
            ),
            "window-of-root": {
                "reset-control@0.25": (
                    "0.25's events and state carry no window ids: its reducer cannot tell one "
                    "window from another, so a wrong id changes none of its decisions"
                )
            },
        },
    )


@cache
def mutants() -> tuple[Mutant, ...]:
    """Every runtime mutant (built on first use: building them imports the runtime)."""
    return _mutants()


@dataclass
class MutantResult:
    mutant: Mutant
    killed: bool
    finding: str = ""
    """The first mismatch the conformance run reported (what killed it)."""


@dataclass
class MutationResult:
    spec_id: str
    results: list[MutantResult]
    seconds: float = 0.0

    @property
    def killed(self) -> int:
        return sum(r.killed for r in self.results)

    @property
    def equivalent(self) -> list[MutantResult]:
        """Surviving mutants known to be equivalent for this spec (each says why)."""
        return [r for r in self.results if not r.killed and self.spec_id in r.mutant.equivalent]

    @property
    def survived(self) -> list[MutantResult]:
        """Surviving mutants that are not known to be equivalent: each is a gap."""
        return [r for r in self.results if not r.killed and self.spec_id not in r.mutant.equivalent]

    @property
    def wrongly_equivalent(self) -> list[MutantResult]:
        """Mutants listed as equivalent for this spec that were killed all the same."""
        return [r for r in self.results if r.killed and self.spec_id in r.mutant.equivalent]

    @property
    def rate(self) -> float:
        counted = len(self.results) - len(self.equivalent)
        return self.killed / counted if counted else 1.0


def kill_mutants(
    spec: Spec,
    *,
    examples: int = 30,
    steps: int = 25,
    only: tuple[str, ...] = (),
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationResult:
    """Run the conformance machine of ``spec`` against each runtime mutant (no shrinking:
    the first mismatch kills it)."""
    return kill(
        spec.id,
        mutants(),
        lambda: run_conformance(spec, examples=examples, steps=steps, shrink=False),
        only=only,
        on_result=on_result,
    )


def kill(
    spec_id: str,
    candidates: Sequence[Mutant],
    conformance: Callable[[], ConformanceResult],
    *,
    only: tuple[str, ...] = (),
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutationResult:
    """Run ``conformance`` (a conformance run of ``spec_id``) with each of ``candidates``
    applied; a run that finds a mismatch kills the mutant (its first line is the finding)."""
    started = time.perf_counter()
    results: list[MutantResult] = []
    for mutant in candidates:
        if only and mutant.name not in only:
            continue
        with mutant.apply():
            found = conformance()
        result = MutantResult(mutant, not found.ok, (found.failure or "").split("\n", 1)[0][:200])
        results.append(result)
        if on_result is not None:
            on_result(result)
    return MutationResult(spec_id, results, time.perf_counter() - started)
