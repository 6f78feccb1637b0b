"""What a collaborator that drives a runtime from outside the façade needs of it, as a
Protocol: such a module types against this and never imports ``runtime`` (so the façade can
delegate to it without an import circle)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pi_context.bindings.session import Session

from .config import ModelInfo
from .results import StartResult


class HandoffHost(Protocol):
    """The runtime as ``/handoff`` drives it: its session and model, the project root, and
    the session switch into the destination, and the user's notices."""

    @property
    def session(self) -> Session: ...
    @property
    def model(self) -> ModelInfo | None: ...
    @property
    def cwd(self) -> Path: ...
    def session_start(self, reason: str = ..., session: Session | None = ...) -> StartResult: ...
    def notify(self, level: str, text: str) -> None: ...
