"""The demo's last act: hand the finished run off to a fresh session (``demo --handoff``).

A scripted notes generator stands in for the model: it distils the task (a goal citing the
user's request), the user's standing instruction (a confirmed constraint), and where to
resume (an open item citing the model's last reply). The handoff then runs for real: the offer
is written to the demo's session file, the destination is created next to it and verified,
and the report says how to check the binding with the real Pi and ``session report``.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff.controller import (
    HandoffOptions,
    HandoffResult,
    NotesRequest,
    run_handoff,
)
from pi_context.bindings.handoff.history import HistoryRecord
from pi_context.bindings.handoff.report import session_report
from pi_context.bindings.runtime.config import ModelInfo, RuntimeConfig
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session import Session

from .scripted import CONTEXT_WINDOW, QUEUED_TEXT, TASK, DemoReport


def relay_note(key: str, kind: str, text: str, source: HistoryRecord) -> dict[str, Any]:
    """One note of the demo's scripted notes generator, citing the record it comes from."""
    return {
        "key": key,
        "kind": kind,
        "text": text,
        "sourceIds": [source.id],
        "inference": source.role != "user",
        "status": "active",
    }


def demo_generator(request: NotesRequest) -> list[dict[str, Any]]:
    """What a model would distil from the demo's history, deterministically."""
    users = [r for r in request.records if r.role == "user"]
    notes = []
    task = next((r for r in users if r.text.startswith(TASK[:40])), None)
    if task is not None:
        notes.append(relay_note("task", "goal", TASK, task))
    standing = next((r for r in users if QUEUED_TEXT in r.text), None)
    if standing is not None:
        notes.append(relay_note("deprecated-apis", "constraint", QUEUED_TEXT, standing))
    last = next((r for r in reversed(request.records) if r.role == "assistant"), None)
    if last is not None:
        notes.append(
            relay_note(
                "resume",
                "open_item",
                "Resume from the checkpoint note: port the next module after the last one "
                "recorded there.",
                last,
            )
        )
    return notes


@dataclass(frozen=True)
class HandoffDemo:
    result: HandoffResult
    report: dict[str, Any]
    log_dir: Path | None = None
    """Where the handoff's operation log went (inside the demo's folder)."""


def run_handoff_demo(demo: DemoReport, project: Path) -> HandoffDemo:
    """Hand the demo's session off; ``project`` is the demo's project directory."""
    if shutil.which("git") is not None and not (project / ".git").exists():
        # A real repository, so the relay carries a real `git status --short --branch`.
        subprocess.run(["git", "init", "-q", str(project)], check=False, timeout=30)
    session = Session.open(demo.session_path, now=demo.clock)  # the demo's one clock
    runtime = Runtime(
        session,
        RuntimeConfig(
            notes_home=demo.notes_home,
            cwd=project,
            agent_dir=project.parent / "agent",
            agent_name="demo-agent",
            model=ModelInfo("scripted-1", "demo", CONTEXT_WINDOW),
        ),
    )
    # the operation log and its lock stay inside the demo's folder, as --auto-handoff's do
    log_dir = project.parent / "logs"
    runtime.handoffs.configure(log_dir=log_dir)
    runtime.session_start("resume")
    result = asyncio.run(run_handoff(runtime, HandoffOptions(generator=demo_generator)))
    runtime.shutdown()
    report = session_report(result.destination) if result.destination else {}
    return HandoffDemo(result, report, log_dir)


def format_handoff(demo: HandoffDemo) -> str:
    r = demo.result
    lines = ["", f"handoff: {r.outcome}{'' if r.ok else ' (' + str(r.code) + ')'}"]
    lines.append(f"  stages:      {' → '.join(r.stages)}")
    lines.append(f"  source:      {r.source}")
    if r.packet is not None:
        lines.append(
            f"  leaf/digest: {r.packet['source']['leafId']} / {r.packet['source']['digest']}"
        )
        lines.append(f"  offer:       {r.offer_id}")
    if r.quality is not None:
        q = r.quality
        lines.append(
            f"  notes:       {q.goals} goal, {q.constraints} constraint, {q.open_items} open item"
        )
    if r.destination is not None:
        lines.append(f"  destination: {r.destination}")
        verdict = demo.report.get("handoff", {}).get("verdict")
        lines.append(f"  binding:     {verdict} (pi-context session report {r.destination})")
    if demo.log_dir is not None:
        lines.append(f"  log:         {demo.log_dir} (pi-context session panel DEST --log-dir)")
    return "\n".join(lines)
