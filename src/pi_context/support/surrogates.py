"""Lone UTF-16 surrogates: text JavaScript can hold and UTF-8 cannot encode.

Node's ``JSON.stringify`` writes an emoji cut in half as a ``\\ud83d`` escape, and Python
decodes that escape to a ``str`` no UTF-8 stream accepts: printing it, or encoding it for a
file name or a pipe, raises. Every text that leaves the process through a UTF-8 channel passes
``escape`` first, which spells each lone surrogate as the six characters ``\\udXXX`` (the way
JSON and JavaScript spell it) and joins a split pair into the character it encodes. Text
without surrogates is returned as it is, after one scan.
"""

from __future__ import annotations

import re

SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined(match: re.Match[str]) -> str:
    pair = match[0]
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def _spelt(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def escape(text: str) -> str:
    """``text`` with every lone surrogate spelt ``\\udXXX`` and split pairs joined."""
    if SURROGATE.search(text) is None:
        return text
    return SURROGATE.sub(_spelt, _PAIR.sub(_joined, text))


def has_lone(text: str) -> bool:
    """Whether ``text`` holds a surrogate that is not half of a pair."""
    if SURROGATE.search(text) is None:
        return False
    return SURROGATE.search(_PAIR.sub(_joined, text)) is not None
