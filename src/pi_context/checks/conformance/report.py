"""Conformance reports: the text summary (per event type and per table row, shortest failing
traces), JSON, JUnit XML, and the replayable bundle of failing traces (ITF JSON + Mermaid).

A report quotes what the implementation answered, which may be anything: every format is
written through ``surrogates.escape`` (lone surrogates spelt ``\\udXXX``), so each is valid
UTF-8, and the JUnit XML also drops the characters XML cannot hold.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from pi_context.checks.conformance.results import ConformanceReport, SpecResult, Tally
from pi_context.checks.conformance.traces import Trace, TraceStep
from pi_context.spec.interpret import Wire, render_event, render_state
from pi_context.spec.model import Spec
from pi_context.support.surrogates import escape

ITF_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
CASES_SHOWN = 3  # failing cases listed per row in the text report

# ---------------------------------------------------------------- text


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [
        line(r) for r in rows
    ]


def _verdict(t: Tally) -> str:
    if not t.checked:
        return "not run"
    return "ok" if t.ok else "FAIL"


def render_text(report: ConformanceReport) -> str:
    out: list[str] = [f"implementation: {report.command}"]
    if report.protocol is not None:
        out.append(f"protocol {report.protocol}; serves: {', '.join(report.served) or 'nothing'}")
    for error in report.errors:
        out.append(f"FAIL: {error}")
    for result in report.specs:
        out.append("")
        out += render_spec(result)
    out.append("")
    checked = report.steps
    if report.ok:
        out.append(
            f"conforms: {len(report.specs)} spec(s), {checked} steps checked "
            f"in {report.seconds:.1f}s"
        )
    else:
        failed = [s.spec.id for s in report.specs if not s.ok]
        what = ", ".join(failed) if failed else "handshake"
        out.append(f"DOES NOT CONFORM ({what}); {checked} steps checked in {report.seconds:.1f}s")
    return escape("\n".join(out))


def render_spec(result: SpecResult) -> list[str]:
    spec = result.spec
    verdict = "ok" if result.ok else "FAIL"
    out = [
        f"{spec.id}: {verdict} — {result.exhaustive_checked}/{result.exhaustive_cases} "
        f"exhaustive cases, {result.stateful_examples} random traces "
        f"({result.stateful_steps} steps), {result.seconds:.1f}s"
    ]
    for problem in result.problems:
        out.append(f"  FAIL: {problem}")
    for note in result.notes:
        out.append(f"  note: {note}")
    if not result.served:
        return out
    out += [
        "  " + line
        for line in _table(
            ["event", "checked", "failed", "result"],
            [[n, str(t.checked), str(t.failed), _verdict(t)] for n, t in result.events.items()],
        )
    ]
    out.append("")
    out += [
        "  " + line
        for line in _table(
            ["row", "checked", "failed", "result"],
            [[n, str(t.checked), str(t.failed), _verdict(t)] for n, t in result.rows.items()],
        )
    ]
    traces = result.shortest_traces()
    if traces:
        out += ["", "  shortest failing traces:"]
        for trace in traces:
            failing = trace.failing
            row = failing.want.row if failing else "?"
            out.append(f"  row {row}: {len(trace)} step(s) ({trace.source})")
            out.append(trace.render(spec))
    if result.failures:
        out += ["", "  failing cases (first per row):"]
        for row, steps in result.failures.items():
            total = result.rows[row].failed
            out.append(f"  row {row}: {total} failing")
            for step in steps[:CASES_SHOWN]:
                out.append(f"    {_case(spec, step)}")
                out.append(f"      {step.describe()}")
    return out


def _case(spec: Spec, step: TraceStep) -> str:
    return f"{render_state(spec, step.pre)} + {render_event(step.event)}"


# ---------------------------------------------------------------- JSON


def dumps(value: Any) -> str:
    """Indented JSON of a report value, valid UTF-8 whatever the implementation answered."""
    return escape(json.dumps(value, indent=2, ensure_ascii=False)) + "\n"


def _step_json(step: TraceStep) -> dict[str, Any]:
    return {
        "state": step.pre,
        "event": step.event,
        "spec": {
            "state": step.want.state,
            "effect": step.want.effect,
            "row": step.want.row,
            "consulted": list(step.want.consulted),
        },
        "implementation": {
            "state": step.got_state,
            "effect": step.got_effect,
            "consulted": step.got_consulted,
        },
        "problems": [{"kind": p.kind, "message": p.message} for p in step.problems],
    }


def _trace_json(trace: Trace) -> dict[str, Any]:
    return {
        "source": trace.source,
        "length": len(trace),
        "initial": trace.initial,
        "steps": [_step_json(s) for s in trace.steps],
    }


def _tally(t: Tally) -> dict[str, Any]:
    return {"checked": t.checked, "failed": t.failed, "result": _verdict(t)}


def to_json(report: ConformanceReport) -> dict[str, Any]:
    return {
        "implementation": report.command,
        "protocol": report.protocol,
        "served": list(report.served),
        "ok": report.ok,
        "errors": report.errors,
        "seconds": round(report.seconds, 3),
        "specs": [
            {
                "id": r.spec.id,
                "sha256": r.spec.sha256,
                "ok": r.ok,
                "served": r.served,
                "problems": r.problems,
                "notes": r.notes,
                "exhaustive": {"cases": r.exhaustive_cases, "checked": r.exhaustive_checked},
                "random": {"traces": r.stateful_examples, "steps": r.stateful_steps},
                "events": {n: _tally(t) for n, t in r.events.items()},
                "rows": {n: _tally(t) for n, t in r.rows.items()},
                "traces": [_trace_json(t) for t in r.shortest_traces()],
                "failures": {
                    row: [_step_json(s) for s in steps[:CASES_SHOWN]]
                    for row, steps in r.failures.items()
                },
            }
            for r in report.specs
        ],
    }


# ---------------------------------------------------------------- JUnit


def to_junit(report: ConformanceReport) -> str:
    suites = ET.Element("testsuites", name=f"pi-context conformance: {report.command}")
    handshake = ET.SubElement(suites, "testsuite", name="handshake", tests="1")
    case = ET.SubElement(handshake, "testcase", classname="handshake", name="hello")
    if report.errors:
        handshake.set("failures", "1")
        ET.SubElement(case, "failure", message=report.errors[0]).text = "\n".join(report.errors)
    else:
        handshake.set("failures", "0")
    for result in report.specs:
        spec = result.spec
        suite = ET.SubElement(suites, "testsuite", name=spec.id)
        cases: list[tuple[str, str | None, str]] = []
        cases.append(("spec", "; ".join(result.problems) or None, "\n".join(result.problems)))
        traces = {t.failing.want.row: t for t in result.shortest_traces() if t.failing}
        for row_id, tally in result.rows.items():
            message: str | None = None
            detail = ""
            if tally.failed:
                first = result.failures.get(row_id, [])
                message = f"{tally.failed} of {tally.checked} steps fail"
                if first:
                    message += f": {first[0].describe()}"
                lines = [_case(spec, s) + "\n  " + s.describe() for s in first[:CASES_SHOWN]]
                if row_id in traces:
                    lines.append("shortest failing trace:\n" + traces[row_id].render(spec))
                detail = "\n".join(lines)
            cases.append((row_id, message, detail))
        random_msg = None
        if result.random_trace is not None and result.random_trace.failing is not None:
            random_msg = result.random_trace.failing.describe()
        cases.append(
            (
                "random traces",
                random_msg,
                result.random_trace.render(spec) if result.random_trace else "",
            )
        )
        failures = 0
        for name, message, detail in cases:
            element = ET.SubElement(suite, "testcase", classname=spec.id, name=name)
            if message is not None:
                failures += 1
                ET.SubElement(element, "failure", message=message[:500]).text = detail
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(failures))
        suite.set("time", f"{result.seconds:.3f}")
    ET.indent(suites)
    text = ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
    return _NOT_XML.sub("\ufffd", escape(text))


# Characters XML 1.0 cannot hold, even escaped (C0 controls but tab and line ends, U+FFFE/F).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


# ---------------------------------------------------------------- ITF and Mermaid


def to_itf(spec: Spec, trace: Trace, command: str) -> dict[str, Any]:
    """The trace in the Informal Trace Format (Apalache/Quint).

    State variables are the spec's axes plus ``mbt::actionTaken`` (the event type, ``init``
    first), ``event`` (the wire event), ``effect`` and ``row``; values are the spec's. The
    failing state's ``#meta`` carries what the implementation answered instead.
    """
    axes = [a.name for a in spec.axes]
    states: list[dict[str, Any]] = [
        {
            "#meta": {"index": 0},
            **{a: trace.initial[a] for a in axes},
            "mbt::actionTaken": "init",
            "event": {"type": "init"},
            "effect": "none",
            "row": "init",
        }
    ]
    for i, step in enumerate(trace.steps, 1):
        meta: dict[str, Any] = {"index": i}
        if not step.ok:
            meta["implementation"] = {
                "state": step.got_state,
                "effect": step.got_effect,
                "consulted": step.got_consulted,
            }
            meta["problems"] = [{"kind": p.kind, "message": p.message} for p in step.problems]
            meta["spec consulted"] = list(step.want.consulted)
        states.append(
            {
                "#meta": meta,
                **{a: step.want.state[a] for a in axes},
                "mbt::actionTaken": step.event["type"],
                "event": step.event,
                "effect": step.want.effect,
                "row": step.want.row,
            }
        )
    failing = trace.failing
    return {
        "#meta": {
            "format": "ITF",
            "format-description": ITF_DESCRIPTION,
            "source": spec.path,
            "spec": spec.id,
            "spec-sha256": spec.sha256,
            "implementation": command,
            "description": (
                f"{trace.source}; step {len(trace)} fails: {failing.describe()}"
                if failing
                else trace.source
            ),
            "generated-by": "pi-context conformance",
        },
        "vars": [*axes, "mbt::actionTaken", "event", "effect", "row"],
        "states": states,
    }


ITF_MAX_BYTES = 64 << 20
"""Largest ITF trace ``--replay`` reads (a bundle's traces are a few KB)."""


def load_itf(path: Path) -> tuple[str, Wire, list[Wire]]:
    """(spec id, initial state, events) of a bundle trace; ValueError says what is wrong."""
    from pi_context.support.jsonlimits import JSONLimitError, check_depth
    from pi_context.support.regular import read_regular

    try:  # a regular file only, bounded, depth checked before the parser recurses
        raw = read_regular(path, ITF_MAX_BYTES + 1)
        if len(raw) > ITF_MAX_BYTES:
            raise ValueError(f"{path}: an ITF trace larger than {ITF_MAX_BYTES} bytes (the limit)")
        check_depth(raw)
        data = json.loads(raw.decode("utf-8"))
    except OSError as err:
        raise ValueError(f"{path}: cannot read an ITF trace: {err.strerror or err}") from None
    except (UnicodeDecodeError, JSONLimitError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read an ITF trace: {err}") from None
    try:
        spec_id = data["#meta"]["spec"]
        variables = data["vars"]
        states = data["states"]
        axes = [v for v in variables if v not in ("mbt::actionTaken", "event", "effect", "row")]
        initial = {a: states[0][a] for a in axes}
        events = [s["event"] for s in states[1:]]
    except (KeyError, IndexError, TypeError) as err:
        raise ValueError(f"{path}: not a pi-context ITF trace (missing {err})") from None
    if not isinstance(spec_id, str):
        raise ValueError(f"{path}: #meta.spec must be a spec id")
    return spec_id, initial, events


def _mm(text: str) -> str:
    return text.replace('"', "#quot;")


def to_mermaid(spec: Spec, trace: Trace) -> str:
    """The trace as a Mermaid flowchart; the failing step is drawn red next to the spec's."""
    lines = [
        f"%% {spec.id}: {trace.source}",
        "flowchart LR",
        f'  s0(["0: {_mm(render_state(spec, trace.initial))}"])',
    ]
    links = 0
    failing_links: list[int] = []
    path_nodes = ["s0"]
    for i, step in enumerate(trace.steps, 1):
        label = _mm(f"{render_event(step.event)} / {step.want.effect}")
        prev = f"s{i - 1}"
        if step.ok:
            lines.append(f'  s{i}["{i}: {_mm(render_state(spec, step.want.state))}"]')
            lines.append(f'  {prev} -->|"{label}"| s{i}')
            path_nodes.append(f"s{i}")
            links += 1
            continue
        lines.append(f'  want{i}["{i}, spec: {_mm(render_state(spec, step.want.state))}"]')
        lines.append(f'  {prev} -->|"{label} ({step.want.row})"| want{i}')
        links += 1
        got = _render_got(spec, step)
        lines.append(f'  got{i}["{i}, implementation: {_mm(got)}"]')
        lines.append(f'  {prev} -.->|"implementation: {step.kind}"| got{i}')
        failing_links.append(links)
        links += 1
    lines += [
        "  classDef path fill:#ebf8ff,stroke:#2b6cb0,stroke-width:2px",
        "  classDef want fill:#c6f6d5,stroke:#2f855a,stroke-width:2px",
        "  classDef fail fill:#fed7d7,stroke:#c53030,stroke-width:3px",
        f"  class {','.join(path_nodes)} path",
    ]
    failing = len(trace.steps)
    if trace.failing is not None:
        lines.append(f"  class want{failing} want")
        lines.append(f"  class got{failing} fail")
    for n in range(links):
        colour = "#c53030" if n in failing_links else "#2b6cb0"
        lines.append(f"  linkStyle {n} stroke:{colour},stroke-width:3px")
    return "\n".join(lines) + "\n"


def _render_got(spec: Spec, step: TraceStep) -> str:
    if step.got_state is None:
        return step.kind
    try:
        state = render_state(spec, step.got_state)
    except (KeyError, TypeError, AttributeError):
        state = json.dumps(step.got_state, ensure_ascii=False)
    return f"{state} / {step.got_effect}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text)


def write_bundle(report: ConformanceReport, directory: Path) -> list[Path]:
    """Write every shortest failing trace as ``<spec>--<row>.itf.json`` and ``.mmd``."""
    written: list[Path] = []
    for result in report.specs:
        for trace in result.shortest_traces():
            failing = trace.failing
            if failing is None:
                continue
            directory.mkdir(exist_ok=True)  # its folder exists: the CLI checks --bundle first
            suffix = "--random" if trace is result.random_trace else ""
            stem = _slug(f"{result.spec.id}--{failing.want.row}{suffix}")
            itf = directory / f"{stem}.itf.json"
            itf.write_text(dumps(to_itf(result.spec, trace, report.command)), encoding="utf-8")
            mmd = directory / f"{stem}.mmd"
            mmd.write_text(escape(to_mermaid(result.spec, trace)), encoding="utf-8")
            written += [itf, mmd]
    return written
