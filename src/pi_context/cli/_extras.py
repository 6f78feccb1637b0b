"""Commands that need an optional extra: one clear line when it is not installed.

``pip install pi-context`` gives a host the runtime, sessions, notes, history and handoff;
``verify``, ``mutate`` and ``conformance`` run hypothesis, which the ``[verify]`` extra
brings (``dev`` includes it).
"""

from __future__ import annotations

import sys
from importlib.util import find_spec

# extra -> the modules it brings that a command needs
EXTRAS: dict[str, tuple[str, ...]] = {"verify": ("hypothesis",)}


def missing(command: str, extra: str = "verify") -> int | None:
    """``None`` when ``extra``'s modules import; else print what to install and return 1."""
    absent = [module for module in EXTRAS[extra] if find_spec(module) is None]
    if not absent:
        return None
    print(
        f"pi-context {command}: needs {', '.join(absent)}, which the [{extra}] extra installs:"
        f" pip install 'pi-context[{extra}]'",
        file=sys.stderr,
    )
    return 1
