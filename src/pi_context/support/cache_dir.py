"""The one per-user cache directory every cache of ours lives under.

``$PI_CONTEXT_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/pi-context``, else
``~/.cache/pi-context``. Everything in it (history indexes, notes caches, hypothesis files of
the command-line checks) is validated before use and safe to delete.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "PI_CONTEXT_CACHE_DIR"


_ROOTS_MAX = 16
_roots: dict[tuple[str | None, str | None, str], Path] = {}


def cache_root() -> Path:
    """The cache root as the environment names it now (kept per value of the variables it
    is made from, so a resident host's every call does not parse the same paths again)."""
    env = os.environ
    explicit, xdg, home = env.get(CACHE_ENV), env.get("XDG_CACHE_HOME"), env.get("HOME")
    if home is None or _other_user(explicit) or _other_user(xdg):
        return _root(explicit, xdg)  # a home folder from the user database: asked each time
    key = (explicit, xdg, home)
    root = _roots.get(key)
    if root is None:
        if len(_roots) >= _ROOTS_MAX:
            _roots.clear()
        root = _roots[key] = _root(explicit, xdg)
    return root


def _other_user(value: str | None) -> bool:
    """``~name/...``: another user's home, from the user database."""
    return value is not None and value.startswith("~") and value.split("/", 1)[0] != "~"


def _root(explicit: str | None, xdg: str | None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pi-context"
