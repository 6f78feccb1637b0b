"""Pi-compatible session files: read, write, navigate and project them as the real Pi does.

See ``docs/sessions.md`` for the format rules followed, where this binding does better than Pi,
and the durability policy.
"""

from __future__ import annotations

from .errors import Problem, SessionError
from .session import Session, default_session_dir, seeded_uuids, uuidv7
from .store import Durability
from .tree import TreeNode

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
