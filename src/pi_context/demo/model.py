"""The demo's scripted model and the world it works in: the task (porting an endless list of
legacy billing modules), the behaviour each window shows (``schedule``), the deterministic
clock, and ``ScriptedModel``, which answers each request from the request alone (the boot, the
reminder and warning messages, tool results) plus a pointer into its script.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pi_context.bindings.runtime.protocol import GUIDANCE_TYPE, MANUAL_WIPE_TYPE, WARNING_TYPE
from pi_context.bindings.session.context import text_blocks
from pi_context.bindings.session.usage import estimate_tokens
from pi_context.bindings.session.windows import BOOT_TYPE
from pi_context.integrations.loop import assistant_message, usage_block

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


DEMO_MAPS = {
    "human": "# Human map\nPrefers small commits; answer in plain English.",
    "project": "# Project map\nbilling/ holds the legacy modules; ledger/ is the new API.",
    "agent": "# My map\nCheckpoint before every wipe; read the checkpoint note first.",
    "model": "# Model map\nscripted-1 never streams; tool calls arrive whole.",
}
"""MAP.md bodies written into four homes before the run: every boot carries them."""


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

    def __init__(self, kinds: Sequence[str], clock: Clock, reset_tool: str = "wipe_memory") -> None:
        self.kinds = list(kinds)
        self.reset_tool = reset_tool  # the generation's name of the reset tool the runtime offers
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

    def assistant(
        self,
        content: list[dict[str, Any]],
        stop_reason: str,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> Message:
        """An assistant message of scripted-1, stamped with the demo's clock (no usage: none)."""
        return assistant_message(
            content,
            stop_reason,
            self.clock(),
            api="scripted",
            provider="demo",
            model="scripted-1",
            usage=usage_block(0, 0) if usage is None else usage,
            error=error,
        )

    def _message(
        self, text: str, calls: list[tuple[str, str, dict[str, Any]]], request: Sequence[Message]
    ) -> Message:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "toolCall", "id": cid, "name": name, "arguments": args}
            for cid, name, args in calls
        ]
        message = self.assistant(content, "toolUse" if calls else "stop", usage={})
        prompt = estimate_tokens(request)
        output = estimate_tokens([{**message, "usage": {}}])
        message["usage"] = usage_block(prompt, output)
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
            "notes_update",
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
            error = (
                f"prompt is too long: {estimate_tokens(request) + 9_000} tokens > "
                f"{CONTEXT_WINDOW} maximum"
            )
            return Reply(self.assistant([], "error", error=error), [])
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
        elif (
            self.sees(request, WARNING_TYPE) or self.sees(request, MANUAL_WIPE_TYPE)
        ) and not state.warning_done:
            state.warning_done = True
            text = "Final warning received: saving my checkpoint."
            if state.kind in ("wipe", "manual", "queued", "finish"):
                calls = [
                    self._save_checkpoint("closing out this window"),
                    self._call(self.reset_tool),
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
