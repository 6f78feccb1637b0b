"""Hand the memory a finished bulk job freed back to the operating system, and keep what a
long-lived host holds out of the cyclic collector's full passes.

After a resident host parses a whole session once (to hold a compact result of it), the
parse's objects are freed but the C allocator keeps their pages: the host's resident size
stays at the parse's peak. ``release_freed`` asks glibc's allocator to return its free pages
(``malloc_trim``); elsewhere it does nothing. It frees nothing that is in use.
"""

from __future__ import annotations

import contextlib
import gc
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_trim: Any = None
_looked = False
_long_lived = False


def release_freed() -> None:
    """Return the allocator's free pages to the OS (glibc only; never raises)."""
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            # imported here: ctypes.util imports tempfile and random, which a warm
            # command-line call (that never releases anything) does not need
            import ctypes
            import ctypes.util

            try:
                _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
            except (OSError, AttributeError):
                _trim = None
    if _trim is not None:
        with contextlib.suppress(Exception):
            _trim(0)


def long_lived_host() -> None:
    """Declare this process a long-lived host (the MCP server), the one declaration of it:
    a history index is then held as resident from its first call
    (``bindings/history/resident.py``), and ``settle_after_load`` also freezes what a load
    (a history index, a resident notes view's whole read of a home) leaves held. Only a
    process's entry point calls this, never a library call or a one-off command (a test that
    needs it sets ``_long_lived`` for itself and unfreezes after)."""
    global _long_lived
    _long_lived = True


def long_lived() -> bool:
    """Whether this process was declared a long-lived host (``long_lived_host``)."""
    return _long_lived


def settle_after_load() -> None:
    """After a resident host made a large structure it holds across calls (a session's
    records, a history index's columns): hand the freed pages back (``release_freed``) and,
    in a long-lived host, collect once and freeze (``gc.freeze``) what is alive.

    Without the freeze, every full collection later in the host's life traverses everything
    held (200-350 ms each at 400k entries, about once per 80 calls of the MCP soak's mix, on
    a loaded 2-core machine), and the call it falls in pays for it. Frozen objects are still
    freed by reference counting when dropped; what is held this way is acyclic (a dropped
    held search is freed at once, ``tests/handoff/test_record_search_compact.py``), so
    nothing frozen waits on the collector (what else was alive at that moment, such as the
    call in flight, is frozen too: a cycle among it is never collected, a bounded cost paid
    once per load). A one-off command never freezes here (``gc_pause.one_shot`` does)."""
    release_freed()
    if _long_lived:
        gc.collect()
        gc.freeze()
