"""Appending entries to a session, one per kind of Pi entry (Pi's key order matters: it is
the byte order on disk), and a boundary draft applied as the append it names."""

from __future__ import annotations

import re
from typing import Any

from . import context as ctx
from .errors import SessionError
from .ids import Entry
from .state import _State


class _Appends(_State):
    """The appends of a ``Session`` (which is one)."""

    # -----------------------------------------------------------------------------------------
    # appends (Pi's key order matters: it is the byte order on disk)

    def append_message(self, message: dict[str, Any]) -> str:
        if not isinstance(message, dict):
            raise SessionError("a message must be a JSON object")
        entry = self._base("message")
        entry["message"] = message
        return self._append_entry(entry)

    def append_thinking_level_change(self, level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return self._append_entry(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append_entry(entry)

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Any, note: str | None = None
    ) -> str:
        entry = self._base("usage")
        entry.update(kind=kind, provider=provider, model=model, usage=usage)
        if note:
            entry["note"] = note
        return self._append_entry(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """A compaction; ``first_kept_entry_id=None`` retains nothing (stored as its own id)."""
        timestamp = self._timestamp()
        system = ctx.current_system_message(self.projection()["messages"])
        entry_id = self._new_entry_id()
        entry: Entry = {
            "type": "compaction",
            "id": entry_id,
            "parentId": self._leaf_id,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": entry_id if first_kept_entry_id is None else first_kept_entry_id,
            "tokensBefore": tokens_before,
        }
        for key, value in (("details", details), ("usage", usage), ("fromHook", from_hook)):
            if value is not None:
                entry[key] = value
        if system is not None:
            from .jsonl import js_date_ms

            entry["systemMessage"] = {**system, "timestamp": js_date_ms(timestamp)}
        return self._append_entry(entry)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        entry: Entry = {"type": "custom", "customType": custom_type}
        if data is not None:
            entry["data"] = data
        base = self._base("custom")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self._append_entry(entry)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool, details: Any = None
    ) -> str:
        entry: Entry = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if details is not None:
            entry["details"] = details
        base = self._base("custom_message")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        from .jsonl import js_trim

        entry = self._base("session_info")
        entry["name"] = js_trim(re.sub(r"[\r\n]+", " ", name))
        return self._append_entry(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with None/"" clear) the label of an entry."""
        if target_id not in self._by_id:
            raise SessionError(f"entry {target_id} not found", self._path)
        entry = self._base("label")
        entry["targetId"] = target_id
        if label is not None:
            entry["label"] = label
        entry_id = self._append_entry(entry)
        if label:
            self._labels[target_id] = label
            self._label_stamps[target_id] = entry["timestamp"]
        else:
            self._labels.pop(target_id, None)
            self._label_stamps.pop(target_id, None)
        return entry_id

    def append_context_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        """A branch-local edit of an earlier model-visible entry (None removes it)."""
        if replacement is not None and (
            not isinstance(replacement, dict)
            or "content" not in replacement
            or not isinstance(replacement["content"], str | list)
        ):
            raise SessionError("context edit replacement must be None or {'content': str | list}")
        target = self._by_id.get(target_id)
        if target is None:
            raise SessionError(f"entry {target_id} not found", self._path)
        # From the leaf back: an edit names a recent entry, and a lazy branch decodes only
        # the entries it passes (``lazy.py``).
        if not any(e is target or e.get("id") == target_id for e in reversed(self.branch())):
            raise SessionError(f"entry {target_id} is not on the active branch", self._path)
        message = target.get("message") if target.get("type") == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        if not (target.get("type") == "custom_message" or role in ctx.EDITABLE_ROLES):
            raise SessionError(
                f"entry {target_id} does not contribute editable model content", self._path
            )
        normalized = replacement
        if (
            replacement is not None
            and role in ("assistant", "toolResult")
            and isinstance(replacement["content"], str)
        ):
            normalized = {"content": [{"type": "text", "text": replacement["content"]}]}
        entry = self._base("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = normalized
        return self._append_entry(entry)


def _apply_draft(session: _Appends, draft: dict[str, Any]) -> str:
    if not isinstance(draft, dict):
        raise SessionError("a draft must be a JSON object")
    kind = draft.get("type")
    if kind == "custom":
        return session.append_custom(_str(draft, "customType"), draft.get("data"))
    if kind == "custom_message":
        return session.append_custom_message(
            _str(draft, "customType"),
            draft.get("content"),
            bool(draft.get("display")),
            draft.get("details"),
        )
    if kind == "context_edit":
        return session.append_context_edit(_str(draft, "targetId"), draft.get("replacement"))
    if kind == "compaction":
        first_kept = draft.get("firstKeptEntryId")
        if first_kept is not None and not isinstance(first_kept, str):
            raise SessionError("compaction draft firstKeptEntryId must be a string or null")
        tokens = draft.get("tokensBefore")
        if tokens is None:
            from .usage import estimate_tokens

            tokens = estimate_tokens(session.projection()["messages"])
        return session.append_compaction(
            str(draft.get("summary", "")),
            first_kept,
            tokens,
            draft.get("details"),
            True,
            draft.get("usage"),
        )
    if kind == "message":
        return session.append_message(draft.get("message"))  # type: ignore[arg-type]
    if kind == "label":
        return session.append_label(_str(draft, "targetId"), draft.get("label"))
    if kind == "session_info":
        return session.append_session_info(_str(draft, "name"))
    if kind == "model_change":
        return session.append_model_change(_str(draft, "provider"), _str(draft, "modelId"))
    if kind == "thinking_level_change":
        return session.append_thinking_level_change(_str(draft, "thinkingLevel"))
    raise SessionError(f"unsupported draft type {kind!r}")


def _str(draft: dict[str, Any], key: str) -> str:
    value = draft.get(key)
    if not isinstance(value, str):
        raise SessionError(f"{draft.get('type')} draft needs a string {key!r}")
    return value
