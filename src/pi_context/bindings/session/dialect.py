"""The dialects of the extension's session entries: which prefix its ``customType`` names carry.

The published extension named every entry it writes ``pi-context/<kind>`` up to 0.37; at 0.38
the package became ``notesoup`` and every name became ``notesoup/<kind>``, with no storage
migration (the newest extension no longer recognises the old names). A session may hold both:
one written by an older host and continued by a newer one switches dialect mid-way.

Here a *kind* is the part after the prefix (``boot``, ``reset-marker``, ...). Readers ask for a
kind and accept either dialect; writers name one dialect, the newest by default. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any, Final

NOTESOUP: Final = "notesoup"
"""The newest dialect (0.38.0 on): ``notesoup/<kind>``."""
PI_CONTEXT: Final = "pi-context"
"""The earlier dialect (to 0.37): ``pi-context/<kind>``."""
DIALECTS: Final = (NOTESOUP, PI_CONTEXT)
"""Every dialect, newest first."""
DEFAULT_DIALECT: Final = NOTESOUP

BOOT: Final = "boot"
RESET_MARKER: Final = "reset-marker"
CONTINUATION: Final = "continuation"
RESET_PROMPT: Final = "reset-prompt"
"""The user's follow-up prompt, displayed after the continuation (from 6bcd8b5 on)."""
GUIDANCE: Final = "guidance"
WARNING: Final = "warning"
MANUAL_WIPE: Final = "manual-wipe"
"""The hidden close-out prompt of the user's manual reset command (``/wipe-memory``,
``/clear-memory``): the warning's text under its own kind, as the extension writes it from
0.33 on."""
NOTE: Final = "note"

SETTINGS_KEYS: Final = {NOTESOUP: "notesoup", PI_CONTEXT: "pi-context"}
"""The key of the extension's own object in Pi's ``settings.json``, per dialect."""


class DialectError(ValueError):
    """A dialect name that is none of ``DIALECTS``."""


def check_dialect(name: object) -> str:
    """``name`` when it is a dialect, else a ``DialectError`` naming the ones there are."""
    if name in DIALECTS:
        return str(name)
    choices = ", ".join(repr(d) for d in DIALECTS)
    raise DialectError(f"unknown session dialect {name!r}: choose one of {choices}")


def custom_type(kind: str, dialect: str = DEFAULT_DIALECT) -> str:
    """The ``customType`` a writer of ``dialect`` gives an entry of ``kind``."""
    return f"{check_dialect(dialect)}/{kind}"


def split_type(value: object) -> tuple[str, str] | None:
    """(dialect, kind) of one of the extension's ``customType`` names, else None."""
    if not isinstance(value, str):
        return None
    prefix, slash, kind = value.partition("/")
    if not slash or not kind or prefix not in DIALECTS:
        return None
    return prefix, kind


def kind_of(value: object) -> str | None:
    """The kind a ``customType`` names in either dialect (``notesoup/boot`` -> ``boot``)."""
    split = split_type(value)
    return split[1] if split is not None else None


def is_kind(value: object, kind: str) -> bool:
    """Does ``value`` name ``kind`` in either dialect?"""
    split = split_type(value)
    return split is not None and split[1] == kind


def is_extension_type(value: object) -> bool:
    """Is ``value`` one of the extension's names, in either dialect?"""
    return split_type(value) is not None


def entry_dialect(entry: object) -> str | None:
    """The dialect of one session entry of the extension (custom or custom message)."""
    if not isinstance(entry, dict) or entry.get("type") not in ("custom", "custom_message"):
        return None
    split = split_type(entry.get("customType"))
    return split[0] if split is not None else None


def dialects_in(entries: Iterable[Any]) -> tuple[str, ...]:
    """The dialects the extension's entries are written in, in order of first appearance."""
    seen: list[str] = []
    for entry in entries:
        dialect = entry_dialect(entry)
        if dialect is not None and dialect not in seen:
            seen.append(dialect)
    return tuple(seen)


def last_dialect(entries: Iterable[Any]) -> str | None:
    """The dialect of the latest of the extension's entries, else None."""
    last = None
    for entry in entries:
        last = entry_dialect(entry) or last
    return last


def describe_dialects(found: tuple[str, ...]) -> str:
    """How ``session show`` and the MCP server name a session's dialect.

    ``notesoup`` or ``pi-context`` for one; ``mixed (pi-context, then notesoup)`` for a session
    that switched; ``none`` when the extension has written nothing in it yet.
    """
    if not found:
        return "none"
    if len(found) == 1:
        return found[0]
    return f"mixed ({', then '.join(found)})"
