"""``gc_paused``: no cyclic garbage collection while a block makes many acyclic objects.

Parsing a session, walking a large notes cache or paging through history allocates small
acyclic containers by the hundred thousand, and every collection in between would re-scan all
of them (it more than doubled a session load and made a warm listing half again slower). The
collector is disabled inside the block and restored after it; reference counting still frees
everything the block drops.

Nothing is frozen (``gc.freeze``) on the way out: in a long-lived host (the MCP server, an
agent loop) a frozen object that later becomes cyclic garbage is never collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
