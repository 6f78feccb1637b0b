"""Pi's token estimate of a context: the last usable assistant usage, plus chars/3.5 for every
message after it, over the messages as the LLM sees them (``to_llm``, Pi's ``convertToLlm``).
Pure functions over message dicts, and the active window's usage after a reset (``window_usage``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from .jsonl import encode
from .windows import MissingBootError, current_reset, marker_window_id, project_window

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]
    Message = dict[str, Any]


_CHARS_PER_TOKEN = 3.5
_IMAGE_CHARS = 4800
_COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
_COMPACTION_SUFFIX = "\n</summary>"
_BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
_BRANCH_SUFFIX = "</summary>"


def _js_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return _js_len(content)
    chars = 0
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            chars += _js_len(str(block.get("text", "")))
        else:
            chars += _IMAGE_CHARS
    return chars


def _system_text(message: Message) -> str:
    content = message.get("content")
    parts = [
        content
        if isinstance(content, str)
        else "\n".join(
            b.get("text", "")
            for b in content or []
            if isinstance(b, dict) and b.get("type") == "text"
        )
    ]
    sections = message.get("sections")
    if isinstance(sections, dict):
        parts.extend(v for v in sections.values() if isinstance(v, str))
    return "\n\n".join(p for p in parts if p)


def _tools_tokens(tools: Any) -> int:
    if not tools:
        return 0
    return math.ceil(_js_len(encode(tools)) / _CHARS_PER_TOKEN)


def _message_tokens(message: Message) -> int:
    role = message.get("role")
    if role == "system":
        return (
            math.ceil(_js_len(_system_text(message)) / _CHARS_PER_TOKEN)
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(message.get("content")) / _CHARS_PER_TOKEN)
    chars = 0
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            chars += _js_len(str(block.get("text", "")))
        elif block.get("type") == "thinking":
            chars += _js_len(str(block.get("thinking", "")))
        else:
            chars += _js_len(str(block.get("name", ""))) + _js_len(
                json.dumps(block.get("arguments"), ensure_ascii=False, separators=(",", ":"))
            )
    return math.ceil(chars / _CHARS_PER_TOKEN)


def to_llm(messages: Sequence[Message]) -> list[Message]:
    """Pi's ``convertToLlm``: session-only roles become user text; unknown roles are dropped."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role == "bashExecution":
            if m.get("excludeFromContext"):
                continue
            out.append({"role": "user", "content": [{"type": "text", "text": _bash_text(m)}]})
        elif role == "custom":
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            out.append({"role": "user", "content": blocks, "timestamp": m.get("timestamp")})
        elif role == "branchSummary":
            text = _BRANCH_PREFIX + str(m.get("summary")) + _BRANCH_SUFFIX
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif role == "compactionSummary":
            text = _COMPACTION_PREFIX + str(m.get("summary")) + _COMPACTION_SUFFIX
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(m)
    return out


def _bash_text(m: Message) -> str:
    text = f"Ran `{m.get('command')}`\n"
    output = m.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif m.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {m.get('exitCode')}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m.get('fullOutputPath')}]"
    return text


def _usage_tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens")
    if isinstance(total, int | float) and total:
        return int(total)
    return int(sum(usage.get(k, 0) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")))


def estimate_tokens(messages: Sequence[Message]) -> int:
    """Context tokens: the last usable assistant usage plus estimates for what follows it."""
    llm = to_llm(messages)
    latest_prefix = -math.inf
    anchor: tuple[int, int] | None = None
    for index, m in enumerate(llm):
        stamp = m.get("timestamp")
        stamp_value = stamp if isinstance(stamp, int | float) else math.nan
        if m.get("role") == "assistant":
            applies = not (stamp_value < latest_prefix) and not math.isnan(stamp_value)
            tokens = _usage_tokens(m.get("usage"))
            if applies and m.get("stopReason") not in ("aborted", "error") and tokens > 0:
                anchor = (index, tokens)
        if not math.isnan(stamp_value):
            latest_prefix = max(latest_prefix, stamp_value)
    if anchor is not None:
        index, tokens = anchor
        return tokens + sum(_message_tokens(m) for m in llm[index + 1 :])
    return sum(_message_tokens(m) for m in llm)


def window_usage(
    branch: Sequence[Entry], messages: Sequence[Message], session_id: str
) -> int | None:
    """Estimated tokens of the active window after a reset (None while its boot is missing)."""
    marker = current_reset(branch)
    if marker is None:
        return estimate_tokens(messages)
    try:
        return estimate_tokens(project_window(messages, marker_window_id(marker)))
    except MissingBootError:
        return None
