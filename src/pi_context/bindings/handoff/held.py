"""The session's own records held between ``context_history_*`` calls, so a resident host
(the MCP server, a runtime) parses the session once, not on every call.

A held value is used only while the file's ``stat`` (device, inode, size, modification and
change times) is exactly what it was just before the value was made, and that stat is old
enough to vouch for it (the history index's rule, ``bindings.history.scan``: a write in the
same tick of a coarse clock leaves ``stat`` unchanged). Any doubt makes it afresh. At most
``HELD_MAX`` branches are held; the least recently used goes first.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from pi_context.bindings.history.scan import snapshot, unchanged
from pi_context.support.heap import settle_after_load

from .history import RecordSearch

HELD_MAX = 4

_held: OrderedDict[tuple[str, str | None], tuple[tuple[int, int], list[int], RecordSearch]] = (
    OrderedDict()
)
_lock = threading.Lock()


def held_records(path: Path, leaf_id: str | None, make: Callable[[], RecordSearch]) -> RecordSearch:
    """``make()`` for the branch of ``path`` ending at ``leaf_id``, or the one made before
    while the file is unchanged."""
    try:
        info = os.stat(path)
    except OSError:
        return make()  # the loader names what is wrong
    key = (os.path.realpath(path), leaf_id)
    identity = (info.st_dev, info.st_ino)
    with _lock:
        held = _held.get(key)
        if held is not None and held[0] == identity and unchanged(held[1], info):
            _held.move_to_end(key)
            return held[2]
    taken_ns = time.time_ns()
    made = make()
    # The whole session was parsed to make it; only the compact records stay: hand the
    # parse's freed pages back, so a resident host's size is what it holds, not that peak
    # (and in a long-lived host, keep what is held out of later full collections).
    settle_after_load()
    with _lock:
        _held[key] = (identity, snapshot(info, taken_ns), made)
        _held.move_to_end(key)
        while len(_held) > HELD_MAX:
            _held.popitem(last=False)
    return made
