"""Progress text for every stage and call, structured as the seed's ``progressText`` (English).

``Handoff: generating notes · batch 2``, ``Handoff: request 1 · total budget 120s``,
``Handoff: failed (checkpoint_timeout)``, ``Handoff: done``.
"""

from __future__ import annotations

from typing import Any

HANDOFF = "handoff"
FOREGROUND = "foreground"
KIND_NAMES = {
    FOREGROUND: "Model reply",
    "background": "Background notes",
    "compaction": "Compaction notes",
    HANDOFF: "Handoff",
}
STAGE_NAMES = {
    "preparing": "preparing",
    "generating": "generating notes",
    "quality": "checking the handoff",
    "saving": "saving",
    "switching": "switching",
    "validating": "verifying the new session",
    "continuing": "taking over",
}
OUTCOMES = {"ok": "done", "cancelled": "cancelled"}


def progress_text(event: dict[str, Any]) -> str | None:
    """The line to show for a log event (None for events a person need not see)."""
    name = KIND_NAMES.get(str(event.get("kind")), str(event.get("kind")))
    kind = event.get("event")
    batch = event.get("batch")
    if kind == "call_start":
        request = f"request {batch}" if batch else "request"
        timeout = event.get("generationTimeoutMs")
        total = f" · total budget {timeout / 1000:g}s" if isinstance(timeout, int | float) else ""
        return f"{name}: {request}{total}"
    if kind in ("call_end", "operation_end"):
        outcome = OUTCOMES.get(str(event.get("outcome")), "failed")
        code = f" ({event['code']})" if event.get("code") else ""
        budget = event.get("budget")
        over = ""
        if isinstance(budget, dict):
            over = f" · {budget.get('reason')} {budget.get('actual')}/{budget.get('limit')}"
        lead = "request " if kind == "call_end" else ""
        return f"{name}: {lead}{outcome}{code}{over}"
    if kind == "stage":
        stage = STAGE_NAMES.get(str(event.get("stage")), "checking")
        return f"{name}: {stage}{f' · batch {batch}' if batch else ''}"
    return None
