"""The one per-user cache directory every cache of ours lives under.

``$PI_CONTEXT_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/pi-context``, else
``~/.cache/pi-context``. Everything in it (history indexes, notes caches, hypothesis files of
the command-line checks) is validated before use and safe to delete.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "PI_CONTEXT_CACHE_DIR"


def cache_root() -> Path:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pi-context"
