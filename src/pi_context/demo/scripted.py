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
real note files; ``report`` reads the table back from the session.
"""

from __future__ import annotations

import json
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_context.bindings.runtime.config import ModelInfo, RuntimeConfig
from pi_context.bindings.runtime.control import DEFAULT_SPEC
from pi_context.bindings.runtime.protocol import GUIDANCE_TYPE, WARNING_TYPE
from pi_context.bindings.runtime.runtime import Runtime, turn_outcome
from pi_context.bindings.session import Session, seeded_uuids
from pi_context.bindings.session.context import text_blocks
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.windows import BOOT_TYPE, estimate_tokens, window_spans
from pi_context.bindings.tools import ToolResult
from pi_context.integrations.loop import ContextRefused, HostLoop

from .tree_trip import TreeTrip, tree_round_trip

Message = dict[str, Any]

CONTEXT_WINDOW = 40_000
RESERVE_TOKENS = 4_096  # global settings.json
REMINDER_MARGIN = 20_480  # the (trusted) project's .pi/settings.json
MODULE_CHARS = 8_400  # one module listing: about 2,400 tokens
START_MS = int(datetime(2026, 1, 5, 9, 0, tzinfo=UTC).timestamp() * 1000)
TASK = (
    "Port the legacy billing modules to the new ledger API, one module at a time, in order. "
    "Keep going until I say stop."
)
QUEUED_TEXT = "Also keep a list of every deprecated API call you come across."
RESUME_TEXT = "Sorry, that was a mis-click. Please go on."
CHECKPOINT = "checkpoint.md"

# Behaviours, in the order the windows use them; the last window always finishes the task.
FIRST_CYCLE = ("wipe", "ride", "overflow", "stop", "manual", "queued")
LATER_CYCLE = ("wipe", "ride", "stop", "manual")


class DemoError(Exception):
    """The scripted run could not proceed (the message says why)."""


def schedule(windows: int) -> list[str]:
    """Behaviour of each window: the first cycle once, then the later one, ``finish`` last."""
    if windows < 1:
        raise DemoError("--windows must be at least 1")
    kinds = list(FIRST_CYCLE[: windows - 1])
    while len(kinds) < windows - 1:
        kinds.append(LATER_CYCLE[(len(kinds) - len(FIRST_CYCLE)) % len(LATER_CYCLE)])
    return [*kinds, "finish"]


class Clock:
    """Deterministic wall clock for session entries and message timestamps."""

    def __init__(self, start_ms: int = START_MS, step_ms: int = 250) -> None:
        self.now = start_ms
        self.step = step_ms

    def __call__(self) -> int:
        self.now += self.step
        return self.now


def module_name(index: int) -> str:
    return f"billing/module_{index:03d}.py"


def module_listing(index: int) -> str:
    """A deterministic stand-in for a source file of ~MODULE_CHARS characters."""
    rng = random.Random(index)
    words = ("ledger", "invoice", "account", "balance", "posting", "refund", "tax", "currency")
    lines = [f"# {module_name(index)}"]
    size = len(lines[0])
    while size < MODULE_CHARS:
        name = f"{rng.choice(words)}_{rng.choice(words)}_{rng.randrange(1000):03d}"
        call = "legacy_api" if rng.random() < 0.1 else "ledger"
        lines.append(f"def {name}(entry):  return {call}.apply(entry, {rng.randrange(99)})")
        size += len(lines[-1]) + 1
    return "\n".join(lines)[:MODULE_CHARS]


# --- the scripted model ----------------------------------------------------------------------


@dataclass
class Reply:
    message: Message
    calls: list[tuple[str, str, dict[str, Any]]]  # (call id, tool name, arguments)


@dataclass
class WindowState:
    window_id: str
    kind: str
    recovered: bool = False
    reminder_done: bool = False
    warning_done: bool = False
    stopped: bool = False
    overflowed: bool = False
    queued_seen: bool = False
    manual_done: bool = False
    work_turns: int = 0


class ScriptedModel:
    """Answers from the request alone, plus the script pointer (which behaviour comes next)."""

    def __init__(self, kinds: Sequence[str], clock: Clock) -> None:
        self.kinds = list(kinds)
        self.clock = clock
        self.script_index = -1
        self.window: WindowState | None = None
        self.calls = 0
        self.next_module = 1  # forgotten at each reset, then read back from the checkpoint note

    # -- reading the request --

    def _see(self, messages: Sequence[Message]) -> WindowState:
        boot = next(
            (m for m in messages if m.get("role") == "custom" and m.get("customType") == BOOT_TYPE),
            None,
        )
        if boot is None:
            raise DemoError("the request has no boot message")
        found = re.search(r"Current context window id: (\S+)", text_blocks(boot.get("content")))
        window_id = found.group(1) if found else ""
        if self.window is None or self.window.window_id != window_id:
            self.script_index += 1
            kind = self.kinds[min(self.script_index, len(self.kinds) - 1)]
            self.window = WindowState(window_id, kind)
            # After a reset the model remembers nothing of the task but what its notes say:
            # where to resume is forgotten until the checkpoint note is read back.
            self.window.recovered = "Previous context window id:" not in text_blocks(
                boot.get("content")
            )
            if not self.window.recovered:
                self.next_module = 1
        return self.window

    @staticmethod
    def sees(messages: Sequence[Message], custom_type: str) -> bool:
        return any(
            m.get("role") == "custom" and m.get("customType") == custom_type for m in messages
        )

    def learn_from_tool_result(self, name: str, text: str) -> None:
        """The checkpoint note is the model's only memory of where the task stands."""
        if name == "notes_read":
            found = re.search(r"Next module: (\d+)", text)
            if found:
                self.next_module = int(found.group(1))

    # -- writing the reply --

    def _call(self, name: str, **arguments: Any) -> tuple[str, str, dict[str, Any]]:
        self.calls += 1
        return (f"call_{self.calls:05d}", name, arguments)

    def _message(
        self, text: str, calls: list[tuple[str, str, dict[str, Any]]], request: Sequence[Message]
    ) -> Message:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            for cid, name, args in calls
        ]
        message: Message = {
            "role": "assistant",
            "content": content,
            "api": "scripted",
            "provider": "demo",
            "model": "scripted-1",
            "usage": {},
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock(),
        }
        prompt = estimate_tokens(request)
        output = estimate_tokens([{**message, "usage": {}}])
        message["usage"] = _usage(prompt, output)
        return message

    def _checkpoint(self, note: str) -> str:
        return (
            f"Goal: port the legacy billing modules to the ledger API, in order.\n"
            f"Next module: {self.next_module}\n"
            f"Status: {note}\n"
            "Open requests: see history (user messages of the first window)."
        )

    def _save_checkpoint(self, note: str) -> tuple[str, str, dict[str, Any]]:
        return self._call("notes_write", path=CHECKPOINT, content=self._checkpoint(note))

    def _status_edit(self, status: str) -> tuple[str, str, dict[str, Any]]:
        return self._call(
            "notes_edit",
            path="plan.md",
            edits=[{"oldText": "Status: ", "newText": f"Status: {status}; "}],
        )

    def _work(self) -> tuple[str, str, dict[str, Any]]:
        assert self.window is not None
        self.window.work_turns += 1
        call = self._call("read_module", index=self.next_module)
        self.next_module += 1
        return call

    def respond(self, request: Sequence[Message], *, overflow: bool = False) -> Reply:
        state = self._see(request)
        if overflow:
            state.overflowed = True
            message = {
                "role": "assistant",
                "content": [],
                "api": "scripted",
                "provider": "demo",
                "model": "scripted-1",
                "usage": _usage(0, 0),
                "stopReason": "error",
                "errorMessage": (
                    f"prompt is too long: {estimate_tokens(request) + 9_000} tokens > "
                    f"{CONTEXT_WINDOW} maximum"
                ),
                "timestamp": self.clock(),
            }
            return Reply(message, [])
        calls: list[tuple[str, str, dict[str, Any]]] = []
        text = ""
        last = request[-1] if request else {}
        if not state.recovered:
            state.recovered = True
            calls = [
                self._call("notes_read", path=CHECKPOINT),
                self._call("history_windows"),
                self._call("history_search", query="Port the legacy billing", limit=2),
            ]
            text = "Fresh window: reading my checkpoint and the history first."
            if last.get("role") == "user" and QUEUED_TEXT in text_blocks(last.get("content")):
                state.queued_seen = True
                calls.append(
                    self._call("notes_write", path="deprecated.md", content="Deprecated APIs:\n")
                )
        elif last.get("role") == "user" and QUEUED_TEXT in text_blocks(last.get("content")):
            state.queued_seen = True
            calls = [self._call("notes_write", path="deprecated.md", content="Deprecated APIs:\n")]
            text = "Noted: I will track deprecated API calls in deprecated.md."
        elif self.sees(request, WARNING_TYPE) and not state.warning_done:
            state.warning_done = True
            text = "Final warning received: saving my checkpoint."
            if state.kind in ("wipe", "manual", "queued", "finish"):
                calls = [
                    self._save_checkpoint("closing out this window"),
                    self._call("wipe_memory"),
                ]
            elif state.kind == "stop":
                calls = [self._save_checkpoint("paused at the warning")]
                state.stopped = True
            else:  # ride, overflow: save, then keep working
                calls = [self._save_checkpoint("working on past the warning"), self._work()]
        elif state.stopped:
            state.stopped = False
            text = "Pausing here; my checkpoint is saved."
        elif self.sees(request, GUIDANCE_TYPE) and not state.reminder_done:
            state.reminder_done = True
            calls = [self._save_checkpoint("reminder received"), self._status_edit("reminded")]
            text = "Context is getting low: updating my checkpoint."
            if state.kind == "manual":
                state.stopped = True
            else:
                calls.append(self._work())
        elif state.kind == "finish" and state.work_turns >= 2:
            if last.get("role") == "toolResult":
                calls = [self._save_checkpoint("task finished")]
                text = "Recording the final state."
                state.kind = "done"
            else:
                text = "Stopping as planned."
        elif state.kind == "done":
            text = "Done for this session: the ported modules are recorded in my checkpoint."
        else:
            if self.script_index == 0 and state.work_turns == 0:
                calls.append(
                    self._call(
                        "notes_write",
                        path="plan.md",
                        content="Plan: port billing modules in order.\nStatus: started",
                    )
                )
                calls.append(self._save_checkpoint("started"))
            calls.append(self._work())
            text = f"Porting {module_name(self.next_module - 1)}."
        return Reply(self._message(text, calls, request), calls)


def _usage(prompt: int, output: int) -> dict[str, Any]:
    return {
        "input": prompt,
        "output": output,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": prompt + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


# --- the host ---------------------------------------------------------------------------------


@dataclass
class Counters:
    aborted_turns: int = 0
    overflow_recoveries: int = 0
    queued_delivered: int = 0
    manual_commands: int = 0
    turns: int = 0


class Host:
    """The demo's agent loop: the reference loop's steps (``HostLoop``) with the script's
    interventions (an abort, an overflow, a queued message) between them."""

    def __init__(
        self,
        runtime: Runtime,
        model: ScriptedModel,
        clock: Clock,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.runtime = runtime
        self.loop = HostLoop(runtime, clock=clock)
        self.progress = progress
        self.reported = -1
        self.model = model
        self.clock = clock
        self.counters = Counters()
        self.aborted_once = False
        self.resume_pending = False
        self.queued_once = False

    @property
    def session(self) -> Session:
        return self.runtime.session

    def _tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        if name == "read_module":
            return ToolResult(text=module_listing(int(arguments["index"])))
        result = self.runtime.call_tool(name, dict(arguments))
        self.model.learn_from_tool_result(name, result.text)
        return result

    async def prompt(self, text: str, max_turns: int) -> None:
        self.loop.user(text)
        await self.run(max_turns)

    async def run(self, max_turns: int) -> None:
        loop = self.loop
        while True:
            self.counters.turns += 1
            if self.counters.turns > max_turns:
                raise DemoError(f"the scripted run did not settle within {max_turns} turns")
            try:
                request = loop.request()
            except ContextRefused as refused:
                raise DemoError(f"the runtime refused the request: {refused}") from None
            if request.cancelled:  # the empty follow-up after a committed stop (0.34)
                await loop.settle()
                return
            messages = request.messages
            window = self.model.window
            kind = window.kind if window else ""
            abort_now = (
                not self.aborted_once
                and request.staged == "reminder"
                and self.model.script_index == 0
            )
            overflow_now = (
                kind == "overflow"
                and window is not None
                and window.warning_done
                and not window.overflowed
            )
            warned = self.model.sees(messages, WARNING_TYPE)
            if kind == "queued" and warned and not self.queued_once:
                self.queued_once = True
                loop.queue.append(QUEUED_TEXT)  # the user types while the model works
            if abort_now:
                # The user presses Esc while the reply streams: the partial text is kept.
                self.aborted_once = True
                self.resume_pending = True
                self.counters.aborted_turns += 1
                partial = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Porting bil"}],
                    "api": "scripted",
                    "provider": "demo",
                    "model": "scripted-1",
                    "usage": _usage(0, 0),
                    "stopReason": "aborted",
                    "timestamp": self.clock(),
                }
                loop.record_reply(partial)
                self.runtime.abort()
                await loop.end_turn("aborted", partial)
                await loop.settle()
                return
            reply = self.model.respond(messages, overflow=overflow_now)
            if self.progress is not None and self.model.script_index != self.reported:
                self.reported = self.model.script_index
                self.progress(f"window {self.reported + 1}/{len(self.model.kinds)}")
            loop.record_reply(reply.message)
            calls, terminate = loop.run_calls(reply.message, self._tool)
            end = await loop.end_turn(turn_outcome(reply.message), reply.message)
            if end.continue_:
                loop.deliver_queued()  # queued work crosses into the new window, once
                continue
            if calls and not terminate:
                continue
            if loop.queue:
                loop.deliver_queued()
                continue
            settle = await loop.settle()
            if settle.retry:
                self.counters.overflow_recoveries += 1
            if settle.continue_:
                continue
            return


# --- the run and its report --------------------------------------------------------------------


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


DEMO_MAPS = {
    "human": "# Human map\nPrefers small commits; answer in plain English.",
    "project": "# Project map\nbilling/ holds the legacy modules; ledger/ is the new API.",
    "agent": "# My map\nCheckpoint before every wipe; read the checkpoint note first.",
    "model": "# Model map\nscripted-1 never streams; tool calls arrive whole.",
}
"""MAP.md bodies written into four homes before the run: every boot carries them."""


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
    model = ScriptedModel(kinds, clock)
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
        sum(all(body in str(b.get("content")) for body in DEMO_MAPS.values()) for b in boots),
        len(boots),
    )
    return report


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
                row.warnings += entry.get("customType") == WARNING_TYPE
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
                row.notes_written += name in ("notes_write", "notes_edit")
                row.history_calls += name.startswith("history_")
                row.modules += name == "read_module"
        row.cause = causes.get(span.window_id, "")
        if row.kind == "manual" and row.cause.startswith("wipe_memory"):
            row.cause = "/wipe-memory, then " + row.cause
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
