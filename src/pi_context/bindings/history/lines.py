"""An entry line as the history index reads it: the few fields it needs, and its items as rows.

The index build reads every line of the file once, so it decodes each straight into a typed
``EntryLine`` (``msgspec`` skips the fields nobody reads and builds no dict for the entry or its
message) and extracts every item's text at once (``entry_rows``), skipping the lazy ``Item``
objects of the projection. A line the typed decoder refuses (a ``message`` that is not an
object, or anything the fast decoder leaves to the careful parser) is parsed as the loader
parses it and turned into the same ``EntryLine`` (``entry_line``). A property test holds the
rows to ``entry_items`` and the typed decoding to the plain one, on arbitrary entries.
"""

from __future__ import annotations

from typing import Any

import msgspec

from pi_context.bindings.session.decoders import bounded

from .items import (
    ROLE_CODES,
    ROLES,
    _str_or_empty,
    arguments_json,
    bash_text,
    custom_role,
    has_extension_details,
)

_USER, _ASSISTANT, _TOOL, _TOOL_CALL, _SYSTEM, _DEVELOPER = range(len(ROLES))

Row = tuple[int, str, str, str | None]
"""One item as the index stores it: role code (index into ROLES), item id, content, tool name."""


class Block(msgspec.Struct):
    """The fields of a content block that items are made of (any JSON value each): the rest
    of a block (a thinking text, its signature, an image's data) is skipped, never built."""

    type: Any = None
    text: Any = None
    name: Any = None
    arguments: Any = None


Content = str | list[Block] | None
"""A message content as the typed decoder takes it; any other shape (a number, an object, a
list holding anything but objects) sends the line to the careful path, which builds the
same ``Block`` of each object in the list and keeps anything else as it is (never an item)."""


class Message(msgspec.Struct):
    """The fields of an entry's ``message`` that items are made of (any JSON value each, but
    ``content``: see ``Content``)."""

    role: Any = None
    content: Content = None
    toolName: Any = None  # noqa: N815 - the session format's field names
    command: Any = None
    output: Any = None
    customType: Any = None  # noqa: N815


class EntryLine(msgspec.Struct):
    """The fields of an entry line the index reads (any JSON value each; absent reads None)."""

    type: Any = None
    id: Any = None
    parentId: Any = None  # noqa: N815
    timestamp: Any = None
    customType: Any = None  # noqa: N815
    content: Content = None
    summary: Any = None
    details: Any = None
    message: Message | None = None  # None too when the loader's value is not an object


DECODE_ENTRY_PLAIN = msgspec.json.Decoder(EntryLine).decode
"""``DECODE_ENTRY`` without the depth check: for a caller that checks it first."""
DECODE_ENTRY = bounded(DECODE_ENTRY_PLAIN)
"""A line as an ``EntryLine``; raises ``msgspec.DecodeError`` (or ``ValidationError``, a
subclass, or ``JSONLimitError`` for a line nested past the limit) where the caller must fall
back to ``entry_line`` of the loader's value."""


def entry_line(value: dict[str, Any]) -> EntryLine:
    """The ``EntryLine`` of an entry the loader parsed."""
    get = value.get
    message = get("message")
    return EntryLine(
        type=get("type"),
        id=get("id"),
        parentId=get("parentId"),
        timestamp=get("timestamp"),
        customType=get("customType"),
        content=_blocks(get("content")),
        summary=get("summary"),
        details=get("details"),
        message=(
            Message(
                role=message.get("role"),
                content=_blocks(message.get("content")),
                toolName=message.get("toolName"),
                command=message.get("command"),
                output=message.get("output"),
                customType=message.get("customType"),
            )
            if type(message) is dict
            else None  # items of a message that is not an object: none, as for a missing one
        ),
    )


def _blocks(content: Any) -> Any:
    """A parsed content as ``Content`` holds it: each object of a list as a ``Block``."""
    if type(content) is not list:
        return content
    return [
        Block(
            type=block.get("type"),
            text=block.get("text"),
            name=block.get("name"),
            arguments=block.get("arguments"),
        )
        if type(block) is dict
        else block
        for block in content
    ]


def _text(content: object) -> str:
    """``items._text_of`` of a ``Content``: a string, or its non-empty text blocks, a line each."""
    if type(content) is str:
        return content
    if type(content) is list:
        if len(content) == 1:  # the usual shape, one text block: no list to build and join
            block = content[0]
            if type(block) is Block and block.type == "text":
                text = block.text
                return text if type(text) is str else ""
        return "\n".join(
            [
                text
                for block in content
                if type(block) is Block
                and block.type == "text"
                and type(text := block.text) is str
                and text
            ]
        )
    return ""


def entry_rows(entry: EntryLine) -> list[Row]:
    """The items ``entry_items(entry, None, "")`` gives for this line, as rows."""
    entry_id = entry.id
    if not isinstance(entry_id, str):
        return []
    entry_type = entry.type
    if entry_type == "message":
        message = entry.message
        if message is None:
            return []
        role = message.role
        if role == "user":
            return [(_USER, entry_id, _text(message.content), None)]
        if role == "toolResult":
            name = message.toolName
            text = _text(message.content)
            return [(_TOOL, entry_id, text, name if isinstance(name, str) else "")]
        if role == "assistant":
            return _assistant_rows(entry_id, message.content)
        if role == "bashExecution":
            return [(_TOOL, entry_id, bash_text(message.command, message.output), "bash")]
        if role == "custom":
            code = ROLE_CODES[custom_role(message.customType)]
            return [(code, entry_id, _text(message.content), None)]
        return []
    if entry_type == "custom_message":
        code = ROLE_CODES[custom_role(entry.customType)]
        return [(code, entry_id, _text(entry.content), None)]
    if entry_type == "compaction":
        # The checkpoint before a reset marker is flipped to developer later (index._FLIP).
        code = _DEVELOPER if has_extension_details(entry.details) else _SYSTEM
        return [(code, entry_id, _str_or_empty(entry.summary), None)]
    if entry_type == "branch_summary":
        return [(_SYSTEM, entry_id, _str_or_empty(entry.summary), None)]
    return []


def _assistant_rows(entry_id: str, content: object) -> list[Row]:
    if not isinstance(content, list):
        return [(_ASSISTANT, entry_id, _text(content), None)]
    # One pass over the blocks: the visible text, whether any text block is set, the calls.
    texts: list[str] = []
    rows: list[Row] = []
    has_text = False
    for block in content:
        if type(block) is not Block:
            continue
        kind = block.type
        if kind == "text":
            text = block.text
            if text:
                has_text = True
                if isinstance(text, str):
                    texts.append(text)
        elif kind == "toolCall":
            name = block.name
            rows.append(
                (
                    _TOOL_CALL,
                    f"{entry_id}#{len(rows)}",
                    arguments_json(block.arguments),
                    name if isinstance(name, str) else "",
                )
            )
    if rows and not has_text:
        return rows
    return [(_ASSISTANT, entry_id, "\n".join(texts), None), *rows]
