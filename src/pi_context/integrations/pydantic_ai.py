"""A pydantic-ai agent driven through the pi-context runtime (extra: ``pi-context[pydantic-ai]``).

``RuntimeAgent`` wraps a pydantic-ai ``Agent`` so that

* its tools are pi-context's (every tool of the shared registry, with the registry's JSON Schemas,
  answered by ``Runtime.call_tool``: the same texts, byte budgets and errors as any host);
* the message history of every model request *is* the runtime's current window: a history
  capability replaces whatever the agent accumulated with ``Runtime.context()`` (the boot, the
  continuation after a reset, then this window's turns), so a reset really empties the model's
  context;
* every model reply and tool batch is written to the Pi session, each turn end reaches the
  reducer (``turn_end``), a provider overflow is reported as a failed turn (and recovered once,
  in a fresh window), and each run closes with ``before_settle`` and ``settled``: each of these
  is a step of the reference host loop (``integrations.loop.HostLoop``), not a copy of it.

A reset committed at a turn end is followed by the continuation in the new window: inside the
same agent run when the model was still calling tools, else in a new run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, CallToolsNode, RunContext, Tool
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import ModelAPIError, ModelContextWindowExceededError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

from pi_context.bindings.runtime.overflow import is_context_overflow
from pi_context.bindings.runtime.runtime import Runtime
from pi_context.bindings.session.context import text_blocks
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolResult
from pi_context.integrations.loop import (
    ContextRefused,
    HostLoop,
    TurnLimit,
    assistant_message,
    usage_block,
)
from pi_context.support.clock import now_ms

Message = dict[str, Any]
Clock = Callable[[], int]

API = "pydantic-ai"


__all__ = [
    "Call",
    "ContextRefused",
    "RunReport",
    "RuntimeAgent",
    "TurnLimit",
    "to_model_messages",
    "to_pi_assistant",
]


# --- Pi messages <-> pydantic-ai messages ----------------------------------------------------


def _request_part(message: Mapping[str, Any]) -> ModelRequestPart | None:
    role = message.get("role")
    if role == "toolResult":
        return ToolReturnPart(
            tool_name=str(message.get("toolName", "")),
            content=text_blocks(message.get("content")),
            tool_call_id=str(message.get("toolCallId", "")),
        )
    if role == "system":
        sections = message.get("sections")
        text = text_blocks(message.get("content"))
        if not text and isinstance(sections, Mapping):
            text = "\n\n".join(str(v) for v in sections.values() if isinstance(v, str))
        return SystemPromptPart(text) if text else None
    if role == "bashExecution":
        return UserPromptPart(f"$ {message.get('command', '')}\n{message.get('output', '')}")
    if role in ("compactionSummary", "branchSummary"):
        return UserPromptPart(str(message.get("summary", "")))
    # user, and custom messages (boot, continuation, warnings): context the model reads.
    return UserPromptPart(text_blocks(message.get("content")))


def _response(message: Mapping[str, Any]) -> ModelResponse:
    parts: list[TextPart | ThinkingPart | ToolCallPart] = []
    for block in message.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            parts.append(TextPart(str(block.get("text", ""))))
        elif block.get("type") == "thinking":
            parts.append(ThinkingPart(str(block.get("thinking", ""))))
        elif block.get("type") == "toolCall":
            arguments = block.get("arguments")
            parts.append(
                ToolCallPart(
                    str(block.get("name", "")),
                    dict(arguments) if isinstance(arguments, Mapping) else {},
                    tool_call_id=str(block.get("id", "")),
                )
            )
    return ModelResponse(parts=parts, model_name=str(message.get("model", "")) or None)


def to_model_messages(messages: Sequence[Mapping[str, Any]]) -> list[ModelMessage]:
    """Pi provider messages (``Runtime.context().messages``) as pydantic-ai messages.

    Consecutive non-assistant messages share one ``ModelRequest``.
    """
    out: list[ModelMessage] = []
    pending: list[ModelRequestPart] = []
    for message in messages:
        if message.get("role") == "assistant":
            if pending:
                out.append(ModelRequest(parts=pending))
                pending = []
            out.append(_response(message))
            continue
        part = _request_part(message)
        if part is not None:
            pending.append(part)
    if pending:
        out.append(ModelRequest(parts=pending))
    return out


def to_pi_assistant(response: ModelResponse, clock: Clock = now_ms) -> Message:
    """A pydantic-ai reply as the Pi assistant message the session records."""
    content: list[dict[str, Any]] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            content.append({"type": "thinking", "thinking": part.content})
        elif isinstance(part, ToolCallPart):
            content.append(
                {
                    "type": "toolCall",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": part.args_as_dict(),
                }
            )
    calls = any(block["type"] == "toolCall" for block in content)
    usage = response.usage
    return assistant_message(
        content,
        "toolUse" if calls else "stop",
        clock(),
        api=API,
        provider=response.provider_name or API,
        model=response.model_name or "unknown",
        usage=usage_block(usage.input_tokens, usage.output_tokens),
    )


def _error_assistant(error: ModelAPIError, model: str, clock: Clock) -> Message:
    text = str(error)
    if isinstance(error, ModelContextWindowExceededError) and "context window" not in text:
        text = f"context window exceeded: {text}"
    return assistant_message(
        [],
        "error",
        clock(),
        api=API,
        provider=API,
        model=model,
        usage=usage_block(0, 0),
        error=text,
    )


# --- the driver -------------------------------------------------------------------------------


@dataclass
class Call:
    """One tool call of the current batch, answered by the runtime."""

    name: str
    text: str
    is_error: bool
    terminate: bool


@dataclass
class RunReport:
    """What ``RuntimeAgent.prompt`` did."""

    turns: int = 0
    agent_runs: int = 0
    overflows: int = 0
    resets: list[tuple[str, str]] = field(default_factory=list)
    """(new window id, cause) per committed reset, in order."""
    requests: list[list[Message]] = field(default_factory=list)
    """The provider messages of every model request (the runtime's window each time)."""
    final_text: str = ""


class RuntimeAgent:
    """A pydantic-ai ``Agent`` whose tools, history and turn lifecycle go through ``runtime``."""

    def __init__(
        self,
        runtime: Runtime,
        model: Model | str,
        *,
        instructions: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.runtime = runtime
        self.clock: Clock = clock or now_ms
        self.loop = HostLoop(runtime, clock=self.clock)
        self.model_name = model if isinstance(model, str) else model.model_name
        self._batch: dict[str, Call] = {}
        self._report = RunReport()
        self.agent: Agent[None, str] = Agent(
            model,
            instructions=instructions,
            tools=self._tools(),
            capabilities=[ProcessHistory(self._window)],
        )

    # -- tools: the registry's declarations, answered by the runtime --

    def _tools(self) -> list[Tool[None]]:
        tools: list[Tool[None]] = []
        for tool in self.runtime.served_tools().values():
            tools.append(
                Tool.from_schema(
                    self._caller(tool.name),
                    name=tool.name,
                    description=tool.description,
                    json_schema=dict(tool.parameters),
                    takes_ctx=True,
                    sequential=tool.sequential,
                )
            )
        return tools

    def _caller(self, name: str) -> Callable[..., Any]:
        async def call(ctx: RunContext[None], **arguments: Any) -> str:
            result = self.runtime.call_tool(name, arguments)
            call_id = ctx.tool_call_id or f"{name}-{len(self._batch)}"
            self._batch[call_id] = Call(name, result.text, result.is_error, result.terminate)
            return result.text

        call.__name__ = name
        return call

    # -- history: the runtime's window before every model request --

    async def _window(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        request = self.loop.request()
        self._report.requests.append(request.messages)
        return to_model_messages(request.messages)

    # -- the loop --

    async def prompt(self, text: str, *, max_turns: int = 100) -> RunReport:
        """Send ``text`` as a user message and run until the runtime settles."""
        self._report = report = RunReport()
        self.loop.resets = report.resets
        self.runtime.session.append_message(self.loop.message("user", content=text))
        while True:
            again = await self._agent_run(max_turns)
            if again:
                continue  # a reset committed after a final reply: its continuation waits
            if (await self.loop.settle()).continue_:
                continue  # close-out fallback or the one overflow recovery: a fresh window
            return report

    async def _agent_run(self, max_turns: int) -> bool:
        """One pydantic-ai run; True when a new run must continue in a fresh window."""
        rt, report = self.runtime, self._report
        report.agent_runs += 1
        history = to_model_messages(rt.messages()) or [ModelRequest(parts=[UserPromptPart("")])]
        async with self.agent.iter(message_history=history) as run:
            node = run.next_node
            while not Agent.is_end_node(node):
                if not isinstance(node, CallToolsNode):
                    try:
                        node = await run.next(node)
                    except ModelAPIError as error:
                        return await self._failed_turn(error)
                    continue
                if report.turns >= max_turns:
                    raise TurnLimit(f"the run did not settle within {max_turns} model turns")
                report.turns += 1
                assistant = to_pi_assistant(node.model_response, self.clock)
                self.loop.record_reply(assistant)
                self._batch = {}
                node = await run.next(node)  # runs the tool calls through the runtime
                for block in assistant["content"]:
                    if block["type"] != "toolCall":
                        continue
                    call = self._batch.get(block["id"]) or self._not_run(block)
                    self.loop.answer(block, ToolResult(text=call.text, is_error=call.is_error))
                end = await self.loop.end_turn("completed", assistant)
                if not any(block["type"] == "toolCall" for block in assistant["content"]):
                    report.final_text = "\n".join(
                        b["text"] for b in assistant["content"] if b["type"] == "text"
                    )
                if end.continue_:
                    if Agent.is_end_node(node):
                        return True
                    continue  # the next request's history is the new window
                if any(call.terminate for call in self._batch.values()):
                    return False  # wipe_memory without a reset: no follow-up request
        return False

    def _not_run(self, block: Mapping[str, Any]) -> Call:
        """A call the framework did not run: an unknown tool gets the registry's own error."""
        name = str(block["name"])
        if name not in all_tools():
            result = self.runtime.call_tool(name, block.get("arguments") or {})
            return Call(name, result.text, True, False)
        return Call(name, '{"error":"the agent framework did not run this call"}', True, False)

    async def _failed_turn(self, error: ModelAPIError) -> bool:
        """A provider error ends the turn as failed; an overflow is recovered at settle."""
        assistant = _error_assistant(error, self.model_name, self.clock)
        self.loop.record_reply(assistant)
        self._report.turns += 1
        end = await self.loop.end_turn("error", assistant)
        if is_context_overflow(assistant):
            self._report.overflows += 1
        return bool(end.continue_)
