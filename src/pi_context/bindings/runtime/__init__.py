"""The host runtime: budget, boot, the turn-end composer, tools and commands around the
generated reset-control machine.

* ``runtime``   the ``Runtime`` object and its lifecycle entry points
* ``control``   the reducer adapter (0.26 default, 0.25 selectable) and lazy facts
* ``composer``  the one turn-end ordering of drafts
* ``budget``    thresholds, usage, reminder/warning staging
* ``settings``  Pi-style global/project settings with trust
* ``boot``      the boot message, rendered purely from an explicit snapshot
* ``commands``  /wipe-memory, /pi-context on|off|status, /compact
* ``tools``     ``wipe_memory`` and ``get_context_remaining``
* ``overflow``  provider context-overflow detection
* ``demo``      the scripted deterministic end-to-end run
"""

from __future__ import annotations

from .budget import Policy, Thresholds, Usage
from .runtime import (
    BoundaryResult,
    ContextResult,
    ModelInfo,
    Notice,
    Runtime,
    RuntimeConfig,
    StartResult,
)

__all__ = [
    "BoundaryResult",
    "ContextResult",
    "ModelInfo",
    "Notice",
    "Policy",
    "Runtime",
    "RuntimeConfig",
    "StartResult",
    "Thresholds",
    "Usage",
]
