"""Pi-compatible session files: read, write, navigate and project them as the real Pi does.

See ``docs/sessions.md`` for the format rules followed, where this binding does better than Pi,
and the durability policy. The names below load on first use, so a caller that needs only one
submodule (the history index needs ``jsonl`` and ``windows``) does not pay for the rest.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from .errors import Problem, SessionError
    from .ids import default_session_dir, seeded_uuids, uuidv7
    from .session import Session
    from .store import Durability
    from .tree import TreeNode

_HOMES = {
    "Durability": "store",
    "Problem": "errors",
    "Session": "session",
    "SessionError": "errors",
    "TreeNode": "tree",
    "default_session_dir": "ids",
    "seeded_uuids": "ids",
    "uuidv7": "ids",
}

__all__ = [
    "Durability",
    "Problem",
    "Session",
    "SessionError",
    "TreeNode",
    "default_session_dir",
    "seeded_uuids",
    "uuidv7",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
