"""``gc_paused``: no cyclic garbage collection while a block makes many acyclic objects.

Parsing a session, walking a large notes cache or paging through history allocates small
acyclic containers by the hundred thousand, and every collection in between would re-scan all
of them (it more than doubled a session load and made a warm listing half again slower). The
collector is disabled inside the block and restored after it; reference counting still frees
everything the block drops.

Re-enabling the collector is not the end of it: every object the block made is still in the
youngest generation, so the first collection after the block scans them all (~245 ms after a
100k-entry load) and later ones scan them again as they age. A short-lived process (a command
of the ``pi-context`` executable: see ``one_shot``) therefore freezes (``gc.freeze``) what a
``gc_paused(freeze=True)`` block leaves alive: those objects are never scanned again, and
reference counting still frees them when they are dropped (a load's values are acyclic).

Nothing is frozen by default: in a long-lived host (the MCP server, an agent loop) a frozen
object that later becomes cyclic garbage is never collected, so freezing is for the process
owner to choose, never a library call's side effect.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_FREEZE = False


def one_shot() -> None:
    """Declare this process short-lived: ``gc_paused(freeze=True)`` blocks freeze what they
    leave alive instead of handing it to the collector. Only a process's entry point (the
    ``pi-context`` executable, for its one-off commands) calls this."""
    global _FREEZE
    _FREEZE = True


def freezes() -> bool:
    """Whether this process was declared short-lived (``one_shot``)."""
    return _FREEZE


@contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze and _FREEZE:
            gc.freeze()
        if enabled:
            gc.enable()
