"""Share repeated short values between parsed entries.

A parsed line is a fresh tree of dicts and strings: every entry's ``"message"``, every block's
``"text"``, every ``"assistant"`` and model name is its own string object. V8 shares such values;
CPython's decoders do not, and at 400k entries the copies cost about 100 MiB. This pass swaps
the values of a few known enum-like keys (entry/message/block kinds, roles, model, provider
and tool names) for one shared object per distinct value. Only equal strings are swapped, so
the data and its encoding are unchanged; the table lives for one load.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


def share_values(entry: dict[str, Any], shared: dict[str, str]) -> Any:
    """Replace known repeated string values in ``entry`` by the equal copy held in ``shared``;
    return its ``type`` (None when absent), which the load looks at next.

    Written out key by key: this runs once per line of a load, and a loop over key names costs
    half as much again as the decoding itself."""
    keep = shared.setdefault
    kind = entry.get("type")
    if type(kind) is str:
        entry["type"] = kind = keep(kind, kind)
    message = entry.get("message")
    if type(message) is dict:
        value = message.get("role")
        if type(value) is str:
            message["role"] = role = keep(value, value)
            if role == "toolResult":
                value = message.get("toolName")
                if type(value) is str:
                    message["toolName"] = keep(value, value)
        if "model" in message:  # assistant messages
            for key in ("api", "provider", "model", "stopReason"):
                value = message.get(key)
                if type(value) is str:
                    message[key] = keep(value, value)
        content = message.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is dict:
                    value = block.get("type")
                    if type(value) is str:
                        block["type"] = value = keep(value, value)
                        if value == "toolCall":  # the tool's name: a handful of values
                            value = block.get("name")
                            if type(value) is str:
                                block["name"] = keep(value, value)
        return kind
    for key in ("customType", "thinkingLevel", "provider", "modelId"):
        value = entry.get(key)
        if type(value) is str:
            entry[key] = keep(value, value)
    return kind


def share_keys(entry: dict[str, Any], shared: dict[str, str]) -> dict[str, Any]:
    """``entry`` with its keys (and its message's and content blocks' keys) shared.

    For lines the fast decoder refuses: Python's ``json`` makes fresh key strings for every
    object (its key memo lives for one call), where ``msgspec`` reuses cached ones."""
    keep = shared.setdefault
    message = entry.get("message")
    if type(message) is dict:
        content = message.get("content")
        if type(content) is list:
            message["content"] = [
                {keep(k, k): v for k, v in block.items()} if type(block) is dict else block
                for block in content
            ]
        entry["message"] = {keep(k, k): v for k, v in message.items()}
    return {keep(k, k): v for k, v in entry.items()}
