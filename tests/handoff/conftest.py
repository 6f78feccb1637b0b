"""Fixtures for the handoff tests: real sessions (in memory or as Pi-compatible files)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Session, seeded_uuids

_SESSION_CONFTEST = Path(__file__).resolve().parents[1] / "session" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_session_conftest_for_handoff", _SESSION_CONFTEST)
assert _spec is not None and _spec.loader is not None
_session_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session_conftest)

pi_session_manager = _session_conftest.pi_session_manager


def clock() -> Any:
    ticks = itertools.count(1_780_000_000_000, 1_000)
    return lambda: next(ticks)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": f"c{i}", **c} for i, c in enumerate(calls)]
    return {
        "role": "assistant",
        "content": content,
        "provider": "scripted",
        "model": "scripted-1",
        "stopReason": "stop",
        "timestamp": 2,
    }


def new_session(directory: Path | None = None, seed: int = 7) -> Session:
    if directory is None:
        return Session.in_memory(Path("/work/project"), now=clock(), uuids=seeded_uuids(seed))
    return Session.create(Path("/work/project"), directory, now=clock(), uuids=seeded_uuids(seed))


@pytest.fixture
def conversation() -> Session:
    """A small branch: user goal, assistant with tool calls, tool result, compaction, bash."""
    s = new_session()
    s.append_message(user("Port the parser to Rust. Never touch the public API."))
    s.append_message(
        assistant(
            "Reading the parser.",
            {"name": "read", "arguments": {"path": "src/parser.py"}},
        )
    )
    s.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c0",
            "toolName": "read",
            "content": [{"type": "text", "text": "def parse(): ..."}],
            "isError": False,
            "timestamp": 3,
        }
    )
    s.append_compaction("Earlier: the user wants a Rust port.", None, 1000)
    s.append_message(
        {
            "role": "bashExecution",
            "command": "cargo build",
            "output": "error[E0425]: cannot find value",
            "exitCode": 101,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        }
    )
    s.append_custom_message("some-extension", "a textual extension message", False)
    return s
