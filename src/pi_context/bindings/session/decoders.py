"""The fast line decoder: ``msgspec``, for the readers of many lines.

``msgspec`` parses a well-formed line several times faster than ``json`` and gives the same
values (exact big integers, the last duplicate key wins); it refuses what needs care (invalid
UTF-8, lone surrogate escapes, a byte-order mark, NaN, numbers that overflow a double), and
those lines take ``jsonl.parse``. It lives apart from ``jsonl`` because importing it (with
what it imports: ``inspect``, ``ast``, ``uuid``, ``decimal``) costs ~15 ms, which a call that
reads no line (a warm history search from the command line) does not pay: the loaders import
this module when they start reading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from pi_context.support.jsonlimits import deeper_than, depth_error

Decode = Callable[[bytes], Any]


def bounded(decode: Decode) -> Decode:
    """``decode`` refusing a line that nests deeper than the limit (``JSONLimitError``, a
    ``ValueError``: callers fall back to ``jsonl.parse``, which names the limit) before it
    runs."""

    def decode_bounded(line: bytes) -> Any:
        if deeper_than(line):
            raise depth_error()
        return decode(line)

    return decode_bounded


DECODE_PLAIN = msgspec.json.Decoder().decode
"""The fast decoder without the depth check: only for a caller that checks it first."""
FAST_DECODE = bounded(DECODE_PLAIN)
"""One line's value, refusing a line nested deeper than the limit before it runs."""
FAST_DECODE_ERRORS = (msgspec.DecodeError, RecursionError, ValueError, TypeError)
"""What the fast decoders raise where the careful parse (``jsonl.parse``) must decide."""
