"""The demo's report: one row per context window, read back from the durable session branch,
printed as a table (``format_table``) or as JSON (``summary_json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_context.bindings.runtime.protocol import GUIDANCE_TYPE, MANUAL_WIPE_TYPE, WARNING_TYPE
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.windows import window_spans

from .host import Counters
from .model import CONTEXT_WINDOW, DEMO_MAPS, Clock
from .tree_trip import TreeTrip


@dataclass
class WindowRow:
    index: int
    window_id: str
    kind: str
    turns: int
    peak_tokens: int
    reminders: int
    warnings: int
    notes_written: int
    history_calls: int
    modules: int
    cause: str


@dataclass
class DemoReport:
    rows: list[WindowRow]
    session_path: Path
    notes_home: Path
    seconds: float
    counters: Counters
    entries: int
    thresholds: tuple[int, int, int]
    extra: dict[str, Any] = field(default_factory=dict)
    clock: Clock | None = None
    """The demo's one clock (session entries, messages, note times), which a handoff continues."""


def window_rows(session: Session, kinds: Sequence[str], runtime: Runtime) -> list[WindowRow]:
    """The per-window table, read back from the durable session branch."""
    branch = session.branch()
    causes = {
        record.previous_window_id: record.cause + (" (run stopped)" if record.stopped else "")
        for record in runtime.resets
    }
    calls: dict[str, str] = {}
    rows: list[WindowRow] = []
    for index, span in enumerate(window_spans(branch, session.session_id)):
        entries = branch[span.start : span.end]
        row = WindowRow(
            index, span.window_id, kinds[min(index, len(kinds) - 1)], 0, 0, 0, 0, 0, 0, 0, ""
        )
        for entry in entries:
            if entry.get("type") == "custom_message":
                row.reminders += entry.get("customType") == GUIDANCE_TYPE
                row.warnings += entry.get("customType") in (WARNING_TYPE, MANUAL_WIPE_TYPE)
            message = entry.get("message") if entry.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant":
                row.turns += 1
                usage = message.get("usage") or {}
                row.peak_tokens = max(row.peak_tokens, int(usage.get("totalTokens", 0) or 0))
                for block in message.get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        calls[str(block.get("id"))] = str(block.get("name"))
            elif message.get("role") == "toolResult" and not message.get("isError"):
                name = str(message.get("toolName"))
                row.notes_written += name in ("notes_write", "notes_update", "notes_edit")
                row.history_calls += name.startswith("history_")
                row.modules += name == "read_module"
        row.cause = causes.get(span.window_id, "")
        if row.kind == "manual" and row.cause.startswith(("wipe_memory", "clear_memory")):
            command = "/clear-memory" if row.cause.startswith("clear") else "/wipe-memory"
            row.cause = f"{command}, then " + row.cause
        rows.append(row)
    return rows


def format_table(report: DemoReport) -> str:
    header = (
        "window",
        "id",
        "behaviour",
        "turns",
        "peak tokens",
        "reminders",
        "warnings",
        "notes written",
        "history calls",
        "modules",
        "reset cause",
    )
    body = [
        (
            str(r.index + 1),
            r.window_id,
            r.kind,
            str(r.turns),
            str(r.peak_tokens),
            str(r.reminders),
            str(r.warnings),
            str(r.notes_written),
            str(r.history_calls),
            str(r.modules),
            r.cause or "-",
        )
        for r in report.rows
    ]
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in (1, 2, 10) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    reminder, warning, hard = report.thresholds
    c = report.counters
    lines = [line(header), line(["-" * w for w in widths]), *(line(row) for row in body)]
    lines += [
        "",
        f"context window {CONTEXT_WINDOW} tokens; lines (tokens left): reminder {reminder}, "
        f"warning {warning}, hard reserve {hard}",
        f"aborted turns: {c.aborted_turns}; overflow recoveries: {c.overflow_recoveries}; "
        f"/wipe-memory commands: {c.manual_commands}; queued messages delivered: "
        f"{c.queued_delivered}",
        *([trip.line()] if isinstance(trip := report.extra.get("tree"), TreeTrip) else []),
        *(
            [f"maps ({', '.join(DEMO_MAPS)} MAP.md) in {maps[0]} of {maps[1]} boots"]
            if (maps := report.extra.get("maps"))
            else []
        ),
        f"session: {report.session_path} ({report.entries} entries)",
        f"notes:   {report.notes_home}",
        f"ran in {report.seconds:.2f}s",
    ]
    return "\n".join(lines)


def summary_json(report: DemoReport) -> str:
    """The report as JSON (for scripts and tests)."""
    return encode(
        {
            "rows": [r.__dict__ for r in report.rows],
            "session": str(report.session_path),
            "notes": str(report.notes_home),
            "counters": report.counters.__dict__,
            "entries": report.entries,
            "thresholds": list(report.thresholds),
            "tree": report.extra["tree"].as_json() if "tree" in report.extra else None,
        }
    )
