"""Effects and announcements: performing a reducer step's host action, and telling the user.

A step whose host action commits gets its boundary built and composed after the turn's
incoming and budget drafts (``composer``); a build that went stale (``Lifecycle.current``)
commits nothing, continues nothing and announces nothing. The same check runs again when the
host appends the result: a boundary returned before a lifecycle change is not written after
it (the host's incoming drafts still are, into the session they were made for). Whether the
run continues, stops or retries comes from the host action's meaning, never from the
effect's name. A reset is recorded (``resets``) once it is written.

"memory cleared" is announced only once the new window's boot is durable on the active
branch: at the next turn start or settle after the host appended the boundary, or at once for
a boundary the runtime commits itself (0.25's ``/wipe-memory``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from pi_context.bindings.session.boundary import Draft, artifact_kind, commit_boundary
from pi_context.bindings.session.windows import (
    current_window_id,
    is_window_boot_entry,
    marker_window_id,
)

from .budget import Budget
from .builder import Boundaries
from .composer import Composed, compose
from .control import Step
from .lifecycle import Lifecycle, Token
from .protocol import cleared_notice
from .results import LEVELS, BoundaryResult, Level, Notice, ResetRecord
from .window import WindowView


class Notices:
    """The user's notices of one runtime (kept, and forwarded to the host as they come)."""

    def __init__(self, forward: Callable[[Notice], None] | None) -> None:
        self.notices: list[Notice] = []
        self._forward = forward

    def notify(self, level: str, text: str) -> None:
        notice = Notice(cast(Level, level) if level in LEVELS else "info", text)
        self.notices.append(notice)
        if self._forward is not None:
            self._forward(notice)

    def drain(self) -> list[Notice]:
        out, self.notices = self.notices, []
        return out


@dataclass(frozen=True)
class _Built:
    """A boundary returned to the host, not yet appended."""

    token: Token
    incoming: int
    """How many of the result's drafts came from the host (they precede the boundary)."""
    record: ResetRecord


_PROMPT_NOT_RUN = " The follow-up prompt was not run."


@dataclass(slots=True, eq=False, repr=False)
class Effects:
    """Performs the host action of each step and announces what became durable."""

    lifecycle: Lifecycle
    window: WindowView
    budget: Budget
    boundaries: Boundaries
    notices: Notices
    resets: list[ResetRecord] = field(default_factory=list, init=False)
    _announce: str | None = field(default=None, init=False)
    _built: dict[str, _Built] = field(default_factory=dict, init=False)

    async def _compose(
        self, step: Step, incoming: Sequence[Draft], budget: Sequence[Draft], token: Token
    ) -> Composed:
        build = self.boundaries.builder(step.prompt) if step.commits else None
        composed = await compose(incoming, budget, build, lambda: self.lifecycle.current(token))
        if composed.failure and step.prompt is not None:
            composed = replace(composed, failure=composed.failure + _PROMPT_NOT_RUN)
        if composed.failure:
            self.notices.notify("warning", composed.failure)
        return composed

    def _record(self, step: Step, window_id: str, previous: str, *, in_run: bool) -> ResetRecord:
        stopped = in_run and not step.continues  # a run that was going on ends here
        return ResetRecord(window_id, previous, step.cause, stopped)

    async def perform(
        self,
        step: Step,
        incoming: Sequence[Draft],
        budget: Sequence[Draft],
        token: Token,
        previous: str,
    ) -> BoundaryResult:
        """A turn end or settle: the drafts for the host to append and what happens next."""
        composed = await self._compose(step, incoming, budget, token)
        committed = composed.window_id is not None
        if composed.window_id is not None:
            record = self._record(step, composed.window_id, previous, in_run=True)
            self._built[composed.window_id] = _Built(token, len(incoming), record)
        return BoundaryResult(
            drafts=composed.drafts,
            continue_=committed and step.continues,
            step=step,
            cause=step.cause if committed else "",
            window_id=composed.window_id,
            retry=committed and step.retries,
            failure=composed.failure,
            stale=composed.stale,
            stop=step.stops and (committed or not step.commits),
        )

    async def commit_now(
        self, step: Step, token: Token, previous: str
    ) -> tuple[str | None, tuple[str, ...]]:
        """Build and append a boundary at once (outside a turn): the new window and the entry
        ids (None and none when the build failed or went stale). "memory cleared" follows
        the verified write."""
        composed = await self._compose(step, [], [], token)
        if composed.window_id is None:
            return None, ()
        ids = commit_boundary(self.lifecycle.session, composed.drafts)
        self.resets.append(self._record(step, composed.window_id, previous, in_run=False))
        self.notices.notify("info", cleared_notice(composed.window_id))
        return composed.window_id, tuple(ids)

    def append(self, drafts: Sequence[Draft]) -> list[str]:
        """The host appends a result's drafts (see ``Runtime.append``)."""
        session = self.lifecycle.session
        if not drafts:
            return []
        if not any(artifact_kind(draft) for draft in drafts):
            return [session.append_draft(draft) for draft in drafts]
        marker = next((d for d in drafts if artifact_kind(d) == "marker"), None)
        built = None
        if marker is not None:
            try:
                built = self._built.pop(marker_window_id({**marker, "id": "draft"}), None)
            except ValueError:
                built = None  # not a marker we built: validated and refused below
        if built is not None and not self.lifecycle.current(built.token):
            # Stale: the boundary is not written; the host's own drafts still are, when the
            # session they were made for is still the one bound.
            if id(session) != built.token.session:
                return []
            return [session.append_draft(draft) for draft in drafts[: built.incoming]]
        ids = commit_boundary(session, drafts)
        if built is not None:
            self.resets.append(built.record)
            self._announce = built.record.window_id
        return ids

    def forget(self) -> None:
        """A lifecycle transition: a reset not yet durable is never announced."""
        self._announce = None

    def announce_committed(self, *, final: bool) -> None:
        """Tell the user about reminders and resets that are now durable in the active window."""
        branch = self.window.branch()
        session_id = self.lifecycle.session.session_id
        window = current_window_id(branch, session_id, fork_safe=self.window.fork_safe)
        self.budget.notify_committed(branch, window, final=final)
        if self._announce is None:
            return
        if self._announce == window and any(
            is_window_boot_entry(entry, window) for entry in branch
        ):
            self.notices.notify("info", cleared_notice(window))
            self._announce = None
        elif final:
            self._announce = None  # never committed: an uncommitted reset announces nothing
