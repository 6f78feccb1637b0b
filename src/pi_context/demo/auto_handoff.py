"""``pi-context demo --auto-handoff``: a scripted agent works until the automatic policy hands
off by itself, continues in the destination, and the session panel is printed.

A deterministic host loop drives a real ``Runtime`` on a real Pi session file: each turn the
user's task continues, the scripted model reads a module (a ``read`` tool call and its result
grow the window) and answers; every model call is reported through the runtime's model-call
hook (tokens, cost, duration). When the agent is idle the host asks ``runtime.auto_handoff()``;
once the window's usage reaches the policy's pressure threshold the handoff runs — scripted
notes in two requests, the offer, the destination, its verification and the stamp that starts
the cooldown — and the next turn runs in the destination, reading the source's history through
the verified binding. Progress lines come from the operation log events.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff.automatic import AutoHandoffPolicy
from pi_context.bindings.handoff.controller import HandoffOptions, HandoffResult, NotesRequest
from pi_context.bindings.handoff.panel import panel_lines
from pi_context.bindings.operations import CallUsage
from pi_context.bindings.runtime.config import ModelInfo, RuntimeConfig
from pi_context.bindings.runtime.results import Notice
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session import Session

from .handoff import relay_note

CONTEXT_WINDOW = 64_000
PRESSURE_PERCENT = 30.0
MAX_TURNS = 60
TASK = (
    "Port the legacy billing modules to the new API, one module at a time. Never change the "
    "public invoice format."
)
MODULE_LINES = 90


class AutoDemoError(Exception):
    """The demo could not run (a one-line reason)."""


@dataclass
class AutoDemo:
    source: Path
    destination: Path | None
    result: HandoffResult | None
    turns: int
    panel: dict[str, Any]
    log_dir: Path
    continued: str = ""
    progress: list[str] = field(default_factory=list)


def _module_text(n: int) -> str:
    rows = [
        f"def charge_{n}_{i}(invoice): return legacy.bill(invoice, rate={i})"
        for i in range(MODULE_LINES)
    ]
    return f"# billing/module_{n:02d}.py\n" + "\n".join(rows)


def demo_generator(request: NotesRequest) -> list[dict[str, Any]]:
    """What a model would distil, in two requests (goal and constraint; where to resume)."""
    first = request.start_request()
    users = [r for r in request.records if r.role == "user"]
    task = next(r for r in users if r.text.startswith(TASK[:30]))
    notes = [
        relay_note("task", "goal", "Port the legacy billing modules to the new API.", task),
        relay_note("invoice-format", "constraint", "Never change the public invoice format.", task),
    ]
    first.end("ok", usage=CallUsage(input=1_800, output=220, cost=0.0021))
    second = request.start_request()
    last = next(r for r in reversed(request.records) if r.role == "assistant")
    notes.append(
        relay_note(
            "resume", "open_item", "Continue with the module after the last one ported.", last
        )
    )
    second.end("ok", usage=CallUsage(input=900, output=120, cost=0.0011))
    return notes


class _Host:
    """The scripted host loop: one runtime, one session at a time (it follows the handoff)."""

    def __init__(self, runtime: Runtime, clock: Callable[[], int]) -> None:
        self.runtime = runtime
        self.clock = clock
        self.turns = 0

    @property
    def session(self) -> Session:
        return self.runtime.session

    def _assistant(self, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "provider": "demo",
            "model": "scripted-1",
            "stopReason": stop,
            "timestamp": self.clock(),
        }

    def _call(self, text: str, tools: list[tuple[str, Any]]) -> None:
        """Report one model call through the runtime's hook (usage as a provider would)."""
        usage = self.runtime.usage()
        ended = self.clock()
        self.runtime.model_call(
            started_ms=ended - 400 - len(text) // 10,  # the call the reply came from
            ended_ms=ended,
            usage=CallUsage(
                input=usage.tokens if usage and usage.tokens else None,
                output=max(1, len(text) // 4),
                cost=0.000_01 * (len(text) // 4),
            ),
            tools=tools,
        )

    async def turn(self, user_text: str, module: int | None) -> None:
        self.turns += 1
        self.runtime.turn_start()
        self.session.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": user_text}],
                "timestamp": self.clock(),
            }
        )
        self.runtime.context()
        if module is not None:
            path = f"billing/module_{module:02d}.py"
            call = {
                "type": "toolCall",
                "id": f"read-{module}",
                "name": "read",
                "arguments": {"path": path},
            }
            self._call("", [("read", {"path": path})])
            self.session.append_message(
                self._assistant([{"type": "text", "text": f"Reading {path}."}, call], "toolUse")
            )
            self.session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": "read",
                    "content": [{"type": "text", "text": _module_text(module)}],
                    "isError": False,
                    "timestamp": self.clock(),
                }
            )
            self.runtime.context()
            reply = f"Ported {path} to the new API; the invoice format is unchanged."
        else:
            reply = "Picked up the relay: the billing port continues with the next module."
        self._call(reply, [])
        assistant = self._assistant([{"type": "text", "text": reply}], "stop")
        self.session.append_message(assistant)
        end = await self.runtime.turn_end("completed", assistant)
        self.runtime.append(end.drafts)
        settle = await self.runtime.before_settle()
        self.runtime.append(settle.drafts)
        self.runtime.settled()


def run_auto_handoff_demo(
    directory: Path, progress: Callable[[str], None] = lambda line: None
) -> AutoDemo:
    """Run the scripted agent in ``directory`` (created if needed) until it has handed off by
    itself and taken one turn in the destination."""
    project, sessions = directory / "project", directory / "sessions"
    log_dir = directory / "logs"
    for path in (project, sessions, directory / "notes", directory / "agent"):
        path.mkdir(parents=True, exist_ok=True)
    if shutil.which("git") is not None and not (project / ".git").exists():
        subprocess.run(["git", "init", "-q", str(project)], check=False, timeout=30)
    lines: list[str] = []

    def notify(notice: Notice) -> None:
        lines.append(notice.text)
        progress(notice.text)

    session = Session.create(project, sessions)
    runtime = Runtime(
        session,
        RuntimeConfig(
            notes_home=directory / "notes",
            cwd=project,
            agent_dir=directory / "agent",
            agent_name="demo-agent",
            model=ModelInfo("scripted-1", "demo", CONTEXT_WINDOW),
            notify=notify,
        ),
    )
    host = _Host(runtime, lambda: time.time_ns() // 1_000_000)
    options = HandoffOptions(generator=demo_generator, session_dir=sessions)
    runtime.handoffs.configure(
        options, AutoHandoffPolicy(pressure_percent=PRESSURE_PERCENT), log_dir
    )
    runtime.session_start("startup")
    source = session.path
    result: HandoffResult | None = None

    async def drive() -> HandoffResult | None:
        await host.turn(TASK, 1)
        for module in range(2, MAX_TURNS):
            handed = await runtime.auto_handoff()
            if handed is not None:
                return handed
            await host.turn("Next module, please.", module)
        return None

    result = asyncio.run(drive())
    if result is None or source is None:
        runtime.shutdown()
        raise AutoDemoError(f"the policy did not hand off within {MAX_TURNS} turns")
    continued = ""
    if result.ok:
        asyncio.run(host.turn("Carry on.", None))
        found = runtime.call_tool(
            "context_history_search", {"query": "module_01", "scope": "handoff"}
        )
        continued = found.text
    panel = runtime.session_panel()
    runtime.shutdown()
    return AutoDemo(
        source, result.destination, result, host.turns, panel, log_dir, continued, lines
    )


def format_auto_demo(demo: AutoDemo) -> str:
    r = demo.result
    assert r is not None
    out = [
        f"automatic handoff after {demo.turns} turns: {r.outcome}"
        + ("" if r.ok else f" ({r.code})"),
        f"  stages:      {' → '.join(r.stages)}",
        f"  source:      {demo.source}",
        f"  destination: {demo.destination}",
        "",
        "session panel (the destination):",
        *(f"  {line}" for line in panel_lines(demo.panel)),
        "",
        f"check it: pi-context session panel {demo.destination} --log-dir {demo.log_dir}",
    ]
    return "\n".join(out) + "\n"
