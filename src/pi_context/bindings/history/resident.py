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

A long-lived host's first search of a large session that has no index yet is answered from
the file (``first.py``: ``first_answer_due``), and the index is then built in a background
thread (``build_later``); a call that needs the index meanwhile waits for it here.
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
from .index import DATABASE, HistoryIndex, cache_dir_for

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

HELD_MAX = 4
FIRST_ANSWER_MIN_BYTES = 8 << 20
"""A smaller session's index is built before its first answer (it takes ~0.1 s or less)."""

_held: OrderedDict[tuple[str, str], HistoryIndex] = OrderedDict()
_lock = _thread.RLock()  # threading's own (``threading`` is not needed to start)
_building: dict[tuple[str, str], Any] = {}  # the background builds running, by key
_building_lock = _thread.allocate_lock()  # never held while an index is open


def _key(source: Path) -> tuple[str, str]:
    real = os.path.realpath(source)
    return real, os.fspath(cache_dir_for(Path(real)))


@contextmanager
def held_index(source: Path) -> Iterator[HistoryIndex]:
    """The open index of ``source`` (opened on first use), used by one call at a time."""
    key = _key(source)
    with _lock:
        index = _held.pop(key, None)
        if index is None:
            index = HistoryIndex(Path(key[0]), Path(key[1]))
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


def first_answer_due(source: Path) -> bool:
    """Whether a first search of ``source`` is to be answered from the file (``first.py``)
    and its index built after (``build_later``): in a long-lived host, for a session of at
    least ``FIRST_ANSWER_MIN_BYTES`` with no index yet (none held or being built here, none
    in the cache)."""
    if not heap.long_lived():
        return False
    key = _key(source)
    if key in _held or key in _building:
        return False
    try:
        if os.stat(key[0]).st_size < FIRST_ANSWER_MIN_BYTES:
            return False
    except OSError:
        return False
    return not os.path.lexists(os.path.join(key[1], DATABASE))


def build_later(source: Path) -> None:
    """Build ``source``'s index (for the file's leaf) in a background thread, one at a time
    per file. Whatever goes wrong there is left to the next call, which builds the index
    itself or answers without it, as any call does."""
    import threading

    key = _key(source)
    with _building_lock:
        if key in _building:
            return

        def build() -> None:
            try:
                with held_index(Path(key[0])) as index:
                    index.open_view(None)
            except Exception:  # noqa: BLE001, S110 - a cache: the next call decides
                pass
            finally:
                with _building_lock:
                    _building.pop(key, None)

        thread = threading.Thread(target=build, name="pi-context history index", daemon=True)
        _building[key] = thread
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: the next call builds the index itself
            del _building[key]


def wait_for_builds(timeout: float | None = None) -> None:
    """Wait for the background builds running now (at shutdown, and in tests)."""
    with _building_lock:
        threads = list(_building.values())
    for thread in threads:
        thread.join(timeout)
