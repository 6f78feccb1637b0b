"""Hand the memory a finished bulk job freed back to the operating system.

After a resident host parses a whole session once (to hold a compact result of it), the
parse's objects are freed but the C allocator keeps their pages: the host's resident size
stays at the parse's peak. ``release_freed`` asks glibc's allocator to return its free pages
(``malloc_trim``); elsewhere it does nothing. It frees nothing that is in use.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

_trim: Any = None
_looked = False


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
