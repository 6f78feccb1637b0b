"""The lifecycle observations a Pi session branch records, in order.

A session file does not record the reducer's events; it records what the host wrote around
them. This module reads the active branch (entries as the session layer reads them, its
recognisers for markers and boots, either dialect's names: ``pi-context/`` and
``notesoup/``) into a small vocabulary the mapping of a spec family
(:mod:`pi_context.checks.audit.mapping`) turns into events:

* ``turn-start`` (an assistant message): ``aborted``, ``warned`` (the turn's drafts carry the
  budget's warning), ``stop``;
* ``tool`` (a tool result): ``tool``, ``status`` (the ``status`` of a JSON result);
* ``turn-end`` (after the turn's tool results): ``aborted``, ``failed``, ``overflow``,
  ``usage`` (estimated tokens of the turn's window at its end; None when unknown);
* ``warning`` (``source``: ``manual`` or ``budget``), ``reminder``, ``user``, ``navigation``;
* the boundary: ``checkpoint`` (a compaction with an empty summary, which the boundary
  writes first; Pi's own compactions carry a summary and are not lifecycle observations),
  ``marker`` (``window``), ``boot`` (``window``), ``continuation``;
* ``foreign`` (a marker or boot naming no window of this session: reported, not explained);
* ``end`` (the end of the branch).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_context.bindings.runtime.overflow import is_context_overflow
from pi_context.bindings.session.boundary import artifact_kind
from pi_context.bindings.session.dialect import GUIDANCE, MANUAL_WIPE, WARNING, is_kind
from pi_context.bindings.session.usage import estimate_tokens
from pi_context.bindings.session.windows import (
    is_reset_marker,
    is_window_boot_entry,
    marker_window_id,
    names_fork_safe_window,
    names_upstream_window,
)

Entry = dict[str, Any]


@dataclass(frozen=True)
class Observation:
    kind: str
    entry: str  # the entry id it was read from ("" for the end of the branch)
    attrs: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.attrs.items() if v not in (None, False))
        return f"{self.kind}({shown})" if shown else self.kind


def _message(entry: Entry) -> dict[str, Any] | None:
    if entry.get("type") != "message":
        return None
    message = entry.get("message")
    return message if isinstance(message, dict) else None


def _role(entry: Entry) -> str | None:
    message = _message(entry)
    role = message.get("role") if message else None
    return role if isinstance(role, str) else None


def _custom_type(entry: Entry) -> str | None:
    if entry.get("type") not in ("custom_message", "custom"):
        return None
    value = entry.get("customType")
    return value if isinstance(value, str) else None


def _details(entry: Entry) -> dict[str, Any]:
    details = entry.get("details")
    return details if isinstance(details, dict) else {}


def _status(message: dict[str, Any]) -> str | None:
    """The ``status`` of a tool result whose text is a JSON object (our tools' shape)."""
    content = message.get("content")
    texts = (
        [
            part.get("text")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        if isinstance(content, list)
        else [content]
        if isinstance(content, str)
        else []
    )
    for text in texts:
        if not isinstance(text, str) or not text.startswith("{"):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("status"), str):
            return str(value["status"])
    return None


def _is_warning(custom: object) -> bool:
    """A close-out warning: the budget's, or the manual command's (``manual-wipe``; this
    project wrote it as a warning marked manual before)."""
    return is_kind(custom, WARNING) or is_kind(custom, MANUAL_WIPE)


def _warning_source(entry: Entry) -> str:
    if is_kind(_custom_type(entry), MANUAL_WIPE):
        return "manual"
    return "manual" if _details(entry).get("source") == "manual" else "budget"


def _turn_usage(assistant: dict[str, Any], results: Sequence[dict[str, Any]]) -> int | None:
    """The window's tokens at the turn's end, as the runtime estimates them: the assistant's
    reported usage plus estimates of the results after it; None when the turn reported
    none (aborted, errored or no usage)."""
    usage = assistant.get("usage")
    total = usage.get("totalTokens") if isinstance(usage, dict) else None
    if assistant.get("stopReason") in ("aborted", "error"):
        return None
    if not isinstance(total, int | float) or isinstance(total, bool) or total <= 0:
        return None
    return estimate_tokens([assistant, *results])


def _ours(entry: Entry, session_id: str) -> bool:
    """A marker or boot this session's pi-context wrote: its window id is named for this
    session (either naming) and the entry is not a fork's copy (the session layer's test)."""
    return names_upstream_window(entry, session_id) or names_fork_safe_window(entry, session_id)


def _checkpoint(branch: Sequence[Entry], i: int, session_id: str) -> bool:
    """The boundary's checkpoint: a compaction with an empty summary right before a marker
    of this session (any other compaction is Pi's own and not a lifecycle observation)."""
    entry = branch[i]
    return (
        entry.get("type") == "compaction"
        and entry.get("summary") == ""
        and i + 1 < len(branch)
        and is_reset_marker(branch[i + 1])
        and _ours(branch[i + 1], session_id)
    )


def fork_points(entries: Sequence[Entry], branch: Sequence[Entry]) -> set[str]:
    """Entries of ``branch`` with a child off the branch: the host navigated the tree back to
    them (the abandoned subtree may hold what the runtime wrote before)."""
    on_branch = {id(e) for e in branch}
    off: set[str] = set()
    for entry in entries:
        parent = entry.get("parentId")
        if isinstance(parent, str) and id(entry) not in on_branch:
            off.add(parent)
    return {str(e.get("id")) for e in branch if e.get("id") in off}


def observations(
    branch: Sequence[Entry], session_id: str, forks: set[str] | frozenset[str] = frozenset()
) -> Iterator[Observation]:
    """The branch's observations in order (the session header is skipped). Markers and
    boots that name no window of ``session_id`` are ``foreign``: copied or planted, never
    written by this session's lifecycle, so no step of a spec is asked to explain them.
    After an entry of ``forks`` (:func:`fork_points`) comes a ``navigation``."""
    marker_window: str | None = None
    i, n = 0, len(branch)
    while i < n:
        entry = branch[i]
        eid = str(entry.get("id", ""))
        role = _role(entry)
        if role == "assistant":
            assistant = _message(entry) or {}
            j = i + 1
            results: list[dict[str, Any]] = []
            while j < n and _role(branch[j]) == "toolResult":
                results.append(_message(branch[j]) or {})
                j += 1
            k = j  # the turn's drafts: warnings and reminders written with its end
            warned = False
            while k < n and (
                _is_warning(_custom_type(branch[k])) or is_kind(_custom_type(branch[k]), GUIDANCE)
            ):
                if _is_warning(_custom_type(branch[k])):
                    warned = warned or _warning_source(branch[k]) == "budget"
                k += 1
            stop = assistant.get("stopReason")
            aborted = stop == "aborted"
            overflow = not aborted and is_context_overflow(assistant)
            yield Observation(
                "turn-start", eid, {"aborted": aborted, "warned": warned, "stop": stop}
            )
            for m, result in enumerate(results):
                yield Observation(
                    "tool",
                    str(branch[i + 1 + m].get("id", "")),
                    {"tool": result.get("toolName"), "status": _status(result)},
                )
            yield Observation(
                "turn-end",
                eid,
                {
                    "aborted": aborted,
                    "failed": stop == "error" or overflow,
                    "overflow": overflow,
                    "usage": _turn_usage(assistant, results),
                },
            )
            if any(str(e.get("id")) in forks for e in branch[i:j]):
                yield Observation("navigation", str(branch[j - 1].get("id", "")), {"fork": True})
            i = j
            continue
        kind: str | None = None
        attrs: dict[str, Any] = {}
        custom = _custom_type(entry)
        artifact = artifact_kind(entry)
        if role == "user":
            kind = "user"
        elif role == "toolResult":
            message = _message(entry) or {}
            kind, attrs = "tool", {"tool": message.get("toolName"), "status": _status(message)}
        elif artifact in ("marker", "boot") and not (
            (artifact == "boot" or is_reset_marker(entry)) and _ours(entry, session_id)
        ):
            kind, attrs = "foreign", {"artifact": artifact}
        elif artifact == "marker":
            marker_window = marker_window_id(entry)
            kind, attrs = "marker", {"window": marker_window}
        elif artifact == "boot":
            window = _details(entry).get("windowId")
            own = marker_window is not None and is_window_boot_entry(entry, marker_window)
            kind, attrs = "boot", {"window": window, "of_marker": own}
        elif artifact == "continuation":
            kind = "continuation"
        elif _is_warning(custom):
            kind, attrs = "warning", {"source": _warning_source(entry)}
        elif is_kind(custom, GUIDANCE):
            kind = "reminder"
        elif _checkpoint(branch, i, session_id):
            kind = "checkpoint"
        elif entry.get("type") == "branch_summary":
            kind = "navigation"
        if kind is not None:
            yield Observation(kind, eid, attrs)
        if eid in forks:
            yield Observation("navigation", eid, {"fork": True})
        i += 1
    yield Observation("end", "")
