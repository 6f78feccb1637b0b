"""The session panel: one view of a session's memory, handoff, automatic handoff, operations.

``session_panel`` builds the report (what ``pi-context session panel --json`` prints and the
runtime's ``session_panel()`` returns); ``panel_lines`` renders it, and every label says what
it counts; ``export_markdown`` is the same for a human to keep (``session export``).
``SessionPanel`` is a live panel a host displays: it refreshes on every operation event until
it is closed.

The panel's automatic-handoff state is what ``handoff@0.6-auto`` says the session's record
means (a replay stepped through the generated reducer), and its metrics are read from the
session's operation log and, up to the handoff, its parent's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.bindings.operations import RETENTION, LogSource, log_path, read_diagnostics
from pi_context.bindings.session import Session
from pi_context.bindings.session.context import projection_entries
from pi_context.bindings.session.jsonl import js_date_ms
from pi_context.bindings.session.usage import estimate_tokens, window_usage
from pi_context.bindings.session.windows import current_reset
from pi_context.statemachine.typed import handoff_0_6_auto as ht
from pi_context.statemachine.typed import typed

from . import automatic as auto
from .automatic import AutoHandoffPolicy
from .errors import HandoffError
from .history import extract_records
from .notes import NoteState, restore_notes
from .report import session_report
from .wording import (
    QUALITY_KEYS,
    count,
    handoff_line,
    memory_lines,
    number,
    quality_line,
    snake_memory,
    sources_line,
)


@dataclass(frozen=True)
class ContextUsage:
    tokens: int | None
    context_window: int | None

    def to_json(self) -> dict[str, Any]:
        percent = None
        if self.tokens is not None and self.context_window:
            percent = round(100 * self.tokens / self.context_window, 1)
        return {"tokens": self.tokens, "context_window": self.context_window, "percent": percent}


def estimated_usage(session: Session, context_window: int | None = None) -> ContextUsage:
    """The active window's tokens as the runtime estimates them (no provider figures)."""
    branch = session.branch()
    messages = [m for _, ms in projection_entries(branch) for m in ms]
    if current_reset(branch) is None:
        return ContextUsage(estimate_tokens(messages), context_window)
    return ContextUsage(window_usage(branch, messages, session.session_id), context_window)


def replayed_status(session: Session, policy: AutoHandoffPolicy, now: int) -> str:
    """The spec's automatic state for the session's record (a replay from rest)."""
    record = auto.replay(session.branch()).record
    facts = auto.restore_facts(record, policy, now)
    state, _effect, _row = typed(ht.SPEC_ID).step(
        ht.initial_state(),
        ht.RestoreEvent(
            ht.RestoreFacts(facts.enabled, facts.paused, facts.cooling, facts.attempts_left)
        ),
    )
    return state.automatic


def session_panel(
    path: Path,
    *,
    usage: ContextUsage | None = None,
    policy: AutoHandoffPolicy | None = None,
    automatic_status: str | None = None,
    automatic_record: auto.AutoRecord | None = None,
    log_dir: Path | None = None,
    log_failure: str | None = None,
    now: int | None = None,
) -> dict[str, Any]:
    """Everything the panel shows for the session stored at ``path`` (SessionError for a file
    that is not a session). A running host passes what it knows better than the file: the
    provider's usage, its policy and its live automatic state."""
    import time

    now = time.time_ns() // 1_000_000 if now is None else now
    policy = policy or AutoHandoffPolicy()
    base = session_report(path)
    session = Session.open(path, readonly=True)
    context = usage or estimated_usage(session)
    record = automatic_record or auto.replay(session.branch()).record
    status = automatic_status or replayed_status(session, policy, now)
    shown = record or auto.record_for(status, (), None)
    primary = log_path(session.path or path, log_dir)
    sources = [LogSource(primary, session.session_id)]
    handoff = base["handoff"]
    if "source" in handoff and handoff.get("verdict") in ("verified", "invalid_citations"):
        created = _packet_created_ms(session)
        sources.append(
            LogSource(log_path(handoff["source"], log_dir), handoff["sourceSessionId"], created)
        )
    diagnostics = read_diagnostics(sources)
    quality = {QUALITY_KEYS[k]: v for k, v in base["quality"].items() if k in QUALITY_KEYS}
    quality["semantic_completeness"] = "not_verified"
    quality["duplicate_work"] = "heuristic_only"
    latest = next(
        (e.get("quality") for e in reversed(diagnostics.events) if e.get("event") == "quality"),
        None,
    )
    quality["last_handoff"] = (
        {
            "missing_active": latest.get("missingActive"),
            "changed_active": latest.get("changedActive"),
        }
        if isinstance(latest, dict)
        else None
    )
    return {
        "file": base["file"],
        "session_id": base["sessionId"],
        "parent_session": base["parentSession"],
        "parent_id": base["parentId"],
        "context": context.to_json(),
        "memory": snake_memory(base["memory"]),
        "handoff": handoff,
        "quality": quality,
        "auto_handoff": auto.state_report(status, shown, policy, now)
        | {
            "recorded": record is not None,
            "invalid_records": len(auto.replay(session.branch()).invalid),
        },
        "metrics": diagnostics.metrics.to_json(),
        "diagnostics": diagnostics.window_json(),
        "log_path": str(primary),
        "logging": {
            "path": str(primary),
            "exists": primary.is_file(),
            "error": log_failure,
            "retention": RETENTION,
        },
        "policy": policy.to_json(),
    }


def _packet_created_ms(session: Session) -> int | None:
    for entry in reversed(session.branch()):
        if entry.get("customType") == "context-memory-handoff-in" and isinstance(
            entry.get("data"), dict
        ):
            packet = entry["data"].get("packet")
            if isinstance(packet, dict):
                return js_date_ms(packet.get("createdAt"))
    return None


def panel_lines(report: dict[str, Any]) -> list[str]:
    context = report["context"]
    m = report["metrics"]
    a = report["auto_handoff"]
    d = report["diagnostics"]
    parent = f" ← {report['parent_id'][:8]}" if report["parent_id"] else ""
    percent = "unknown" if context["percent"] is None else f"{context['percent']:.1f}%"
    rate = "no sample" if m["failure_rate"] is None else f"{100 * m['failure_rate']:.1f}%"
    last_failure = f" · last failure {a['last_failure']}" if a["last_failure"] else ""
    log = report["logging"]
    log_state = "" if log["exists"] else " (nothing logged yet)"
    log_error = f" · {log['error']}" if log["error"] else ""
    tokens = "unknown" if context["tokens"] is None else f"{context['tokens']:,}"
    window = "unknown" if context["context_window"] is None else f"{context['context_window']:,}"
    return [
        f"session {report['session_id'][:8]}{parent}  ({report['file']})",
        *memory_lines(report["memory"]),
        f"context: {tokens} / {window} tokens · {percent} of the window",
        quality_line(report["quality"]),
        sources_line(report["quality"]),
        handoff_line(report["handoff"]),
        f"automatic handoff: {a['summary']} · {count(m['handoffs'], 'handoff')} and "
        f"{count(m['failed_operations'], 'failed operation')} in the log window{last_failure}",
        f"model calls: {m['calls']} · failed {m['failed_calls']} ({rate}) · cancelled "
        f"{m['cancelled_calls']} · unfinished {m['unfinished_calls']}",
        f"tokens: {m['returned_tokens']:,} returned · {m['extra_tokens']:,} extra (our own "
        f"calls) · usage unknown for {number(m['unknown_usage_calls'])} of our calls / "
        f"{count(m['native_unknown_usage'], 'host reply', 'host replies')} · provider-reported "
        f"cost {m['reported_cost']:.6f}",
        f"summed call time {m['call_duration_ms'] / 1000:.1f}s (not wall time when calls "
        f"overlap) · {count(m['suspected_repeated_tools'], 'suspected repeated tool call')}",
        f"log window: {count(d['missing_primary_files'], 'missing primary log')} · "
        f"{count(d['unavailable_files'], 'unreadable log file')} · "
        f"{count(d['invalid_lines'], 'invalid line')} (missing data is not counted as zero)",
        f"log: {log['path']}{log_state}{log_error} · kept {log['retention']}",
        f"export: pi-context session export {report['file']} --out PATH",
    ]


def export_markdown(report: dict[str, Any]) -> str:
    """The panel as a Markdown document, with the task notes themselves."""
    lines = [f"# Session {report['session_id']}", "", f"File: `{report['file']}`"]
    if report["parent_session"]:
        lines.append(f"Parent session: `{report['parent_session']}`")
    lines += ["", "## Panel", ""]
    lines += [f"- {line}" for line in panel_lines(report)[1:-1]]
    notes = _notes(Path(report["file"]))
    lines += ["", "## Task notes", ""]
    if notes:
        lines += ["| key | kind | status | text | sources |", "| --- | --- | --- | --- | --- |"]
        for n in notes:
            lines.append(
                f"| {_cell(n['key'])} | {n['kind']}{' (inference)' if n['inference'] else ''} | "
                f"{n['status']} | {_cell(n['text'])} | {_cell(', '.join(n['sourceIds']))} |"
            )
    else:
        lines.append("No task notes are saved on this branch.")
    lines += ["", "## Metrics", "", "| metric | value |", "| --- | --- |"]
    lines += [
        f"| {k} | {v if v is not None else 'no sample'} |" for k, v in report["metrics"].items()
    ]
    lines += ["", "## Automatic handoff policy", "", "| setting | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in report["policy"].items()]
    return "\n".join(lines) + "\n"


def _notes(path: Path) -> list[dict[str, Any]]:
    try:
        session = Session.open(path, readonly=True)
        branch = session.branch()
        state: NoteState = restore_notes(branch, extract_records(branch))
    except (HandoffError, OSError, ValueError):
        return []
    return [n.to_json() for n in state.notes]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_export(report: dict[str, Any], out: Path) -> Path:
    """Write the Markdown export to ``out`` (a new temp file renamed over it), creating its
    folder (the CLI refuses a folder that does not exist before it gets here)."""
    text = export_markdown(report)
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, out)
    return out


class SessionPanel:
    """A live panel: ``refresh`` rebuilds it (the runtime calls it on every operation event
    while it is open) and hands the lines to ``on_update``; ``close`` stops that."""

    def __init__(
        self,
        build: Callable[[], dict[str, Any]],
        on_update: Callable[[list[str]], None] | None = None,
    ) -> None:
        self._build = build
        self._on_update = on_update
        self.closed = False
        self.report = build()

    def refresh(self) -> dict[str, Any]:
        if self.closed:
            raise RuntimeError("the session panel is closed")
        self.report = self._build()
        if self._on_update is not None:
            self._on_update(panel_lines(self.report))
        return self.report

    def lines(self) -> list[str]:
        return panel_lines(self.report)

    def export(self, out: Path) -> Path:
        return write_export(self.report, out)

    def close(self) -> None:
        self.closed = True
