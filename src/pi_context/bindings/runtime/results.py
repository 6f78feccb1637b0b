"""What the runtime's entry points return: notices for the user, boot and request results,
turn-end/settle results, command results and the record of each committed reset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .control import Step

Draft = dict[str, Any]
Message = dict[str, Any]
Level = Literal["info", "warning", "error"]
LEVELS: tuple[str, ...] = ("info", "warning", "error")


@dataclass(frozen=True)
class Notice:
    """A message for the user (not the model), at info, warning or error level."""

    level: Level
    text: str


@dataclass(frozen=True)
class StartResult:
    """What ``session_start``/``tree`` did about the boot of the active window."""

    action: Literal["root-boot", "repaired", "present", "refused", "disabled"]
    entry_ids: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class ContextResult:
    """The provider request for the active window, from ``Runtime.context``."""

    messages: list[Message]
    """What to send to the provider."""
    abort: bool = False
    """The request must not be sent (the active window has no boot, or it was cancelled)."""
    staged: str | None = None
    """``reminder`` or ``warning`` when this request staged one."""
    cancelled: bool = False
    """The spec cancelled this request (its host action cancels: 0.34's empty follow-up after
    a committed stop). The runtime has aborted the run; the host ends it without calling the
    provider (``messages`` hold only the system message)."""
    step: Step | None = None
    """The reducer step the spec took for this request (None when it decides nothing here)."""


@dataclass(frozen=True)
class BoundaryResult:
    """A turn end or settle: drafts for the host to append, and what to do next."""

    drafts: list[Draft]
    continue_: bool
    """Start another turn (a reset was committed: its continuation is the prompt)."""
    step: Step
    cause: str = ""
    """Why a reset committed (the spec's cause of the row that fired, e.g. ``wipe_memory``,
    ``hard reserve``, ``close-out at stop``, ``manual close-out``, ``overflow recovery``),
    else empty."""
    window_id: str | None = None
    """The new window when ``drafts`` carry a reset boundary."""
    retry: bool = False
    """Overflow recovery: re-run the failed request in the new window."""
    failure: str | None = None
    stale: bool = False
    """The boundary was built across a lifecycle change (or an abort) and was dropped."""
    stop: bool = False
    """A boundary was committed and the run ends there (its host action does not continue)."""

    @property
    def effect(self) -> str:
        return self.step.effect


@dataclass(frozen=True)
class ResetRecord:
    """One committed reset: the new window, the one it replaced and why."""

    window_id: str
    previous_window_id: str
    cause: str
    stopped: bool = False
    """The run ended after the boundary (its host action does not continue)."""


@dataclass(frozen=True)
class CommandResult:
    ok: bool
    message: str
    start_turn: bool = False
    """The host should start an ordinary model turn now (the close-out turn)."""
    entry_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompactDecision:
    cancel: bool
    message: str | None = None
