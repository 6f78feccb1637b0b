"""pytest plugin (entry point ``pytest11``): conformance as ordinary test items.

``pytest --pi-context-impl "CMD" [--pi-context-spec ID]`` adds, per spec, a handshake item,
one item per table row and one for the random traces. The implementation is checked once per
spec (on the first item that needs it) and each item reports its part: a row fails with its
failing cases and its shortest failing trace. Without ``--pi-context-impl`` the plugin adds
nothing, so installing pi-context never changes a host's own test run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.spec.model import Spec


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pi-context", "pi-context conformance")
    group.addoption(
        "--pi-context-impl",
        metavar="CMD",
        help="run the pi-context conformance suite against this implementation command",
    )
    group.addoption(
        "--pi-context-spec",
        action="append",
        metavar="ID|FILE",
        help="spec id or file to check (repeatable; default: every committed spec it serves)",
    )
    group.addoption("--pi-context-examples", type=int, default=100, help="random traces per spec")
    group.addoption(
        "--pi-context-timeout", type=float, default=5.0, help="seconds to wait for each reply"
    )
    group.addoption("--pi-context-seed", type=int, help="hypothesis seed for random traces")


class ConformanceFailure(Exception):
    """A conformance item failed; the message is the whole report for that item."""


class _Runs:
    """One conformance run per spec, shared by that spec's items."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: dict[str, Any] = {}

    def report(self, spec: Spec) -> Any:
        from pi_context.checks.conformance.runner import run_conformance
        from pi_context.checks.hypothesis_home import elsewhere

        if spec.id not in self.results:
            option = self.config.getoption
            # hypothesis' files go to our cache, not into the host project's .hypothesis/
            with elsewhere([Path(spec.path)]):
                self.results[spec.id] = run_conformance(
                    option("pi_context_impl"),
                    [spec],
                    examples=option("pi_context_examples"),
                    seed=option("pi_context_seed"),
                    timeout=option("pi_context_timeout"),
                    show=False,
                )
        return self.results[spec.id]


def _specs(config: pytest.Config) -> list[Spec]:
    from pi_context.statemachine.reset_control import committed_specs, resolve_spec

    refs = config.getoption("pi_context_spec")
    return [resolve_spec(ref) for ref in refs] if refs else committed_specs()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("pi_context_impl"):
        config.stash[_RUNS] = _Runs(config)


_RUNS = pytest.StashKey[_Runs]()


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("pi_context_impl"):
        return
    from pi_context.spec import SpecError

    try:
        specs = _specs(config)
    except SpecError as err:
        raise pytest.UsageError(f"--pi-context-spec: {err}") from None
    explicit = bool(config.getoption("pi_context_spec"))
    for spec in specs:
        collector = SpecCollector.from_parent(
            session, name=spec.id, nodeid=f"pi-context-conformance::{spec.id}"
        )
        collector.spec = spec
        collector.explicit = explicit
        items.extend(collector.collect())


class SpecCollector(pytest.Collector):
    spec: Spec
    explicit: bool

    def collect(self) -> Iterator[ConformanceItem]:
        yield ConformanceItem.from_parent(self, name="handshake", part="handshake")
        for row in self.spec.rows:
            yield ConformanceItem.from_parent(self, name=row.id, part="row")
        yield ConformanceItem.from_parent(self, name="random traces", part="random")


class ConformanceItem(pytest.Item):
    def __init__(self, *, part: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.part = part

    @property
    def _collector(self) -> SpecCollector:
        parent = self.parent
        assert isinstance(parent, SpecCollector)
        return parent

    def runtest(self) -> None:
        spec = self._collector.spec
        report = self.config.stash[_RUNS].report(spec)
        if report.errors:
            raise ConformanceFailure("\n".join(report.errors))
        result = next((r for r in report.specs if r.spec.id == spec.id), None)
        if result is None or not result.served:
            served = ", ".join(report.served) or "nothing"
            reason = f"the implementation does not serve {spec.id} (it serves: {served})"
            if self._collector.explicit:
                raise ConformanceFailure(reason)
            pytest.skip(reason)
        if self.part == "handshake":
            return
        if self.part == "random":
            lines = list(result.problems)
            trace = result.random_trace
            if trace is not None:
                lines.append(f"failing random trace ({len(trace)} step(s), shrunk):")
                lines.append(trace.render(spec))
            if lines:
                raise ConformanceFailure("\n".join(lines))
            return
        tally = result.rows[self.name]
        if tally.failed:
            raise ConformanceFailure(_row_failure(result, self.name))
        if not tally.checked:
            raise ConformanceFailure(
                f"row {self.name} was not checked: " + ("; ".join(result.problems) or "no case")
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # not a dotted Python name: pytest would turn the dots of row ids into "::"
        return Path(self._collector.spec.path), None, f"{self._collector.spec.id} {self.name}"


def _row_failure(result: Any, row: str) -> str:
    from pi_context.checks.conformance.report import CASES_SHOWN
    from pi_context.spec.interpret import render_event, render_state

    spec = result.spec
    tally = result.rows[row]
    lines = [f"{spec.id} row {row}: {tally.failed} of {tally.checked} steps do not conform"]
    trace = result.traces.get(row)
    if trace is not None:
        lines.append(f"shortest failing trace ({len(trace)} step(s), {trace.source}):")
        lines.append(trace.render(spec))
    for step in result.failures.get(row, [])[:CASES_SHOWN]:
        lines.append(f"  {render_state(spec, step.pre)} + {render_event(step.event)}")
        lines.append(f"    {step.describe()}")
    return "\n".join(lines)
