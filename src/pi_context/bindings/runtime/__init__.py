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
* ``ports``       what the handoff (``bindings/handoff/``) needs of the runtime
* ``overflow``    provider context-overflow detection
* ``tree``        tree navigation and its branch-summary decision
* ``via``         one-line typed read-only attributes (``Via``, ``Derived``)

Names are imported on first use, so importing one module of this package (the tool registry
loads ``tools``) does not load the whole runtime, and the package imports none of its modules
(so none of them is ever on an import circle through it). Typed code imports the names from
their modules (or from ``pi_context``).
"""

from __future__ import annotations

from typing import Any

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


def __getattr__(name: str) -> Any:
    import importlib

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value
