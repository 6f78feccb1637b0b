"""Boundary construction: the boot of a window (from one notes snapshot), the default reset
boundary (checkpoint, marker with a fresh id, boot, continuation), the host's replacement
builder, and the root boot or tail repair a session start needs."""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_context.bindings.notes.homes import NotesHomes, notes_root
from pi_context.bindings.notes.snapshot import NotesSnapshot, load_snapshot
from pi_context.bindings.notes.store import NoteStore
from pi_context.bindings.session.boundary import (
    plan_tail_repair,
    reset_drafts,
    reset_prompt_draft,
)
from pi_context.bindings.session.dialect import BOOT, custom_type, entry_dialect
from pi_context.bindings.session.windows import (
    current_window_id,
    mint_window_id,
    needs_root_boot,
    previous_window_id,
    root_window_id,
)

from .boot import BootInput
from .boot_shelves import render_boot
from .composer import ResetBuild
from .config import RuntimeConfig
from .lifecycle import Lifecycle
from .protocol import CONTINUATION_TEXT
from .results import StartResult
from .window import WindowView

Draft = dict[str, Any]
Notify = Callable[[str, str], None]
_SYSTEM_RANDOM = random.SystemRandom()
"""Window ids where the host gave no ``RuntimeConfig.rng`` (it keeps no state to share)."""


@dataclass(slots=True, eq=False, repr=False)
class Boundaries:
    """Builds the boots and boundaries of one runtime."""

    lifecycle: Lifecycle
    window: WindowView
    config: RuntimeConfig
    cwd: Callable[[], Path]
    notify: Notify
    owner: object
    """What a host's ``build_reset`` is called with (the Runtime)."""
    _notes_notified: set[str] = field(default_factory=set, init=False)

    def notes_homes(self) -> NotesHomes:
        """The five notes homes of this runtime's identity (session, cwd, agent, model)."""
        model = self.lifecycle.model
        return NotesHomes(
            root=notes_root(self.config.notes_home),
            session_id=self.lifecycle.session.session_id,
            project_root=self.cwd(),
            agent_name=self.config.agent_name,
            model_id=model.id if model else None,
        )

    def notes_snapshot(self) -> NotesSnapshot:
        clock = self.lifecycle.session.now_ms  # the session's clock, as its entries
        return load_snapshot(NoteStore(self.notes_homes(), clock=clock))

    def boot_text(self, window_id: str, previous: str | None) -> str:
        """Acquire one notes snapshot and render the boot of ``window_id`` from it."""
        opened = self.lifecycle.session.now_ms()  # the session's clock, as its entries
        snapshot = self.notes_snapshot()
        notice = snapshot.human_notice()
        if notice and window_id not in self._notes_notified:
            self._notes_notified.add(window_id)
            self.notify("warning", notice)
        homes = self.notes_homes()
        return render_boot(
            BootInput(
                agent_name=str(homes.slug("agent")),
                first_window_id=root_window_id(
                    self.lifecycle.session.session_id,
                    self.window.branch(),
                    fork_safe=self.window.fork_safe,
                ),
                current_window_id=window_id,
                previous_window_id=previous,
                notes=snapshot,
                model_name=str(homes.slug("model")),
                opened_ms=opened,
                layout=self.config.boot_layout,
            )
        )

    def reset_drafts(self) -> list[Draft]:
        """The default boundary: checkpoint, marker (fresh id), boot, continuation."""
        branch = self.window.branch()
        session_id = self.lifecycle.session.session_id
        fork_safe = self.window.fork_safe
        rng = self.config.rng or _SYSTEM_RANDOM
        new_id = mint_window_id(branch, session_id, rng, fork_safe=fork_safe)
        previous = current_window_id(branch, session_id, fork_safe=fork_safe)
        return reset_drafts(
            branch,
            session_id,
            self.boot_text(new_id, previous),
            CONTINUATION_TEXT,
            window_id=new_id,
            dialect=self.config.dialect,
        )

    def builder(self, prompt: str | None = None) -> ResetBuild:
        """The boundary builder in use: the host's ``build_reset`` or ``reset_drafts``; with
        the user's follow-up ``prompt`` (a step that carries one, from 6bcd8b5 on) the
        boundary ends with it, displayed, in the continuation's dialect."""
        custom = self.config.build_reset
        owner = self.owner
        build: ResetBuild = self.reset_drafts if custom is None else (lambda: custom(owner))
        if prompt is None:
            return build

        async def with_prompt() -> list[Draft]:
            built = build()
            drafts = list(await built if inspect.isawaitable(built) else built)
            dialect = entry_dialect(drafts[-1]) if drafts else None
            return [*drafts, reset_prompt_draft(prompt, dialect or self.config.dialect)]

        return with_prompt

    def ensure_boot(self) -> StartResult:
        """Create the root boot once, or complete an interrupted reset tail; else nothing."""
        session = self.lifecycle.session
        branch = self.window.branch()
        plan = plan_tail_repair(branch)
        if plan.status == "no-marker":
            if self.lifecycle.refuse_while_off("a new root boot") is not None:
                return StartResult("disabled")
            messages = self.window.messages()
            fork_safe = self.window.fork_safe
            if not needs_root_boot(branch, messages, session.session_id, fork_safe=fork_safe):
                return StartResult("present")
            root = root_window_id(session.session_id, branch, fork_safe=fork_safe)
            boot = custom_type(BOOT, self.config.dialect)
            entry_id = session.append_custom_message(
                boot, self.boot_text(root, None), False, {"windowId": root}
            )
            return StartResult("root-boot", (entry_id,))
        if plan.status == "complete":
            return StartResult("present")
        if plan.status == "refused":
            self.notify(
                "warning",
                f"pi-context: window {plan.window_id} has an incomplete reset that cannot be "
                f"repaired ({plan.reason}); run /wipe-memory to start a fresh window",
            )
            return StartResult("refused", reason=plan.reason)
        assert plan.window_id is not None and plan.marker_id is not None
        previous = previous_window_id(
            branch, session.session_id, plan.marker_id, fork_safe=self.window.fork_safe
        )
        drafts = plan.drafts(self.boot_text(plan.window_id, previous), CONTINUATION_TEXT)
        ids = session.append_drafts(drafts)
        return StartResult("repaired", tuple(ids), reason=", ".join(plan.missing))
