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

import re
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


class _Object(msgspec.Struct, gc=False):
    """Any JSON object (its fields are skipped)."""


class Shape(msgspec.Struct, gc=False):
    """What a lazy load reads of an entry line (``lazy.py``): the tree's fields, and whether
    ``message`` is an object (a non-object one fails the read: the line is decoded whole)."""

    type: Any = None
    id: Any = None
    parentId: Any = None
    message: _Object | None = None


READ_SHAPE: Callable[[bytes], Shape] = msgspec.json.Decoder(Shape).decode
"""A line's ``Shape``. It checks the line's JSON syntax whole, but not the UTF-8 of what it
skips nor whether a skipped number fits a double: the caller checks the first, and the careful
parse decodes the second as the fast decoder would refuse it (Infinity, as JS)."""

_LONE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def read_shape_of_escaped(line: bytes) -> Shape | None:
    """The ``Shape`` of a line ``READ_SHAPE`` refused for surrogate escapes (which ``msgspec``
    refuses and JS takes), read from a copy with each replaced by U+FFFD; None where a field
    read might hold a replaced escape or the copy is refused too."""
    try:
        shape = READ_SHAPE(_LONE_SURROGATE.sub(rb"\\ufffd", line))
    except FAST_DECODE_ERRORS:
        return None
    for value in (shape.type, shape.id, shape.parentId):
        if value is not None and (type(value) is not str or "\\" in value or "\ufffd" in value):
            return None
    return shape
