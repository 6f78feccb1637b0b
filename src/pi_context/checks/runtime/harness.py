"""What every runtime conformance shares (the reset-control runtime's and the handoff's): the
machine base with its counters, the named-scenario loop, the derandomized hypothesis run and
its result."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

Op = tuple[str, dict[str, Any]]
"""One host operation of a scenario: a rule's name and its arguments."""
Scenario = tuple[str, tuple[Op, ...]]
"""A named run of host operations."""

M = TypeVar("M", bound="ConformanceMachine")


class ConformanceMachine(RuleBasedStateMachine):
    """A runtime-conformance state machine: host operations on a real runtime, each checked
    against a mirror of the spec. Counters are kept per class, over every run of it."""

    rows: set[str] = set()
    """Rows of the spec the runtime fired (over every run of this class)."""
    examples = 0
    """Set-ups run (one per scenario and per hypothesis example)."""
    stale = 0
    """Boundary builds that an interruption made stale (the reset-control runtime's)."""

    def __init__(self) -> None:
        super().__init__()
        type(self).examples += 1

    @classmethod
    def fresh(cls: type[M], name: str, **attributes: Any) -> type[M]:
        """A subclass of its own (fresh counters), with ``attributes`` set on it."""
        made: type[M] = type(name, (cls,), {"rows": set(), "stale": 0, "examples": 0, **attributes})
        return made

    def begin(self) -> None:
        """Before a scenario's first operation (hypothesis runs the initialize rules itself)."""

    def after_operation(self) -> None:
        """After each operation of a scenario (hypothesis checks the invariants itself)."""

    @classmethod
    def run_scenarios(cls, scenarios: Sequence[Scenario]) -> str | None:
        """Run every scenario on a fresh machine; the first failure, named, or None."""
        for name, ops in scenarios:
            state = cls()
            try:
                state.begin()
                for rule_name, arguments in ops:
                    getattr(state, rule_name)(**arguments)
                    state.after_operation()
            except Exception as exc:  # noqa: BLE001 - a mismatch, or the runtime itself failing
                return f"scenario {name!r}: {type(exc).__name__}: {exc}"
            finally:
                state.teardown()
        return None


@dataclass
class ConformanceResult:
    spec_id: str
    examples: int
    failure: str | None = None
    seconds: float = 0.0
    rows: frozenset[str] = frozenset()
    """Rows of the spec the runtime fired during the run."""
    stale: int = 0
    """Boundary builds that an interruption made stale (and that committed nothing)."""

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_machine(
    spec_id: str,
    machine: type[ConformanceMachine],
    scenarios: Sequence[Scenario],
    *,
    examples: int,
    steps: int,
    shrink: bool,
) -> ConformanceResult:
    """``scenarios``, then ``examples`` generated runs of ``machine`` of up to ``steps`` host
    operations each (derandomized: the same runs every time)."""
    phases = (Phase.explicit, Phase.generate, *((Phase.shrink,) if shrink else ()))
    config = settings(
        max_examples=max(1, examples),
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=True,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    started = time.perf_counter()
    failure = machine.run_scenarios(scenarios)
    if failure is None and examples > 0:
        try:
            run_state_machine_as_test(machine, settings=config)
        except Exception as exc:  # noqa: BLE001 - a mismatch, or the runtime failing: findings
            failure = f"{type(exc).__name__}: {exc}"
    return ConformanceResult(
        spec_id,
        machine.examples,
        failure,
        time.perf_counter() - started,
        frozenset(machine.rows),
        machine.stale,
    )
