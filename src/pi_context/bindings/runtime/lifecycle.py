"""What a runtime is bound to right now, and whether something begun earlier is still current.

The bindings: the session, the model, the enabled switch (``/pi-context on|off``), the
lifecycle generation (bumped by session start, tree navigation and shutdown), whether the
session is active (until shutdown) and the run's abort signal.

**Stale boundaries.** Building a boundary may be slow or asynchronous. As the seeds' 0.26.0
architecture requires, a build is checked before anything is returned or appended against
everything that may change meanwhile: lifecycle generation, session (object and id), active
window, enabled and abort. ``token`` captures them when a step commits; ``current`` says
whether they still hold.

**The enabled precondition.** The reducer reads ``enabled`` as a fact at ``turn_end`` and
``before_settle``. The other events are host requests that pi-context serves only while it is
on, as the published extension does: the model's ``wipe_memory`` (``tool_request``), the
user's ``/wipe-memory`` (``close_out``, or 0.25's ``manual_reset``), the budget's reminders,
warning and automatic close-out, and a new root boot. ``refuse_while_off`` is the one check of
that precondition; every such entry point asks it before the reducer sees anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pi_context.bindings.session import Session

from .config import ModelInfo


@dataclass(frozen=True)
class Token:
    """What must not change while a boundary is being built."""

    generation: int
    session: int
    session_id: str
    window_id: str
    enabled: bool
    active: bool
    aborts: int


class Lifecycle:
    """The runtime's bindings and its staleness check."""

    def __init__(
        self,
        session: Session,
        model: ModelInfo | None,
        enabled: bool,
        window_id: Callable[[], str],
    ) -> None:
        self.session = session
        self.model = model
        self.enabled = enabled
        self.generation = 0
        self.active = True
        self.aborts = 0
        """Abort signals seen, ever (a build across one is stale)."""
        self.aborted = False
        """The current run's abort signal (set by an abort, cleared when a turn starts, the
        run settles or the lifecycle moves on)."""
        self._window_id = window_id

    # --- transitions -------------------------------------------------------------------------

    def transition(self, *, active: bool = True) -> None:
        """Session start, tree navigation (``active``) or shutdown (not ``active``)."""
        self.generation += 1
        self.active = active
        self.aborted = False

    def abort(self) -> None:
        self.aborts += 1
        self.aborted = True

    def run_continues(self) -> None:
        """A turn starts or the run settled: the abort signal of a past run is gone."""
        self.aborted = False

    # --- the enabled precondition ----------------------------------------------------------------

    def refuse_while_off(self, what: str) -> str | None:
        """Why ``what`` is not served while pi-context is off (None while it is on)."""
        if self.enabled:
            return None
        return f"pi-context is off, so {what} is unavailable; /pi-context on turns it back on"

    # --- staleness -------------------------------------------------------------------------------

    def token(self) -> Token:
        return Token(
            self.generation,
            id(self.session),
            self.session.session_id,
            self._window_id(),
            self.enabled,
            self.active,
            self.aborts,
        )

    def current(self, token: Token) -> bool:
        """Nothing ``token`` captured has changed: same generation, session, active window,
        enabled state, still active, and no abort since."""
        return token == self.token()
