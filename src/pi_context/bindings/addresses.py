"""Addresses the model passes back to a tool: window ids and history item ids.

A tool either delivers an address whole or says it cannot: shortening one (a middle-truncation
marker, a cut prefix) would hand the model a string that looks like an id and resolves to
nothing. So every address obeys one documented rule, checked where ids are minted and where a
tool shows or accepts one; an id read from a file that breaks it is reported as unaddressable
with its reason, never cut.

Note paths have their own, stricter syntax (``notes.address``).
"""

from __future__ import annotations

import re

ADDRESS_MAX_CHARS = 512
"""Longest window id or history item id, in code points.

Pi's own ids are far shorter (8-hex entry ids, ``pcw:<UUID>:<8 hex>`` windows); 512 keeps
room for custom session ids while two whole addresses always fit one tool result.
"""

SESSION_ID_MAX_CHARS = 200
"""Longest session id the binding creates and the runtime works with. The id is part of the
session's file name (``<24-char stamp>_<id>.jsonl``) and names its notes folder, both single
file-name components of at most 255 bytes, and every window id the session mints embeds it."""

_UNDELIVERABLE = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def address_problem(value: str, what: str = "id") -> str | None:
    """Why ``value`` cannot be delivered and passed back verbatim, or ``None`` when it can.

    Control characters and lone surrogates are refused too: a one-line read header or a boot
    line cannot show them as they are.
    """
    if value == "":
        return f"the {what} is empty"
    if len(value) > ADDRESS_MAX_CHARS:
        return (
            f"the {what} is {len(value)} characters, over the {ADDRESS_MAX_CHARS}-character "
            "address limit"
        )
    bad = _UNDELIVERABLE.search(value)
    if bad is not None:
        kind = "a lone surrogate" if bad.group() >= "\ud800" else "a control character"
        return f"the {what} contains {kind} (U+{ord(bad.group()):04X}) at position {bad.start()}"
    return None


def addressable(value: object) -> bool:
    return isinstance(value, str) and address_problem(value) is None


def described(value: str, what: str) -> str:
    """``value`` itself when addressable, else a short honest placeholder (for prose)."""
    problem = address_problem(value, what)
    return value if problem is None else f"(unaddressable: {problem})"
