"""Is a failed (or suspiciously full) assistant reply a provider context overflow?

Providers word it differently; these patterns cover the common phrasings. A reply that
stopped normally but reports more input than the window holds is a silent overflow, and a
``length`` stop with no output and a full window means the provider truncated the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_OVERFLOW = re.compile(
    "|".join(
        (
            r"prompt (?:is )?too long",
            r"exceeds the context window",
            r"context window (?:exceeded|exceeds)",
            r"maximum context length",
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
            r"input is too long",
            r"request_too_large",
            r"longer than the model'?s context length",
            r"exceeds (?:the )?maximum (?:allowed )?input length",
            r"greater than the context length",
            r"reduce the length of the messages",
        )
    ),
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(r"rate limit|too many requests|service unavailable", re.IGNORECASE)


def _input_tokens(message: Mapping[str, Any]) -> int:
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return 0
    total = 0
    for key in ("input", "cacheRead"):
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            total += int(value)
    return total


def is_context_overflow(message: Any, context_window: int | None = None) -> bool:
    if not isinstance(message, Mapping):
        return False
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    if (
        stop == "error"
        and isinstance(error, str)
        and not _NOT_OVERFLOW.search(error)
        and _OVERFLOW.search(error)
    ):
        return True
    if context_window:
        if stop == "stop" and _input_tokens(message) > context_window:
            return True
        usage = message.get("usage")
        output = usage.get("output") if isinstance(usage, Mapping) else None
        if stop == "length" and output == 0 and _input_tokens(message) >= context_window * 0.99:
            return True
    return False
