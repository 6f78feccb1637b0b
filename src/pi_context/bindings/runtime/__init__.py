"""The host runtime: the ``Runtime`` façade and its collaborators around the generated
reset-control machine.

* ``runtime``     the ``Runtime`` façade and its lifecycle entry points
* ``config``      ``RuntimeConfig`` and ``ModelInfo``
* ``results``     what the entry points return (notices, boundary and command results)
* ``lifecycle``   session, model, enabled switch, generation, abort signal; staleness
* ``window``      the active branch, its window id and usage
* ``control``     the reducer adapter (any committed spec) and lazy facts
* ``builder``     boots and reset boundaries
* ``composer``    the one turn-end ordering of drafts
* ``effects``     performing each step's host action; notices and announcements
* ``budget``      thresholds, usage, reminder/warning staging
* ``settings``    Pi-style global/project settings with trust
* ``boot``        the boot message, rendered purely from an explicit snapshot
* ``commands``    /wipe-memory, /pi-context on|off|status, /compact
* ``tools``       the ``wipe_memory`` and ``get_context_remaining`` tools
* ``tool_host``   the runtime's side of the tools (context, schemas, dispatch)
* ``handoff``     ``/handoff`` (driven through ``ports.HandoffHost``)
* ``overflow``    provider context-overflow detection
* ``tree``        tree navigation and its branch-summary decision

Names are imported on first use, so importing one module of this package (the tool registry
loads ``tools``) does not load the whole runtime.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .budget import Policy as Policy
    from .budget import Thresholds as Thresholds
    from .budget import Usage as Usage
    from .config import ModelInfo as ModelInfo
    from .config import RuntimeConfig as RuntimeConfig
    from .results import BoundaryResult as BoundaryResult
    from .results import ContextResult as ContextResult
    from .results import Notice as Notice
    from .results import StartResult as StartResult
    from .runtime import Runtime as Runtime

# Public name -> the module of this package that defines it.
_EXPORTS: dict[str, str] = {
    "BoundaryResult": "results",
    "ContextResult": "results",
    "ModelInfo": "config",
    "Notice": "results",
    "Policy": "budget",
    "Runtime": "runtime",
    "RuntimeConfig": "config",
    "StartResult": "results",
    "Thresholds": "budget",
    "Usage": "budget",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    import importlib

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value
