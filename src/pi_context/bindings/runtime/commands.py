"""The user's commands: the reset command (``/wipe-memory``, ``/clear-memory`` from a508f68 on,
as the running spec's close-out trigger names it), ``/pi-context on|off|status`` and ``/compact``.

``/wipe-memory`` captures the current window *before* waiting for the agent to be idle and
refuses if the wait crossed into another window (the reset it asked for already happened), or
when the session has not been saved yet (nothing to wipe).
Then it hands the reducer the spec's event for it: a manual ``close_out`` where the spec has
close-out phases, else 0.25's ``manual_reset``. The step's host action decides the rest: an
acknowledged request records the hidden close-out warning and asks the host to start an
ordinary model turn, so the model can checkpoint its notes before the reset commits (at
``wipe_memory``'s turn end, or at the settle fallback if it simply stops); a duplicate is
reported as pending; a committing effect (0.25) writes the boundary at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pi_context.bindings.session.dialect import MANUAL_WIPE, custom_type
from pi_context.bindings.session.windows import current_reset

from .budget import Budget
from .builder import Boundaries
from .control import Control
from .effects import Effects, Notices
from .lifecycle import Lifecycle
from .protocol import WARNING_TEXT, cleared_notice
from .results import CommandResult, CompactDecision
from .window import WindowView

WaitForIdle = Callable[[], "Awaitable[None] | None"]

OFF_TEXT = (
    "pi-context is off: no new automatic resets, boots or reminders. An existing reset "
    "marker still bounds what the model sees."
)
ON_TEXT = "pi-context is on."
COMPACT_TEXT = (
    "pi-context: /compact is cancelled here, because a summary would carry erased history back "
    "into the window. Use {command} to start a fresh window instead."
)


@dataclass(slots=True, eq=False, repr=False)
class Commands:
    """The slash commands of one runtime."""

    lifecycle: Lifecycle
    control: Control
    window: WindowView
    budget: Budget
    boundaries: Boundaries
    effects: Effects
    notices: Notices

    def _refuse(self, message: str) -> CommandResult:
        self.notices.notify("warning", message)
        return CommandResult(False, message)

    async def wipe_memory(
        self, wait_for_idle: WaitForIdle | None = None, prompt: str | None = None
    ) -> CommandResult:
        command = self.control.reset_command
        refusal = self.lifecycle.refuse_while_off(command)
        if refusal is not None:
            return self._refuse(refusal)
        if prompt is not None and not self.control.takes_prompt:
            return self._refuse(
                f"pi-context: {self.control.spec}'s {command} takes no follow-up prompt "
                "(from reset-control@6bcd8b5 on it does); nothing was done."
            )
        window = self.window.window_id
        generation = self.lifecycle.generation
        if wait_for_idle is not None:
            waited = wait_for_idle()
            if inspect.isawaitable(waited):
                await waited
        if self.window.window_id != window or self.lifecycle.generation != generation:
            return self._refuse(
                f"pi-context: {command} was for window {window}, which ended while waiting; "
                "nothing more was done."
            )
        if self.lifecycle.refuse_while_off(command) is not None:
            return self._refuse("pi-context was turned off while waiting; nothing was done.")
        if not self.lifecycle.session.persisted:
            # Pi saves a session with its first reply; before that there is nothing to wipe,
            # and a boundary written now could not be verified on disk.
            return self._refuse(
                "pi-context: this session has not been saved yet (no reply so far), so there is "
                "no window to wipe; nothing was done."
            )
        token = self.lifecycle.token()
        if self.control.has_close_out:
            step = self.control.close_out(window, "manual", prompt)
        elif self.control.accepts("manual_reset"):
            step = self.control.manual_reset()
        else:
            return self._refuse(f"pi-context: {self.control.spec} has no {command}.")
        if step.duplicate:
            message = f"pi-context: a close-out of window {window} is already pending."
            self.notices.notify("info", message)
            return CommandResult(True, message)
        if step.commits:
            fresh, ids = await self.effects.commit_now(step, token, window)
            if fresh is None:
                return CommandResult(False, f"pi-context: {command} wrote no new window.")
            message = cleared_notice(fresh)
            return CommandResult(True, message, start_turn=step.continues, entry_ids=ids)
        if not step.meaning.acknowledges:
            return CommandResult(True, f"pi-context: {command} changed nothing.")
        # The warning's text under the extension's own kind for it (manual-wipe), marked
        # manual: each command is its own prompt for the close-out turn, while the budget still
        # warns at most once per window (a manual-wipe counts as its warning, as before).
        entry_id = self.lifecycle.session.append_custom_message(
            custom_type(MANUAL_WIPE, self.budget.dialect), WARNING_TEXT, False, {"source": "manual"}
        )
        message = f"pi-context: closing out window {window}; the model checkpoints its notes first."
        self.notices.notify("info", message)
        return CommandResult(True, message, start_turn=True, entry_ids=(entry_id,))

    def pi_context(self, argument: str = "") -> CommandResult:
        choice = argument.strip().lower()
        if choice == "on":
            self.lifecycle.enabled = True
            # A root window that started while off gets its boot now (idempotent otherwise).
            started = self.boundaries.ensure_boot()
            self.notices.notify("info", ON_TEXT)
            return CommandResult(True, ON_TEXT, entry_ids=started.entry_ids)
        if choice == "off":
            self.lifecycle.enabled = False
            self.control.clear()
            self.budget.discard()
            self.notices.notify("info", OFF_TEXT)
            return CommandResult(True, OFF_TEXT)
        if choice in ("", "status"):
            lines = self.budget.thresholds
            state = "on" if self.lifecycle.enabled else "off"
            message = (
                f"pi-context is {state} · window {self.window.window_id} · "
                f"{self.control.spec} · reminder at {lines.reminder}, warning at "
                f"{lines.warning}, hard reserve at {lines.hard_reserve} tokens left"
            )
            self.notices.notify("info", message)
            return CommandResult(True, message)
        message = f"pi-context: unknown argument {argument.strip()!r}; use on, off or status"
        self.notices.notify("error", message)
        return CommandResult(False, message)

    def compact(self) -> CompactDecision:
        """Native compaction is cancelled while enabled, and on any marked branch even when off."""
        if self.lifecycle.enabled or current_reset(self.window.branch()) is not None:
            text = COMPACT_TEXT.format(command=self.control.reset_command)
            self.notices.notify("warning", text)
            return CompactDecision(True, text)
        return CompactDecision(False)
