"""A pydantic-ai agent driven through the pi-context runtime, over three context windows.

    pip install 'pi-context[pydantic-ai]'
    python examples/pydantic_ai_agent.py [DIR]

The model is pydantic-ai's ``FunctionModel`` (offline, deterministic): it reads only what the
runtime sends it. In the first window it writes a checkpoint note and calls the reset tool it is
offered (``clear_memory``; ``wipe_memory`` in generations before a508f68); the second window
starts from the boot and the continuation alone (after Pi's empty checkpoint summary), reads the
note back and answers.
The next prompt hits a provider context overflow, which the runtime recovers once, in a third
window. Everything is written to a real Pi session file (open it with Pi) and real notes.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pi_context import ModelInfo, Runtime, RuntimeConfig, Session
from pi_context.integrations.pydantic_ai import RuntimeAgent

steps: dict[str, int] = {}  # model turns per window: the only state the "model" keeps


def boot_of(messages: list[ModelMessage]) -> str:
    """The boot: the first part of the first request that names a window (after a reset Pi's
    empty compaction summary comes before it, as the extension sends it)."""
    for part in messages[0].parts:
        text = str(getattr(part, "content", ""))
        if "Current context window id:" in text:
            return text
    return ""


def window_of(messages: list[ModelMessage]) -> str:
    """The window id the boot names."""
    found = re.search(r"Current context window id: (\S+)", boot_of(messages))
    return found.group(1) if found else "?"


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    window = window_of(messages)
    step = steps[window] = steps.get(window, -1) + 1
    fresh = "Previous context window id" in boot_of(messages)
    last = str(getattr(messages[-1].parts[-1], "content", ""))
    if not fresh:  # the first window
        if step == 0:
            note = "Goal: port module 1, then module 2.\nNext: module 2."
            return ModelResponse(
                parts=[ToolCallPart("notes_write", {"path": "checkpoint.md", "content": note})]
            )
        offered = [t.name for t in info.function_tools]
        reset = next(name for name in ("clear_memory", "wipe_memory") if name in offered)
        return ModelResponse(parts=[ToolCallPart(reset, {})])
    if "Overflow please" in last:
        raise ModelHTTPError(
            400,
            "scripted",
            {"error": {"message": "prompt is too long: 250000 tokens > 200000 maximum"}},
        )
    if step == 0:
        return ModelResponse(
            parts=[
                ToolCallPart("notes_read", {"path": "checkpoint.md"}),
                ToolCallPart("history_search", {"query": "module 1"}),
            ]
        )
    return ModelResponse(parts=[TextPart(f"Window {window}: resumed from my checkpoint.")])


async def main(home: Path) -> None:
    session = Session.create(home, home / "sessions")
    config = RuntimeConfig(
        notes_home=home / "notes",
        agent_dir=home,
        cwd=home,
        model=ModelInfo("scripted", "pydantic-ai", 200_000),
    )
    runtime = Runtime(session, config)
    runtime.session_start("startup")
    agent = RuntimeAgent(runtime, FunctionModel(scripted, model_name="scripted"))
    for prompt in ("Port module 1, then module 2.", "Overflow please."):
        report = await agent.prompt(prompt)
        print(f"> {prompt}")
        for window_id, cause in report.resets:
            print(f"  reset -> {window_id} ({cause})")
        print(f"  {report.turns} turns, {len(report.requests)} requests: {report.final_text}")
    print(f"session: {session.path}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())))
