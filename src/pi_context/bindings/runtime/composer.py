"""The turn-end composer: the one place that orders a turn's drafts.

Order: the host's incoming drafts, then this window's budget drafts, then the reset boundary
(checkpoint -> marker -> boot -> continuation) when the reducer committed one. Building the
boundary may be slow or asynchronous; if it fails, the drafts already built are kept, the human
is warned and no continuation is requested. If the lifecycle moved on while it was being built
(another session, branch, window, generation or enabled state, or an abort), the boundary is
stale whether or not its build succeeded: it is dropped with no notice, and only the host's own
incoming drafts are kept (budget drafts belonged to the old window).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pi_context.bindings.session.boundary import (
    BoundaryError,
    Draft,
    artifact_kind,
    compose_turn_end,
    validate_boundary,
)
from pi_context.bindings.session.windows import marker_window_id

ResetBuild = Callable[[], "Sequence[Draft] | Awaitable[Sequence[Draft]]"]


@dataclass(frozen=True)
class Composed:
    drafts: list[Draft]
    continue_: bool = False
    """The runtime asks the host to continue with a new turn (a committed reset)."""
    window_id: str | None = None
    """The new window's id when a reset boundary is part of ``drafts``."""
    failure: str | None = None
    stale: bool = False


def check_incoming(incoming: Sequence[Draft]) -> None:
    """The host's own drafts must not carry reset artifacts: only the composer adds those."""
    for index, draft in enumerate(incoming):
        if not isinstance(draft, dict):
            raise BoundaryError(f"incoming draft {index} must be a JSON object")
        if artifact_kind(draft) is not None:
            raise BoundaryError(
                f"incoming draft {index} is a pi-context {artifact_kind(draft)}: reset "
                "artifacts are added by the runtime, not passed in"
            )


async def compose(
    incoming: Sequence[Draft],
    budget: Sequence[Draft],
    reset: ResetBuild | None,
    still_current: Callable[[], bool],
) -> Composed:
    """Compose one turn end (``reset`` is None when the reducer committed nothing)."""
    check_incoming(incoming)
    base = [*incoming, *budget]
    validate_boundary(base)
    if reset is None:
        return Composed(base)
    try:
        built = reset()
        if inspect.isawaitable(built):
            built = await built
        drafts = list(built)
    except Exception as exc:  # construction failure: keep what exists, never continue
        if not still_current():
            return Composed(list(incoming), stale=True)
        return Composed(base, failure=f"pi-context: could not build reset: {exc}")
    if not still_current():
        return Composed(list(incoming), stale=True)
    try:
        composed = compose_turn_end(incoming, budget, drafts)
    except BoundaryError as exc:
        return Composed(base, failure=f"pi-context: could not build reset: {exc.reason}")
    marker = next(d for d in composed if artifact_kind(d) == "marker")
    return Composed(composed, continue_=True, window_id=marker_window_id(marker))
