"""History indexes held open across calls, so a resident host (the MCP server, a runtime)
pays for what a call returns, not for the whole session.

An index opened here stays open after the call: its database connection, the columns it has
loaded and checked, the branch view and the content map. The next call still checks it
against the file first (``HistoryIndex.open_view``: identity, ``stat``, digest), and loads
again only what an append or a rebuild changed. At most ``HELD_MAX`` session files are held;
the least recently used is closed first. A one-shot CLI call opens and closes as before; a
host that says it is long-lived holds an index as resident from its first
call, otherwise from the second call in the process. Whether the process is long-lived is
declared once, for every resident structure, by ``support.heap.long_lived_host``.
"""

from __future__ import annotations

import _thread
import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pi_context.support import heap

from .errors import HistoryError
from .index import HistoryIndex, cache_dir_for

HELD_MAX = 4

_held: OrderedDict[tuple[str, str], HistoryIndex] = OrderedDict()
_lock = _thread.RLock()  # threading's own (``threading`` is not needed to start)


@contextmanager
def held_index(source: Path) -> Iterator[HistoryIndex]:
    """The open index of ``source`` (opened on first use), used by one call at a time."""
    real = os.path.realpath(source)
    key = (real, os.fspath(cache_dir_for(Path(real))))
    with _lock:
        index = _held.pop(key, None)
        if index is None:
            index = HistoryIndex(Path(real), Path(key[1]))
            index.resident = heap.long_lived()
        else:
            # Asked again in this process: a resident host, where loading whole columns once
            # pays (a one-shot command reads the few values it needs in place).
            index.resident = True
        _held[key] = index
        while len(_held) > HELD_MAX:
            _held.popitem(last=False)[1].close()
        try:
            yield index
        except HistoryError:
            raise  # an answer (a bad argument, an unknown id): the index is as good as before
        except BaseException:
            _held.pop(key, None)
            index.close()
            raise
        if index.resident and not index.trimmed:
            # The first resident call loaded (or built) the index: what that pass freed goes
            # back to the OS, so the host's size is what it holds (and in a long-lived
            # host, what it holds is kept out of later full collections).
            index.trimmed = True
            heap.settle_after_load()


def close_all() -> None:
    """Close every held index (at shutdown, or to start from the file again)."""
    with _lock:
        while _held:
            _held.popitem()[1].close()
