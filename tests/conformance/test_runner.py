"""The runner against the reference server and against deliberately broken implementations.

Each broken fixture (tests/conformance/fixtures/impl.py) breaks exactly one thing; the runner
must name that thing, at the right table row, with a minimal trace, and never hang.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from pi_context.checks.conformance import report as rep
from pi_context.checks.conformance.results import ConformanceReport, SpecResult
from pi_context.checks.conformance.runner import run_conformance
from pi_context.spec.abstraction import case_count
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs

UPGRADE = "close_out.upgrade-manual"


def failing_rows(result: SpecResult) -> set[str]:
    return {row for row, tally in result.rows.items() if tally.failed}


def kinds(result: SpecResult) -> set[str]:
    return {step.kind for steps in result.failures.values() for step in steps}


@pytest.fixture(scope="module")
def serve_report(serve_cmd: str) -> ConformanceReport:
    return run_conformance(serve_cmd, examples=25, timeout=30, show=False)


@pytest.fixture(scope="module")
def wrong_report(spec26: Spec, broken_cmd: Callable[[str], str]) -> ConformanceReport:
    return run_conformance(broken_cmd("wrong"), [spec26], examples=25, timeout=30, show=False)


def test_the_reference_server_conforms_to_both_specs(serve_report: ConformanceReport) -> None:
    assert serve_report.ok, rep.render_text(serve_report)
    assert serve_report.protocol == 1
    committed = committed_specs()
    assert sorted(r.spec.id for r in serve_report.specs) == sorted(s.id for s in committed)
    cases = {r.spec.id: r.exhaustive_checked for r in serve_report.specs}
    assert cases == {s.id: case_count(s) for s in committed}
    assert cases["reset-control@0.25"] == 1192 and cases["reset-control@0.26"] == 9212
    for result in serve_report.specs:
        assert result.stateful_examples >= 25 and result.stateful_steps > 0
        assert all(t.checked > 0 and t.failed == 0 for t in result.rows.values())
        assert sum(t.checked for t in result.events.values()) == sum(
            t.checked for t in result.rows.values()
        )
    text = rep.render_text(serve_report)
    assert f"conforms: {len(committed)} spec(s)" in text


def test_the_flipped_cell_is_caught_at_its_row_only(wrong_report: ConformanceReport) -> None:
    assert not wrong_report.ok
    (result,) = wrong_report.specs
    assert failing_rows(result) == {UPGRADE}
    assert result.events["close_out"].failed >= 8
    assert kinds(result) == {"mismatch"}
    # exactly the exhaustive cases where an automatic close-out meets a manual one of its window
    exhaustive = {
        (json.dumps(s.pre, sort_keys=True), json.dumps(s.event, sort_keys=True))
        for s in result.failures[UPGRADE]
        if s.event["windowId"] in ("w1", "w2")
    }
    expected = {
        (
            json.dumps(
                {
                    "request": {"phase": "close-out", "windowId": w, "source": "automatic"},
                    "overflow": o,
                },
                sort_keys=True,
            ),
            json.dumps({"type": "close_out", "windowId": w, "source": "manual"}, sort_keys=True),
        )
        for w in ("w1", "w2")
        for o in ("idle", "pending", "pending-spent", "spent")
    }
    assert exhaustive == expected


def test_the_flipped_cell_gets_a_minimal_trace(wrong_report: ConformanceReport) -> None:
    (result,) = wrong_report.specs
    trace = result.traces[UPGRADE]
    # An upgrade needs an automatic close-out first, and the initial state has none: two steps
    # is the least any trace can take to reach this row.
    assert len(trace) == 2
    assert [s.event for s in trace.steps] == [
        {"type": "close_out", "windowId": "w1", "source": "automatic"},
        {"type": "close_out", "windowId": "w1", "source": "manual"},
    ]
    failing = trace.failing
    assert failing is not None and failing.want.row == UPGRADE
    assert failing.got_state["request"]["source"] == "automatic"
    assert failing.want.state["request"]["source"] == "manual"


def test_random_traces_find_it_too_and_shrink_to_the_minimum(
    wrong_report: ConformanceReport,
) -> None:
    (result,) = wrong_report.specs
    random = result.random_trace
    assert random is not None and random.failing is not None
    assert random.failing.want.row == UPGRADE
    assert len(random) == 2
    assert random.steps[0].event["source"] == "automatic"
    assert random.steps[1].event["source"] == "manual"


def test_reports_of_the_flipped_cell(wrong_report: ConformanceReport, tmp_path: Path) -> None:
    data = rep.to_json(wrong_report)
    (spec,) = data["specs"]
    assert data["ok"] is False and spec["ok"] is False
    assert spec["rows"][UPGRADE]["result"] == "FAIL"
    assert spec["rows"]["close_out.arm"]["failed"] == 0
    assert spec["rows"]["close_out.arm"]["result"] == "ok"
    assert min(t["length"] for t in spec["traces"]) == 2
    suites = ET.fromstring(rep.to_junit(wrong_report))
    failed = {
        case.get("name") for case in suites.iter("testcase") if case.find("failure") is not None
    }
    assert failed == {UPGRADE, "random traces"}
    text = rep.render_text(wrong_report)
    assert "DOES NOT CONFORM (reset-control@0.26)" in text
    assert f"row {UPGRADE}: 2 step(s)" in text
    written = rep.write_bundle(wrong_report, tmp_path / "bundle")
    names = sorted(p.name for p in written)
    assert names == [
        f"reset-control@0.26--{UPGRADE}--random.itf.json",
        f"reset-control@0.26--{UPGRADE}--random.mmd",
        f"reset-control@0.26--{UPGRADE}.itf.json",
        f"reset-control@0.26--{UPGRADE}.mmd",
    ]


@pytest.mark.parametrize(
    ("mode", "rows", "kind", "message"),
    [
        (
            "lie-shape",
            {"settled.clear"},
            "ill-typed",
            "returned an ill-typed state: reply.state.overflow: expected one of",
        ),
        ("garbage", {"abort.clear"}, "protocol", "step reply is not JSON"),
        (
            "lie-consulted",
            {
                "turn_end.overflow-arm",
                "turn_end.overflow-disarm",
                "turn_end.aborted",
                "turn_end.failed",
                "turn_end.disabled",
                "turn_end.tool-commit",
                "turn_end.hard-reserve",
                "turn_end.close-out-continues",
                "turn_end.completed",
            },
            "consulted",
            "not needed on this branch",
        ),
    ],
)
def test_lying_implementations_fail_at_the_lie(
    spec26: Spec,
    broken_cmd: Callable[[str], str],
    mode: str,
    rows: set[str],
    kind: str,
    message: str,
) -> None:
    report = run_conformance(broken_cmd(mode), [spec26], examples=5, timeout=30, show=False)
    (result,) = report.specs
    assert failing_rows(result) == rows
    assert kinds(result) == {kind}
    first = next(iter(result.failures.values()))[0]
    assert message in first.describe()
    assert all(row in result.traces for row in rows)


def test_an_implementation_that_refuses_every_step(
    spec26: Spec, broken_cmd: Callable[[str], str]
) -> None:
    report = run_conformance(broken_cmd("lie-hello"), [spec26], examples=5, timeout=30, show=False)
    (result,) = report.specs
    assert failing_rows(result) == {r.id for r in spec26.rows}
    assert kinds(result) == {"error-reply"}
    step = result.failures["clear.clear"][0]
    assert step.describe() == "answered ok:false for a well-typed request: not implemented yet"
    assert len(result.traces["clear.clear"]) == 1


def test_a_crashing_implementation_is_a_clear_failure(
    spec26: Spec, broken_cmd: Callable[[str], str]
) -> None:
    started = time.monotonic()
    report = run_conformance(broken_cmd("crash"), [spec26], examples=5, timeout=30, show=False)
    assert time.monotonic() - started < 120
    (result,) = report.specs
    assert not report.ok
    assert failing_rows(result) == {"tool_request.record"}
    assert kinds(result) == {"crash"}
    message = result.failures["tool_request.record"][0].describe()
    assert "exited with status 3" in message and "RuntimeError: boom" in message
    assert any("gave up after 5 crashes or hangs" in p for p in result.problems)
    trace = result.traces["tool_request.record"]
    assert len(trace) == 2 and trace.failing is not None and trace.failing.kind == "crash"


def test_a_hanging_implementation_is_a_clear_failure(
    spec26: Spec, broken_cmd: Callable[[str], str]
) -> None:
    started = time.monotonic()
    report = run_conformance(broken_cmd("hang"), [spec26], examples=5, timeout=0.5, show=False)
    assert time.monotonic() - started < 90
    (result,) = report.specs
    assert not report.ok
    assert kinds(result) == {"hang"}
    # only the cases that hang: a settle whose run failed while a close-out is pending
    # (published 0.26: the error is decided by the abort, the chain or the drop rows)
    assert failing_rows(result) <= {
        "before_settle.aborted",
        "before_settle.pending-queued-failed",
        "before_settle.disarm-failed",
        "before_settle.recover",
        "before_settle.spent-bounded",
        "before_settle.drop",
    }
    step = next(iter(result.failures.values()))[0]
    assert "within 0.5s" in step.describe()
    assert "(the implementation and every process it started were stopped)" in step.describe()
    assert step.event["facts"]["failed"] is True


@pytest.mark.parametrize(
    ("mode", "timeout", "error"),
    [
        ("protocol2", 30.0, "the implementation speaks protocol 2; this runner speaks 1"),
        ("mute", 1.0, "handshake failed: no reply to hello within 1s of starting"),
    ],
)
def test_a_failed_handshake_stops_the_run(
    broken_cmd: Callable[[str], str], mode: str, timeout: float, error: str
) -> None:
    report = run_conformance(
        broken_cmd(mode), examples=5, timeout=timeout, startup_timeout=timeout, show=False
    )
    assert not report.ok and not report.specs
    assert any(error in e for e in report.errors)
    assert f"FAIL: {report.errors[0]}" in rep.render_text(report)


def test_a_spec_asked_for_but_not_served_fails(spec26: Spec, serve_cmd: str) -> None:
    report = run_conformance(
        f"{serve_cmd} --spec reset-control@0.25", [spec26], examples=0, timeout=30, show=False
    )
    (result,) = report.specs
    assert not result.served and not report.ok
    assert result.problems == [
        "the implementation does not serve reset-control@0.26 (it serves: reset-control@0.25)"
    ]


def test_an_extra_reply_line_is_detected(spec26: Spec, broken_cmd: Callable[[str], str]) -> None:
    report = run_conformance(broken_cmd("extra"), [spec26], examples=0, timeout=30, show=False)
    (result,) = report.specs
    assert not report.ok
    assert any(
        p.startswith("replies are out of step with requests (an extra or a missing reply line)")
        for p in result.problems
    )
