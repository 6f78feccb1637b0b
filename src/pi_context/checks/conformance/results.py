"""What a conformance run found, per spec, per event type and per table row."""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_context.checks.conformance.traces import Trace, TraceStep
from pi_context.spec.model import Spec

STORED_PER_ROW = 2000  # failing cases kept per row (all are counted)


@dataclass
class Tally:
    checked: int = 0
    failed: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed


@dataclass
class SpecResult:
    spec: Spec
    served: bool = True
    exhaustive_cases: int = 0
    exhaustive_checked: int = 0
    stateful_examples: int = 0
    stateful_steps: int = 0
    seconds: float = 0.0
    rows: dict[str, Tally] = field(default_factory=dict)
    events: dict[str, Tally] = field(default_factory=dict)
    failures: dict[str, list[TraceStep]] = field(default_factory=dict)  # row -> failing cases
    traces: dict[str, Trace] = field(default_factory=dict)  # row -> shortest failing trace
    random_trace: Trace | None = None  # hypothesis' shrunk failing trace
    problems: list[str] = field(default_factory=list)  # spec-level failures
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for row in self.spec.rows:
            self.rows.setdefault(row.id, Tally())
        for event in self.spec.events:
            self.events.setdefault(event.name, Tally())

    @property
    def ok(self) -> bool:
        return (
            self.served
            and not self.problems
            and all(t.ok for t in self.rows.values())
            and self.random_trace is None
        )

    @property
    def reasons(self) -> list[str]:
        """Why this spec does not conform, one line each (empty when it does)."""
        if not self.served:
            return self.problems or [f"{self.spec.id} is not served"]
        found = [f"{self.spec.id}: {problem}" for problem in self.problems]
        found += [
            f"{self.spec.id} row {row}: {tally.failed} of {tally.checked} steps do not conform"
            for row, tally in self.rows.items()
            if tally.failed
        ]
        if self.random_trace is not None:
            found.append(f"{self.spec.id}: a random trace fails ({len(self.random_trace)} steps)")
        return found

    def record(self, step: TraceStep) -> None:
        row = self.rows.setdefault(step.want.row, Tally())
        event = self.events.setdefault(str(step.event["type"]), Tally())
        row.checked += 1
        event.checked += 1
        if not step.ok:
            row.failed += 1
            event.failed += 1
            kept = self.failures.setdefault(step.want.row, [])
            if len(kept) < STORED_PER_ROW:
                kept.append(step)

    def shortest_traces(self) -> list[Trace]:
        """Every failing trace found, shortest first (one per failing row)."""
        traces = list(self.traces.values())
        if self.random_trace is not None and all(t is not self.random_trace for t in traces):
            traces.append(self.random_trace)
        return sorted(traces, key=len)


@dataclass
class ConformanceReport:
    """Everything one conformance run found; ``ok`` is the overall verdict."""

    command: str
    protocol: int | None = None
    served: tuple[str, ...] = ()
    errors: list[str] = field(default_factory=list)  # handshake-level failures
    specs: list[SpecResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors and bool(self.specs) and all(s.ok for s in self.specs)

    @property
    def steps(self) -> int:
        return sum(s.exhaustive_checked + s.stateful_steps for s in self.specs)

    @property
    def reasons(self) -> list[str]:
        """Why the run does not conform, one line each (empty when it does): ``ok`` is a
        verdict, this is what it rests on."""
        found = [error.splitlines()[0] for error in self.errors]
        for result in self.specs:
            found += result.reasons
        if not self.errors and not self.specs:
            found.append("no spec was checked")
        return found

    def __str__(self) -> str:
        ids = ", ".join(s.spec.id for s in self.specs) or "no spec"
        if self.ok:
            return f"{self.command}: conforms to {ids} ({self.steps} steps checked)"
        return f"{self.command}: DOES NOT CONFORM\n" + "\n".join(f"  {r}" for r in self.reasons)

    def __repr__(self) -> str:
        verdict = "ok" if self.ok else f"not ok: {'; '.join(self.reasons)[:300]}"
        return f"<ConformanceReport {self.command!r}: {len(self.specs)} specs, {verdict}>"
