"""Fixtures for the runtime tests: real session files, real notes and settings in temp dirs.

The real Pi (npm, cached in .cache/) comes from the session binding's fixtures, loaded from
``tests/session/conftest.py`` rather than duplicated.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig, Usage
from pi_context.bindings.session import Session

_SESSION_CONFTEST = Path(__file__).resolve().parents[1] / "session" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_session_conftest_for_runtime", _SESSION_CONFTEST)
assert _spec is not None and _spec.loader is not None
_session_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session_conftest)

# Re-exported fixtures: the npm install of the pinned Pi and its batch driver.
pi_session_manager = _session_conftest.pi_session_manager
run_pi = _session_conftest.run_pi


@dataclass
class HostUsage:
    """What the host reports as usage of the root window (Pi's ``getContextUsage``)."""

    tokens: int | None = None
    context_window: int = 200_000
    absent: bool = False

    def __call__(self) -> Usage | None:
        return None if self.absent else Usage(self.tokens, self.context_window)

    def left(self, remaining: int) -> HostUsage:
        """Set usage so that exactly ``remaining`` tokens are left."""
        self.tokens = self.context_window - remaining
        self.absent = False
        return self


@dataclass
class Env:
    root: Path
    agent_dir: Path
    cwd: Path
    notes: Path
    sessions: Path
    trusted: list[bool] = field(default_factory=lambda: [True])

    def write_global(self, value: Any) -> None:
        (self.agent_dir / "settings.json").write_text(json.dumps(value, indent=2))

    def write_project(self, value: Any) -> None:
        path = self.cwd / ".pi" / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2))

    def session(self) -> Session:
        return Session.create(self.cwd, self.sessions)

    def runtime(
        self,
        session: Session | None = None,
        *,
        usage: HostUsage | None = None,
        model: ModelInfo | None = None,
        **options: Any,
    ) -> Runtime:
        config = RuntimeConfig(
            notes_home=self.notes,
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            project_trusted=lambda: self.trusted[0],
            usage=usage,
            model=model,
            **options,
        )
        return Runtime(session if session is not None else self.session(), config)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """Temp agent dir, project, notes root and session dir; the real ~/.pi is never read."""
    agent = tmp_path / "agent"
    cwd = tmp_path / "project"
    for directory in (agent, cwd):
        directory.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_NOTES_HOME", str(tmp_path / "notes"))
    yield Env(tmp_path, agent, cwd, tmp_path / "notes", tmp_path / "sessions")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def user(session: Session, text: str) -> str:
    return session.append_message(
        {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now_ms()}
    )


def assistant(
    session: Session, text: str = "ok", *, tokens: int = 0, stop: str = "stop", **extra: Any
) -> dict[str, Any]:
    """Append an assistant reply reporting ``tokens`` of context usage; return the message."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": {
            "input": tokens,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens,
        },
        "stopReason": stop,
        "timestamp": now_ms(),
        **extra,
    }
    session.append_message(message)
    return message


def custom_types(entries: list[dict[str, Any]]) -> list[str]:
    """Each entry as its customType, or its type for other entries."""
    return [str(e.get("customType") or e.get("type")) for e in entries]


@pytest.fixture
def kit() -> Any:
    """The helper functions, for test modules (importlib mode has no sibling imports)."""

    class Kit:
        user = staticmethod(user)
        assistant = staticmethod(assistant)
        custom_types = staticmethod(custom_types)
        now_ms = staticmethod(now_ms)
        HostUsage = HostUsage

    return Kit


Factory = Callable[..., Runtime]
