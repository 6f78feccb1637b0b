"""Context entries and the model projection, as Pi's ``buildSessionProjection`` computes them.

Pure functions over a root->leaf path of entry dicts. Where Pi would throw on malformed data (an
entry whose ``message`` is not an object, an edit without ``replacement``) these contribute
nothing instead; the loader reports such entries.
"""

from __future__ import annotations

from collections.abc import Sequence

from .jsonl import js_date_ms, js_truthy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]
    Message = dict[str, Any]

EDITABLE_ROLES = ("user", "assistant", "toolResult")


def _message_of(entry: Entry) -> dict[str, Any] | None:
    message = entry.get("message")
    return message if isinstance(message, dict) else None


def _kinds(path: Sequence[Entry]) -> Sequence[Any]:
    """Each entry's ``type``: a ``Branch`` knows them without decoding its entries."""
    from .lazy import Branch  # here: a warm history call reads no branch

    if isinstance(path, Branch):
        return path.kinds()
    return [entry.get("type") for entry in path]


def context_entries(path: Sequence[Entry]) -> list[Entry]:
    """The last compaction on the path, the kept entries before it, then everything after it."""
    kinds = _kinds(path)
    index = len(path) - 1
    while index >= 0 and kinds[index] != "compaction":
        index -= 1  # from the leaf back: only the last compaction matters
    if index < 0:
        return list(path)
    compaction = path[index]
    result = [compaction]
    first_kept = compaction.get("firstKeptEntryId")
    # Ids on a path are distinct, so the kept entry, if any, is found walking back from the
    # compaction (a retain-none compaction names itself: nothing before it is kept).
    start = -1
    if first_kept != compaction.get("id"):
        for back in range(index - 1, -1, -1):
            if path[back].get("id") == first_kept:
                start = back
                break
    if start >= 0:
        for entry in path[start:index]:
            message = _message_of(entry) if entry.get("type") == "message" else None
            if not (message is not None and message.get("role") == "system"):
                result.append(entry)
    result.extend(path[index + 1 :])
    return result


def settings(path: Sequence[Entry]) -> dict[str, Any]:
    """``thinkingLevel`` (default "off") and ``model`` (default None) over the full path.

    A key whose JS value would be ``undefined`` is left out, so encoding matches Pi. The last
    change of each wins, so the walk goes back from the leaf and stops once both are known.
    """
    thinking: Entry | None = None
    model: dict[str, Any] | None = None
    kinds = _kinds(path)
    for index in range(len(path) - 1, -1, -1):
        kind = kinds[index]
        if kind == "thinking_level_change":
            if thinking is None:
                thinking = path[index]
        elif kind == "model_change":
            if model is None:
                model = _pick(path[index], ("provider", "provider"), ("modelId", "modelId"))
        elif kind == "message" and model is None:
            message = _message_of(path[index])
            if message is not None and message.get("role") == "assistant":
                model = _pick(message, ("provider", "provider"), ("modelId", "model"))
        if thinking is not None and model is not None:
            break
    out: dict[str, Any] = {"thinkingLevel": "off", "model": model}
    if thinking is not None:
        if "thinkingLevel" in thinking:
            out["thinkingLevel"] = thinking["thinkingLevel"]
        else:
            out.pop("thinkingLevel")
    return out


def _pick(source: dict[str, Any], *pairs: tuple[str, str]) -> dict[str, Any]:
    return {key: source[src] for key, src in pairs if src in source}


def _custom_message(entry: Entry) -> Message:
    content = entry.get("content")
    message: Message = {"role": "custom"}
    if "customType" in entry:
        message["customType"] = entry["customType"]
    message["content"] = [] if content is None else content
    for key in ("display", "details"):
        if key in entry:
            message[key] = entry[key]
    message["timestamp"] = js_date_ms(entry.get("timestamp", _UNDEFINED_DATE))
    return message


_UNDEFINED_DATE = object()  # new Date(undefined) is NaN, unlike new Date(null)


def entry_messages(entry: Entry) -> list[Message]:
    """Pi's ``sessionEntryToContextMessages`` for one entry."""
    kind = entry.get("type")
    if kind == "message":
        message = _message_of(entry)
        if message is None:
            return []
        role = message.get("role")
        if message.get("content") is None:
            if role == "system":
                return [{**message, "content": ""}]
            if role in EDITABLE_ROLES:
                return [{**message, "content": []}]
        return [message]
    if kind == "custom_message":
        return [_custom_message(entry)]
    if kind == "branch_summary" and js_truthy(entry.get("summary")):
        summary: Message = {"role": "branchSummary", "summary": entry["summary"]}
        if "fromId" in entry:
            summary["fromId"] = entry["fromId"]
        summary["timestamp"] = js_date_ms(entry.get("timestamp", _UNDEFINED_DATE))
        return [summary]
    if kind == "compaction":
        compacted: Message = {"role": "compactionSummary"}
        for key in ("summary", "tokensBefore"):
            if key in entry:
                compacted[key] = entry[key]
        compacted["timestamp"] = js_date_ms(entry.get("timestamp", _UNDEFINED_DATE))
        system: Any = entry.get("systemMessage")  # any truthy JSON, as in Pi
        return [system, compacted] if js_truthy(system) else [compacted]
    return []


def project_entry(entry: Entry, edit: Entry | None) -> list[Message]:
    """One entry's messages with its latest context edit applied."""
    messages = entry_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return [] if "replacement" in edit else messages  # a missing replacement would throw in Pi
    content: Any = (
        replacement.get("content", _MISSING) if isinstance(replacement, dict) else _MISSING
    )
    out: list[Message] = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant", "toolResult", "custom"):
            out.append(message)
            continue
        new = dict(message)
        if content is _MISSING:
            new.pop("content", None)  # {...m, content: undefined} serialises without content
        elif role in ("assistant", "toolResult") and isinstance(content, str):
            new["content"] = [{"type": "text", "text": content}]
        else:
            new["content"] = content
        out.append(new)
    return out


_MISSING = object()


def projection_entries(path: Sequence[Entry]) -> list[tuple[Entry, list[Message]]]:
    """Each context entry with the messages it contributes."""
    selected = context_entries(path)
    edits: dict[Any, Entry] = {}
    for entry in selected:
        if entry.get("type") == "context_edit":
            target = entry.get("targetId")
            if target is None or isinstance(target, str | int | float | bool):
                edits[target] = entry
    result: list[tuple[Entry, list[Message]]] = []
    for index, entry in enumerate(selected):
        if entry.get("type") == "compaction" and index > 0:
            result.append((entry, []))  # only the newest compaction summarises
        else:
            result.append((entry, project_entry(entry, edits.get(entry.get("id")))))
    return result


def projection(path: Sequence[Entry]) -> dict[str, Any]:
    """``{"messages", "thinkingLevel", "model"}`` for a root->leaf path."""
    messages = [m for _, msgs in projection_entries(path) for m in msgs]
    out: dict[str, Any] = {"messages": messages}
    out.update(settings(path))
    return out


def current_system_message(messages: Sequence[Any]) -> Message | None:
    """Pi's ``getCurrentSystemMessage``: fold every system message into one.

    Later content is appended, sections are patched by name (null deletes), tools resolve through
    toolsAdded/toolsRemoved; the first system message's timestamp is kept.
    """
    content: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = _MISSING
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "system":
            continue
        if timestamp is _MISSING or timestamp is None:
            timestamp = message.get("timestamp", _MISSING)
        text = text_blocks(message.get("content"))
        if text:
            content.append(text)
        patch = message.get("sections")
        if isinstance(patch, dict):
            for name, value in patch.items():
                if value is None:
                    sections.pop(name, None)
                else:
                    sections[name] = value
        for tool in _list(message.get("toolsRemoved")):
            if isinstance(tool, dict):
                tools.pop(tool.get("name"), None)
        for tool in _list(message.get("toolsAdded")):
            if isinstance(tool, dict):
                tools[tool.get("name")] = tool
    if timestamp is _MISSING and not tools:
        return None
    folded: Message = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        folded["sections"] = sections
    if tools:
        folded["toolsAdded"] = list(tools.values())
    folded["timestamp"] = 0 if timestamp is _MISSING or timestamp is None else timestamp
    return folded


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def text_blocks(content: Any, separator: str = "\n") -> str:
    """The text of message content: a string as is, else its text blocks joined by ``separator``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return separator.join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )
