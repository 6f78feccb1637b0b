"""The demo's agent loop: the reference host loop's steps (``HostLoop``) driven by the
scripted model, with the script's interventions (an aborted turn, a provider overflow, a
message the user queues) between them, and the counters the report prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pi_context.bindings.runtime.protocol import MANUAL_WIPE_TYPE, WARNING_TYPE
from pi_context.bindings.runtime.runtime import Runtime, turn_outcome
from pi_context.bindings.session import Session
from pi_context.bindings.tools import ToolResult
from pi_context.integrations.loop import ContextRefused, HostLoop

from .model import QUEUED_TEXT, Clock, DemoError, ScriptedModel, module_listing


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
            warned = self.model.sees(messages, WARNING_TYPE) or self.model.sees(
                messages, MANUAL_WIPE_TYPE
            )
            if kind == "queued" and warned and not self.queued_once:
                self.queued_once = True
                loop.queue.append(QUEUED_TEXT)  # the user types while the model works
            if abort_now:
                # The user presses Esc while the reply streams: the partial text is kept.
                self.aborted_once = True
                self.resume_pending = True
                self.counters.aborted_turns += 1
                partial = self.model.assistant([{"type": "text", "text": "Porting bil"}], "aborted")
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
