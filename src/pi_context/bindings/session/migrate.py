"""Bring session files of older versions to version 3, exactly as Pi does (in place).

v1 -> v2: every entry gets a new id and a parent chain in file order; a compaction's
``firstKeptEntryIndex`` (an index into the parsed values, header at 0) becomes
``firstKeptEntryId``. v2 -> v3: message role ``hookMessage`` becomes ``custom``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_context.support.digest import sha256_hex

CURRENT_VERSION = 3


def js_number_of(value: Any) -> float:
    """``Number(value)`` for the JSON values a version field may hold (NaN for junk)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text)
        except ValueError:
            return float("nan")
    return float("nan")


def header_version(values: list[Any]) -> Any:
    """The version as Pi reads it: the first header's ``version``, missing/null meaning 1."""
    header = next((v for v in values if isinstance(v, dict) and v.get("type") == "session"), None)
    version = header.get("version") if header is not None else None
    return 1 if version is None else version


def needs_migration(values: list[Any]) -> bool:
    version = js_number_of(header_version(values))
    return not version >= CURRENT_VERSION


def derived_ids(values: list[Any]) -> Callable[[], str]:
    """Ids for a migration that depend only on the file: the n-th id minted is a digest of the
    header's id and n (8 hex digits, as Pi's), so every read of one v1 file, in any process,
    gives its entries the same ids, and an id listed by one call resolves in the next. (Pi
    mints random ids, then writes them back; a read-only reader cannot write them back.)"""
    header = next((v for v in values if isinstance(v, dict) and v.get("type") == "session"), {})
    seed = header.get("id")
    base = seed if isinstance(seed, str) else ""
    taken: set[str] = set()
    minted = 0

    def new_id() -> str:
        nonlocal minted
        while True:
            minted += 1
            text = f"{base}\n{minted}".encode("utf-8", "surrogatepass")
            candidate = sha256_hex(text)[:8]
            if candidate not in taken:
                taken.add(candidate)
                return candidate

    return new_id


def migrate(values: list[Any], new_id: Callable[[], str]) -> bool:
    """Migrate the parsed values of a file in place; True if anything was (re)written."""
    if not needs_migration(values):
        return False
    version = js_number_of(header_version(values))
    if version < 2:
        _v1_to_v2(values, new_id)
    if version < 3:
        _v2_to_v3(values)
    return True


def _v1_to_v2(values: list[Any], new_id: Callable[[], str]) -> None:
    previous: str | None = None
    for value in values:
        if not isinstance(value, dict):
            continue  # Pi would throw here; a non-object line just keeps its index
        if value.get("type") == "session":
            value["version"] = 2
            continue
        value["id"] = new_id()
        value["parentId"] = previous
        previous = value["id"]
        if value.get("type") == "compaction" and "firstKeptEntryIndex" in value:
            index = value["firstKeptEntryIndex"]
            if isinstance(index, int | float) and not isinstance(index, bool):
                target = (
                    values[int(index)]
                    if float(index).is_integer() and 0 <= index < len(values)
                    else None
                )
                if isinstance(target, dict) and target.get("type") != "session" and "id" in target:
                    value["firstKeptEntryId"] = target["id"]
                del value["firstKeptEntryIndex"]


def _v2_to_v3(values: list[Any]) -> None:
    for value in values:
        if not isinstance(value, dict):
            continue
        if value.get("type") == "session":
            value["version"] = 3
            continue
        if value.get("type") == "message":
            message = value.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
