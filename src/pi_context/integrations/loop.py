"""The reference host loop: what an agent loop does around a ``Runtime``, one step at a time.

``docs/embedding.md`` spells the loop out in full; ``HostLoop.run`` is that same loop, and the
other hosts in this package are built from its steps rather than restating them: the scripted
demo (``pi_context.demo``) and the pydantic-ai integration (``integrations.pydantic_ai``).

One model turn:

1. ``request()``: ``turn_start`` (announces what became durable), then ``context()``: the
   provider messages of the active window (refused when the window has no boot; cancelled,
   and the run ended, when the spec says it is the empty follow-up after a committed stop);
2. the model replies; ``record_reply`` appends the assistant message to the session;
3. ``run_calls`` answers each tool call through ``Runtime.call_tool`` and appends the results;
4. ``end_turn``: ``turn_end`` with the turn's outcome, then the returned drafts are appended
   (a reset boundary is validated, written and verified there).

The run goes on while a reset committed (its continuation is the next prompt), while tool
results wait for the model, or while queued user messages wait; then ``settle`` runs the
close-out fallback or the one overflow recovery (``before_settle``) and, when nothing
continues, ``settled``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context.bindings.runtime.results import BoundaryResult, ContextResult
from pi_context.bindings.runtime.runtime import Runtime, turn_outcome
from pi_context.bindings.tool_registry import SchemaStyle, tool_schemas
from pi_context.bindings.tools import ToolResult
from pi_context.support.clock import now_ms

Message = dict[str, Any]
Clock = Callable[[], int]
Model = Callable[[list[Message], list[dict[str, Any]]], "Message | Awaitable[Message]"]
"""A provider call: the window's messages and the tool declarations -> a Pi assistant message."""
ToolRunner = Callable[[str, Mapping[str, Any]], ToolResult]


class ContextRefused(RuntimeError):
    """The runtime refused to build a request (the active window has no boot)."""


class TurnLimit(RuntimeError):
    """The run did not settle within ``max_turns`` model turns."""


def tool_calls(reply: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The ``toolCall`` blocks of a Pi assistant message, in order."""
    content = reply.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"]


def usage_block(prompt: int, output: int) -> dict[str, Any]:
    """A Pi assistant message's ``usage``: ``prompt`` tokens in, ``output`` out, nothing cached,
    no cost."""
    return {
        "input": prompt,
        "output": output,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": prompt + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def assistant_message(
    content: list[dict[str, Any]],
    stop_reason: str,
    timestamp: int,
    *,
    api: str,
    provider: str,
    model: str,
    usage: dict[str, Any],
    error: str | None = None,
) -> Message:
    """A Pi assistant message as a provider's reply becomes one (``errorMessage`` when the
    call failed with ``error``)."""
    message: Message = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage,
        "stopReason": stop_reason,
    }
    if error is not None:
        message["errorMessage"] = error
    message["timestamp"] = timestamp
    return message


@dataclass
class HostLoop:
    """The steps of an agent loop around ``runtime``, and ``run`` putting them together."""

    runtime: Runtime
    clock: Clock = now_ms
    queue: list[str] = field(default_factory=list)
    """User messages typed while the model works (steering/follow-up): delivered once."""
    resets: list[tuple[str, str]] = field(default_factory=list)
    """(new window id, cause) of every reset committed through this loop, in order."""
    delivered: int = 0
    """Queued messages delivered so far."""

    # --- messages ------------------------------------------------------------------------------

    def message(self, role: str, **fields: Any) -> Message:
        """A Pi message of ``role``, stamped with the loop's clock."""
        return {"role": role, **fields, "timestamp": self.clock()}

    def user(self, text: str) -> str:
        """Append a user message; its entry id."""
        content = [{"type": "text", "text": text}]
        return self.runtime.session.append_message(self.message("user", content=content))

    def queued(self) -> bool:
        return bool(self.queue)

    def deliver_queued(self) -> None:
        """Append every queued user message (each is delivered exactly once)."""
        while self.queue:
            self.user(self.queue.pop(0))
            self.delivered += 1

    # --- one turn ------------------------------------------------------------------------------

    def request(self) -> ContextResult:
        """Start a turn: announce what became durable, then the active window's request (a
        request the spec cancels comes back ``cancelled``: the runtime aborted the run)."""
        rt = self.runtime
        rt.turn_start()
        request = rt.context(queued=self.queued)
        if request.abort and not request.cancelled:
            notices = "; ".join(n.text for n in rt.drain_notices()) or "no boot in this window"
            raise ContextRefused(notices)
        return request

    def record_reply(self, reply: Message) -> None:
        self.runtime.session.append_message(reply)

    def answer(self, call: Mapping[str, Any], result: ToolResult) -> None:
        """Append the result of one tool call."""
        self.runtime.session.append_message(
            self.message(
                "toolResult",
                toolCallId=call.get("id"),
                toolName=call.get("name"),
                content=[{"type": "text", "text": result.text}],
                isError=result.is_error,
            )
        )

    def run_calls(
        self, reply: Mapping[str, Any], run: ToolRunner | None = None
    ) -> tuple[list[Mapping[str, Any]], bool]:
        """Answer every tool call of ``reply`` (through ``Runtime.call_tool`` unless ``run``
        is given); the calls, and whether one ends the tool loop (``wipe_memory``)."""
        runner = run or self.runtime.call_tool
        calls = tool_calls(reply)
        terminate = False
        for call in calls:
            arguments = call.get("arguments")
            result = runner(str(call.get("name")), arguments if arguments is not None else {})
            terminate = terminate or result.terminate
            self.answer(call, result)
        return calls, terminate

    def _recorded(self, result: BoundaryResult) -> BoundaryResult:
        self.runtime.append(result.drafts)
        if result.window_id is not None:
            self.resets.append((result.window_id, result.cause))
        return result

    async def end_turn(
        self, outcome: str, reply: Mapping[str, Any] | None, incoming: Sequence[Message] = ()
    ) -> BoundaryResult:
        """``turn_end`` with the turn's outcome, its drafts appended."""
        end = await self.runtime.turn_end(outcome, reply, incoming=incoming, queued=self.queued)
        return self._recorded(end)

    async def settle(self) -> BoundaryResult:
        """The run stops: the close-out fallback or the one overflow recovery. When the
        result does not continue (in a fresh window), the run has settled."""
        result = self._recorded(await self.runtime.before_settle(queued=self.queued))
        if not result.continue_:
            self.runtime.settled()
        return result

    # --- the loop ------------------------------------------------------------------------------

    async def run(self, model: Model, max_turns: int = 100, style: SchemaStyle = "openai") -> int:
        """Run model turns until the runtime settles; the number of turns taken."""
        tools = tool_schemas(style, self.runtime.served_tools())
        turns = 0
        while True:
            turns += 1
            if turns > max_turns:
                raise TurnLimit(f"the run did not settle within {max_turns} model turns")
            request = self.request()
            if request.cancelled:
                # the empty follow-up after a committed stop: the run ends without it
                await self.settle()
                return turns - 1
            reply = model(request.messages, tools)
            if inspect.isawaitable(reply):
                reply = await reply
            self.record_reply(reply)
            calls, stop = self.run_calls(reply)
            end = await self.end_turn(turn_outcome(reply), reply)
            if end.continue_:
                self.deliver_queued()  # queued work crosses into the new window, once
                continue  # its continuation is the prompt
            if calls and not stop:
                continue  # the model reads its tool results
            if self.queue:
                self.deliver_queued()
                continue
            if (await self.settle()).continue_:
                continue
            return turns
