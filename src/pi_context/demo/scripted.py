"""A scripted, deterministic end-to-end run of the runtime (no network, no real model).

A small host loop drives a ``Runtime`` the way an agent framework would, and a scripted
"model" answers each request by looking only at what the runtime sends it: the boot, the
reminder and warning messages, tool results. Its long task is porting an endless list of
legacy modules; the only thing it carries from one window to the next is a pointer into its
script (which behaviour to show in that window). Where to resume comes from its checkpoint
note, read back after every reset.

Per window the script picks a behaviour: close out with ``wipe_memory`` after the warning,
ride on into the hard reserve, checkpoint and stop (the settle fallback commits), stop at the
reminder and let the user run ``/wipe-memory``, hit a provider overflow (one recovery), or have
the user queue a message just before ``wipe_memory`` (delivered once, in the new window). The
first window also sees one aborted turn. Everything is written to a real Pi session file and
real note files, and the table is read back from the session.

This module sets the run up and runs it (``run_demo``); the model and its script are in
``model.py``, the host loop in ``host.py``, the per-window report in ``report.py``. Their
public names are importable from here as well.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from pi_context.bindings.runtime.config import ModelInfo, RuntimeConfig
from pi_context.bindings.runtime.control import DEFAULT_SPEC
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session import Session, seeded_uuids
from pi_context.bindings.session.windows import BOOT_TYPE

from .host import Counters, Host
from .model import (
    CHECKPOINT,
    CONTEXT_WINDOW,
    DEMO_MAPS,
    FIRST_CYCLE,
    LATER_CYCLE,
    MODULE_CHARS,
    QUEUED_TEXT,
    REMINDER_MARGIN,
    RESERVE_TOKENS,
    RESUME_TEXT,
    START_MS,
    TASK,
    Clock,
    DemoError,
    Message,
    Reply,
    ScriptedModel,
    WindowState,
    module_listing,
    module_name,
    schedule,
)
from .report import DemoReport, WindowRow, format_table, summary_json, window_rows
from .tree_trip import TreeTrip, tree_round_trip

__all__ = [
    "CHECKPOINT",
    "CONTEXT_WINDOW",
    "DEMO_MAPS",
    "FIRST_CYCLE",
    "LATER_CYCLE",
    "MODULE_CHARS",
    "QUEUED_TEXT",
    "REMINDER_MARGIN",
    "RESERVE_TOKENS",
    "RESUME_TEXT",
    "START_MS",
    "TASK",
    "Clock",
    "Counters",
    "DemoError",
    "DemoReport",
    "Host",
    "Message",
    "Reply",
    "ScriptedModel",
    "TreeTrip",
    "WindowRow",
    "WindowState",
    "format_table",
    "module_listing",
    "module_name",
    "run_demo",
    "schedule",
    "summary_json",
    "window_rows",
]


def _prepare(directory: Path) -> tuple[Path, Path, Path, Path]:
    directory = directory.absolute()
    if directory.exists() and not directory.is_dir():
        raise DemoError(f"{directory} is not a directory; --dir needs an empty or new directory")
    if directory.exists() and any(directory.iterdir()):
        raise DemoError(f"{directory} is not empty; the demo needs an empty or new directory")
    agent, project = directory / "agent", directory / "project"
    try:
        (project / ".pi").mkdir(parents=True, exist_ok=True)
        agent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DemoError(f"cannot create the demo directory {directory}: {exc.strerror}") from None
    (agent / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": RESERVE_TOKENS}}, indent=2) + "\n"
    )
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"pi-context": {"reminderMarginTokens": REMINDER_MARGIN}}, indent=2) + "\n"
    )
    return agent, project, directory / "sessions", directory / "notes"


def _seed_maps(runtime: Runtime) -> None:
    for scope, body in DEMO_MAPS.items():
        result = runtime.call_tool(
            "notes_write", {"path": "MAP.md", "content": body, "scope": scope}
        )
        if result.is_error:
            raise DemoError(f"could not write the {scope} map: {result.text}")


def run_demo(
    windows: int,
    directory: Path,
    progress: Callable[[str], None] | None = None,
    spec: str = DEFAULT_SPEC,
) -> DemoReport:
    """Run the scripted task over ``windows`` windows in ``directory`` (empty or new), with the
    runtime driven by reset-control spec ``spec``."""
    import asyncio

    started = time.perf_counter()
    kinds = schedule(windows)
    agent, project, sessions, notes = _prepare(directory)
    clock = Clock()
    session_id = str(uuid.UUID(int=random.Random(7).getrandbits(128), version=4))
    session = Session.create(
        project, sessions, session_id=session_id, now=clock, uuids=seeded_uuids(11)
    )
    runtime = Runtime(
        session,
        RuntimeConfig(
            notes_home=notes,
            cwd=project,
            agent_dir=agent,
            agent_name="demo-agent",
            model=ModelInfo("scripted-1", "demo", CONTEXT_WINDOW),
            rng=random.Random(3),
            spec=spec,
        ),
    )
    model = ScriptedModel(kinds, clock, runtime.control.reset_tool)
    host = Host(runtime, model, clock, progress)
    max_turns = 60 * windows + 40

    _seed_maps(runtime)

    async def drive() -> None:
        runtime.session_start("startup")
        await host.prompt(TASK, max_turns)
        while True:
            window = model.window
            if window is None or window.kind == "done":
                return
            if host.resume_pending:
                host.resume_pending = False
                await host.prompt(RESUME_TEXT, max_turns)
            elif window.kind == "manual" and window.reminder_done and not window.manual_done:
                window.manual_done = True
                host.counters.manual_commands += 1
                command = await runtime.wipe_memory_command()
                if command.start_turn:
                    await host.run(max_turns)
                elif command.ok and command.entry_ids:
                    # a spec without close-out phases (0.25) writes the boundary at once
                    await host.prompt("Please continue.", max_turns)
                else:
                    raise DemoError(f"/wipe-memory did not start a close-out: {command.message}")
            else:
                await host.prompt("Please continue.", max_turns)

    asyncio.run(drive())
    host.counters.queued_delivered = host.loop.delivered
    trip = tree_round_trip(runtime)  # /tree across the last reset and back
    runtime.shutdown()
    report = DemoReport(
        rows=window_rows(session, kinds, runtime),
        session_path=session.path or sessions,
        notes_home=notes,
        seconds=time.perf_counter() - started,
        counters=host.counters,
        entries=len(session.entries),
        clock=clock,
        thresholds=(
            runtime.budget.thresholds.reminder,
            runtime.budget.thresholds.warning,
            runtime.budget.thresholds.hard_reserve,
        ),
    )
    if trip is not None:
        report.extra["tree"] = trip
    boots = [e for e in session.branch() if e.get("customType") == BOOT_TYPE]
    report.extra["maps"] = (
        sum(
            # line by line: the shelves layout indents a map's body
            all(
                line in str(b.get("content"))
                for body in DEMO_MAPS.values()
                for line in body.splitlines()
            )
            for b in boots
        ),
        len(boots),
    )
    return report
