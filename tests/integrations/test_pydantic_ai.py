"""A pydantic-ai agent (FunctionModel: offline, deterministic) driven through the runtime over
three windows; the session it leaves opens in the real Pi with one boot per window."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.exceptions import ModelHTTPError  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from pi_context import (  # noqa: E402
    ModelInfo,
    Policy,
    Runtime,
    RuntimeConfig,
    Session,
    Thresholds,
    all_tools,
    spec_ids,
)
from pi_context.bindings.runtime.tool_host import EARLIER_NAMES
from pi_context.bindings.session.windows import (  # noqa: E402
    BOOT_TYPE,
    CONTINUATION_TYPE,
    RESET_MARKER_TYPE,
)
from pi_context.integrations.pydantic_ai import (  # noqa: E402
    RunReport,
    RuntimeAgent,
    to_model_messages,
)

REPO = Path(__file__).resolve().parents[2]
TASK = "Port module 1, then module 2."
NOTE = "Goal: port module 1, then module 2.\nNext: module 2."
OVERFLOW = "prompt is too long: 250000 tokens > 200000 maximum"


def shape(messages: list[ModelMessage]) -> list[tuple[str, list[tuple[str, str]]]]:
    """What a model request carries, without pydantic-ai's own timestamps."""
    out = []
    for message in messages:
        parts = []
        for part in message.parts:
            label = getattr(part, "tool_name", None) or ""
            content = getattr(part, "content", None)
            if isinstance(part, ToolCallPart):
                content = json.dumps(part.args_as_dict(), sort_keys=True)
            parts.append((part.part_kind, f"{label}|{content}"))
        out.append((message.kind, parts))
    return out


class ScriptedModel:
    """Answers from the request alone; counts its turns per window (named by the boot)."""

    def __init__(self) -> None:
        self.steps: dict[str, int] = {}
        self.seen: list[list[ModelMessage]] = []
        self.tools: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        self.tools = info.function_tools
        # The boot: after a reset Pi's empty compaction summary comes first, as the extension
        # sends it, so take the first part of the first request that names a window.
        texts = [str(getattr(part, "content", "")) for part in messages[0].parts]
        boot = next((t for t in texts if "Current context window id:" in t), "")
        found = re.search(r"Current context window id: (\S+)", boot)
        window = found.group(1) if found else "?"
        step = self.steps[window] = self.steps.get(window, -1) + 1
        last = str(getattr(messages[-1].parts[-1], "content", ""))
        if "Previous context window id" not in boot:
            if step == 0:
                return ModelResponse(
                    parts=[
                        ToolCallPart(
                            "notes_write", {"path": "c.md", "content": NOTE}, tool_call_id="w1"
                        )
                    ]
                )
            if step == 1:  # a bad call first: the registry's error reaches the model
                return ModelResponse(parts=[ToolCallPart("notes_read", {}, tool_call_id="bad")])
            return ModelResponse(parts=[ToolCallPart("clear_memory", {}, tool_call_id="wipe")])
        if "Overflow please" in last:
            raise ModelHTTPError(400, "scripted", {"error": {"message": OVERFLOW}})
        if step == 0:
            return ModelResponse(
                parts=[
                    ToolCallPart("notes_read", {"path": "c.md"}, tool_call_id=f"r-{window}"),
                    ToolCallPart(
                        "history_search", {"query": "module 1"}, tool_call_id=f"s-{window}"
                    ),
                ]
            )
        return ModelResponse(parts=[TextPart(f"Resumed in {window}.")])


@pytest.fixture
def run(tmp_path: Path) -> dict[str, Any]:
    import asyncio

    home = tmp_path
    session = Session.create(home, home / "sessions")
    config = RuntimeConfig(
        notes_home=home / "notes",
        agent_dir=home,
        cwd=home,
        model=ModelInfo("scripted", "pydantic-ai", 200_000),
    )
    runtime = Runtime(session, config)
    runtime.session_start("startup")
    model = ScriptedModel()
    agent = RuntimeAgent(runtime, FunctionModel(model, model_name="scripted"))

    async def conversation() -> list[RunReport]:
        return [await agent.prompt(TASK), await agent.prompt("Overflow please.")]

    reports = asyncio.run(conversation())
    return {"runtime": runtime, "model": model, "reports": reports, "session": session}


def test_the_agent_gets_the_registry_tools(run: dict[str, Any]) -> None:
    """Every registry tool, the reset tool under the default generation's name only, and
    notes_update but not its earlier name notes_edit (answered, never offered)."""
    declared = {t.name: (t.description, t.parameters_json_schema) for t in run["model"].tools}
    offered = {
        n: t for n, t in all_tools().items() if n != "wipe_memory" and n not in EARLIER_NAMES
    }
    assert "notes_update" in offered and "notes_edit" not in offered
    assert declared == {n: (t.description, dict(t.parameters)) for n, t in offered.items()}


def test_every_request_is_the_runtime_window(run: dict[str, Any]) -> None:
    model: ScriptedModel = run["model"]
    requests = [r for report in run["reports"] for r in report.requests]
    assert len(model.seen) == len(requests) == 8  # 3 + 2 in window 2, then overflow, 2 in window 3
    for seen, window in zip(model.seen, requests, strict=True):
        assert shape(seen) == shape(to_model_messages(window))
    # The first request after each reset is Pi's empty checkpoint summary (as the extension
    # sends it), the boot and the continuation, nothing else.
    for index in (3, 6):
        [request] = model.seen[index]
        assert isinstance(request, ModelRequest)
        assert [m.get("customType") or m["role"] for m in requests[index]] == [
            "compactionSummary",
            BOOT_TYPE,
            CONTINUATION_TYPE,
        ]
        assert requests[index][0]["summary"] == ""
        assert TASK not in json.dumps(shape(model.seen[index]))
    # The note written in window 1 is what window 2 learns the task from.
    assert "Next: module 2." in json.dumps(shape(model.seen[4]))


def test_resets_turns_and_overflow_reach_the_reducer(run: dict[str, Any]) -> None:
    first, second = run["reports"]
    (w2, cause2), (w3, cause3) = first.resets + second.resets
    assert (cause2, cause3) == ("clear_memory", "overflow recovery")
    assert first.turns == 5 and first.agent_runs == 1 and first.overflows == 0
    assert second.overflows == 1 and second.agent_runs == 2 and second.turns == 3
    assert first.final_text == f"Resumed in {w2}." and second.final_text == f"Resumed in {w3}."
    runtime: Runtime = run["runtime"]
    assert runtime.window_id == w3
    assert [(r.window_id, r.cause) for r in runtime.resets] == [(w2, cause2), (w3, cause3)]


def test_the_session_records_every_reply_and_tool_result(run: dict[str, Any]) -> None:
    session: Session = run["session"]
    assert session.path is not None
    branch = Session.open(session.path, readonly=True).branch()
    messages = [e["message"] for e in branch if e["type"] == "message"]
    results = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
    assert results["bad"]["isError"] is True
    assert "path" in results["bad"]["content"][0]["text"]
    assert json.loads(results["wipe"]["content"][0]["text"])["status"] == "rollover_requested"
    errors = [m for m in messages if m["role"] == "assistant" and m["stopReason"] == "error"]
    assert [m["errorMessage"] for m in errors] == [
        f"status_code: 400, model_name: scripted, body: {{'error': {{'message': '{OVERFLOW}'}}}}"
    ]


def test_the_session_opens_in_the_real_pi_with_one_boot_per_window(
    run: dict[str, Any], run_pi: Any
) -> None:
    path: Path = run["session"].path
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": [None]}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == path.read_text(encoding="utf-8"), "Pi rewrites it byte for byte"
    view = json.loads(answer["views"][0])
    by_id = {e["id"]: e for e in map(json.loads, answer["rewritten"].splitlines()[1:])}
    branch = [by_id[i] for i in view["branchIds"]]
    markers = [e["data"]["windowId"] for e in branch if e.get("customType") == RESET_MARKER_TYPE]
    resets = [w for report in run["reports"] for w, _ in report.resets]
    assert markers == resets
    root = f"pcw:{answer['sessionId'][:8]}:root"
    boots = [e["details"]["windowId"] for e in branch if e.get("customType") == BOOT_TYPE]
    assert boots == [root, *resets], "exactly one boot per window, in order"
    # Pi's own projection starts at the last reset: only the last window's boot is in it.
    projected = view["projection"]["messages"]
    assert [m["details"]["windowId"] for m in projected if m.get("customType") == BOOT_TYPE] == [
        resets[-1]
    ]
    assert not [m for m in projected if m["role"] == "user" and m["content"] == TASK]
    assert [m for m in projected if m["role"] == "user"] == []  # window 3 began after both


@pytest.mark.parametrize("spec", spec_ids())
def test_the_example_script_runs(tmp_path: Path, spec: str) -> None:
    """The example, unchanged, on every committed spec ($PI_CONTEXT_SPEC selects it)."""
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "pydantic_ai_agent.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PI_CONTEXT_SPEC": spec},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(
        r"  reset -> pcw:[0-9a-f]{8}:[0-9a-f]{8} \((?:wipe|clear)_memory\)", lines[1]
    )
    assert re.fullmatch(r"  reset -> pcw:[0-9a-f]{8}:[0-9a-f]{8} \(overflow recovery\)", lines[4])
    assert lines[-1].startswith("session: ") and Path(lines[-1][9:]).is_file()


def _runtime(home: Path, **config: Any) -> Runtime:
    session = Session.create(home, home / "sessions")
    runtime = Runtime(
        session, RuntimeConfig(notes_home=home / "notes", agent_dir=home, cwd=home, **config)
    )
    runtime.session_start("startup")
    return runtime


def test_a_reset_after_a_final_reply_continues_in_a_new_agent_run(tmp_path: Path) -> None:
    import asyncio

    # A prompt that crosses the hard reserve; the fresh window (boot + continuation) does not.
    lines = Thresholds(reserve=6_000, reminder=6_000, warning=6_000)
    runtime = _runtime(
        tmp_path,
        model=ModelInfo("m", "p", 10_000),
        policy=lambda: Policy(lines, automatic=True),
    )
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart(f"reply {len(seen)}")])

    agent = RuntimeAgent(runtime, FunctionModel(model, model_name="m"))
    report = asyncio.run(agent.prompt("word " * 8_000))
    [(window, cause)] = report.resets
    assert cause == "hard reserve" and runtime.window_id == window
    assert (report.turns, report.agent_runs, report.final_text) == (2, 2, "reply 2")
    assert "word word" not in json.dumps(shape(seen[1]))  # the new run sees the new window only
    usage = runtime.usage()
    assert usage is not None and usage.remaining is not None and usage.remaining > 6_000


def test_an_unknown_tool_gets_the_registry_error(tmp_path: Path) -> None:
    import asyncio

    runtime = _runtime(tmp_path, model=ModelInfo("m", "p", 200_000))
    turns = iter(
        [
            ModelResponse(parts=[ToolCallPart("rm_rf", {"path": "/"}, tool_call_id="x")]),
            ModelResponse(parts=[TextPart("sorry")]),
        ]
    )
    agent = RuntimeAgent(runtime, FunctionModel(lambda m, i: next(turns), model_name="m"))
    report = asyncio.run(agent.prompt("clean up"))
    assert report.final_text == "sorry"
    [result] = [
        e["message"]
        for e in runtime.session.branch()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert result["isError"] is True
    assert result["content"][0]["text"] == runtime.call_tool("rm_rf", {"path": "/"}).text
    assert "unknown tool 'rm_rf'" in result["content"][0]["text"]
