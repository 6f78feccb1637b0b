"""Derived sessions with one planted fault each, from a session our runtime wrote.

Each function takes the branch's entries (header first, a linear chain) and returns the
faulty entries and the id of the entry the audit must report. Entries are relinked into one
chain after the change, so the file stays a valid Pi session.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Entry = dict[str, Any]

MARKER = "reset-marker"  # kinds: the runtime writes them as notesoup/<kind> or pi-context/<kind>
BOOT = "boot"
CONTINUATION = "continuation"


def read(path: Path) -> list[Entry]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write(entries: list[Entry], path: Path) -> Path:
    previous: str | None = None
    out = []
    for entry in entries:
        entry = dict(entry)
        if entry.get("type") != "session":
            entry["parentId"] = previous
            previous = entry["id"]
        out.append(json.dumps(entry, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _is(entry: Entry, kind: str) -> bool:
    value = entry.get("customType")
    return isinstance(value, str) and value.split("/", 1)[-1] == kind and "/" in value


def _role(entry: Entry) -> str | None:
    message = entry.get("message")
    return message.get("role") if isinstance(message, dict) else None


def _boundaries(entries: list[Entry]) -> list[tuple[int, int]]:
    """(first, last) index of each reset boundary: compaction?, marker, boot, continuation."""
    spans = []
    for i, entry in enumerate(entries):
        if _is(entry, MARKER):
            first = i - 1 if entries[i - 1].get("type") == "compaction" else i
            spans.append((first, i + 2))
    return spans


def marker_removed(entries: list[Entry]) -> tuple[list[Entry], str]:
    first, _last = _boundaries(entries)[0]
    marker = next(i for i in range(first, first + 2) if _is(entries[i], MARKER))
    out = entries[:marker] + entries[marker + 1 :]
    return out, entries[marker + 1]["id"]  # the boot, now of no marker


def reset_moved_early(entries: list[Entry]) -> tuple[list[Entry], str]:
    """The first boundary moved to right after the first assistant turn (no request, far
    below any usage line)."""
    first, last = _boundaries(entries)[0]
    block = entries[first : last + 1]
    rest = entries[:first] + entries[last + 1 :]
    turn = next(i for i, e in enumerate(rest) if _role(e) == "assistant")
    while _role(rest[turn + 1]) == "toolResult":
        turn += 1
    return rest[: turn + 1] + block + rest[turn + 1 :], block[0]["id"]


def reset_after_abort(entries: list[Entry]) -> tuple[list[Entry], str]:
    first, last = _boundaries(entries)[0]
    block = entries[first : last + 1]
    rest = entries[:first] + entries[last + 1 :]
    aborted = next(
        i
        for i, e in enumerate(rest)
        if _role(e) == "assistant" and e["message"].get("stopReason") == "aborted"
    )
    return rest[: aborted + 1] + block + rest[aborted + 1 :], block[0]["id"]


def boot_missing(entries: list[Entry]) -> tuple[list[Entry], str]:
    first, last = _boundaries(entries)[0]
    boot = last - 1
    assert _is(entries[boot], BOOT)
    return entries[:boot] + entries[boot + 1 :], entries[boot + 1]["id"]


def boot_doubled(entries: list[Entry]) -> tuple[list[Entry], str]:
    first, last = _boundaries(entries)[0]
    boot = last - 1
    twin = copy.deepcopy(entries[boot])
    twin["id"] = "b00tb00t"
    return entries[: boot + 1] + [twin] + entries[boot + 1 :], "b00tb00t"


def continuation_before_marker(entries: list[Entry]) -> tuple[list[Entry], str]:
    first, last = _boundaries(entries)[0]
    cont = entries[last]
    assert _is(cont, CONTINUATION)
    rest = entries[:last] + entries[last + 1 :]
    return rest[:first] + [cont] + rest[first:], cont["id"]


FAULTS: dict[str, Callable[[list[Entry]], tuple[list[Entry], str]]] = {
    "marker-removed": marker_removed,
    "reset-moved-early": reset_moved_early,
    "reset-after-abort": reset_after_abort,
    "boot-missing": boot_missing,
    "boot-doubled": boot_doubled,
    "continuation-before-marker": continuation_before_marker,
}
