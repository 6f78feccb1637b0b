"""The user's commands: ``/wipe-memory``, ``/pi-context on|off|status`` and ``/compact``.

``/wipe-memory`` is a manual close-out: it captures the current window *before* waiting for the
agent to be idle and refuses if the wait crossed into another window (the reset it asked for
already happened). Then the reducer arms a manual close-out; its effect is performed by
recording the hidden close-out warning and asking the host to start an ordinary model turn,
so the model can checkpoint its notes before the reset commits (at ``wipe_memory``'s turn end,
or at the settle fallback if it simply stops; a spec whose effect for it is ``commit-stop``,
like 0.27, then ends the run there). Under a spec without close-out phases (0.25) the command
writes the boundary at once instead, as that version did.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pi_context.bindings.session.boundary import commit_boundary
from pi_context.bindings.session.windows import current_reset

from .control import is_duplicate
from .protocol import WARNING_TEXT, WARNING_TYPE, cleared_notice

if TYPE_CHECKING:
    from .runtime import Runtime

WaitForIdle = Callable[[], "Awaitable[None] | None"]

OFF_TEXT = (
    "pi-context is off: no new automatic resets, boots or reminders. An existing reset "
    "marker still bounds what the model sees."
)
ON_TEXT = "pi-context is on."
COMPACT_TEXT = (
    "pi-context: /compact is cancelled here, because a summary would carry erased history back "
    "into the window. Use /wipe-memory to start a fresh window instead."
)


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


async def wipe_memory_command(
    runtime: Runtime, wait_for_idle: WaitForIdle | None = None
) -> CommandResult:
    if not runtime.enabled:
        return _refuse(runtime, "pi-context is off; turn it on with /pi-context on first.")
    window = runtime.window_id
    generation = runtime.generation
    if wait_for_idle is not None:
        waited = wait_for_idle()
        if inspect.isawaitable(waited):
            await waited
    if runtime.window_id != window or runtime.generation != generation:
        return _refuse(
            runtime,
            f"pi-context: /wipe-memory was for window {window}, which ended while waiting; "
            "nothing more was done.",
        )
    if not runtime.enabled:
        return _refuse(runtime, "pi-context was turned off while waiting; nothing was done.")
    if not runtime.control.has_close_out:
        return _immediate_reset(runtime, window)
    step = runtime.control.close_out(window, "manual")
    if is_duplicate(step):
        message = f"pi-context: a close-out of window {window} is already pending."
        runtime.notify("info", message)
        return CommandResult(True, message)
    # The same hidden warning as the budget's, marked manual: each /wipe-memory is its own
    # prompt for the close-out turn, while the budget still warns at most once per window.
    entry_id = runtime.session.append_custom_message(
        WARNING_TYPE, WARNING_TEXT, False, {"source": "manual"}
    )
    message = f"pi-context: closing out window {window}; the model checkpoints its notes first."
    runtime.notify("info", message)
    return CommandResult(True, message, start_turn=True, entry_ids=(entry_id,))


def _immediate_reset(runtime: Runtime, previous: str) -> CommandResult:
    """0.25: clear the machine and write the boundary now, with no model turn."""
    from .runtime import ResetRecord

    runtime.control.clear()
    drafts = runtime.reset_drafts()
    ids = commit_boundary(runtime.session, drafts)
    window = drafts[1]["data"]["windowId"]
    runtime.resets.append(ResetRecord(window, previous, "/wipe-memory at once"))
    message = cleared_notice(window)
    runtime.notify("info", message)
    return CommandResult(True, message, entry_ids=tuple(ids))


def _refuse(runtime: Runtime, message: str) -> CommandResult:
    runtime.notify("warning", message)
    return CommandResult(False, message)


def pi_context_command(runtime: Runtime, argument: str = "") -> CommandResult:
    choice = argument.strip().lower()
    if choice == "on":
        runtime.enabled = True
        # A root window that started while off gets its boot now (idempotent otherwise).
        started = runtime.ensure_boot()
        runtime.notify("info", ON_TEXT)
        return CommandResult(True, ON_TEXT, entry_ids=started.entry_ids)
    if choice == "off":
        runtime.enabled = False
        runtime.control.clear()
        runtime.budget.discard()
        runtime.notify("info", OFF_TEXT)
        return CommandResult(True, OFF_TEXT)
    if choice in ("", "status"):
        lines = runtime.budget.thresholds
        message = (
            f"pi-context is {'on' if runtime.enabled else 'off'} · window {runtime.window_id} · "
            f"{runtime.control.spec} · reminder at {lines.reminder}, warning at {lines.warning}, "
            f"hard reserve at {lines.hard_reserve} tokens left"
        )
        runtime.notify("info", message)
        return CommandResult(True, message)
    message = f"pi-context: unknown argument {argument.strip()!r}; use on, off or status"
    runtime.notify("error", message)
    return CommandResult(False, message)


def compact_command(runtime: Runtime) -> CompactDecision:
    """Native compaction is cancelled while enabled, and on any marked branch even when off."""
    if runtime.enabled or current_reset(runtime.branch()) is not None:
        runtime.notify("warning", COMPACT_TEXT)
        return CompactDecision(True, COMPACT_TEXT)
    return CompactDecision(False)
