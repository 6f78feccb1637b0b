"""The lines a reader wants, found while a session file is read (``Session.open(marks=...)``).

A reader that needs a few entries of a large file (a first history search,
``history/first.py``) names byte strings and patterns that every line it wants holds, and
tests for the lines of a few entry types. The strings and patterns are searched in each chunk
of the file as it is read (``support.regular.bounded_reader``'s ``watch``): one pass at the
speed of a byte search, not a call per line. The loader then marks each line a match starts
in, each line of a tested type its test accepts, and every line it decodes whole
(``store._parse_lines``): the reader looks at those entries only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

LineTest = Callable[[bytes], bool]


class Marks:
    """What a reader wants of a file's lines, and where the searched bytes were found.

    ``needles`` are byte strings, ``patterns`` regular expressions over bytes matching at
    most ``PATTERN_MAX`` bytes; none may match across a newline (a match marks the line it
    starts in). ``by_kind`` maps an entry ``type`` to a test of its line's bytes.
    ``starts`` holds the file offsets where a match starts, ascending, as far as the file
    has been read, then ``END``: every match found while the loader reads a line starts at
    or after that line, so the loader walks ``starts`` with one index, never past ``END``."""

    END = 1 << 62

    PATTERN_MAX = 16

    __slots__ = ("by_kind", "starts", "needles", "patterns", "_carry", "_offset", "_overlap")

    def __init__(
        self,
        needles: tuple[bytes, ...],
        patterns: tuple[re.Pattern[bytes], ...] = (),
        by_kind: Mapping[str, LineTest] | None = None,
    ) -> None:
        if any(not needle or b"\n" in needle for needle in needles):
            raise ValueError("a needle is a non-empty byte string without a newline")
        self.by_kind: Mapping[str, LineTest] = by_kind or {}
        self.starts: list[int] = [self.END]
        # A needle that holds another is found where that one is: only the other is sought.
        self.needles = tuple(
            needle
            for needle in dict.fromkeys(needles)
            if not any(other in needle and other != needle for other in needles)
        )
        self.patterns = patterns
        self._carry = b""  # the end of the chunk before: a match may begin there
        self._offset = 0  # the file offset of the next chunk
        self._overlap = max([self.PATTERN_MAX, *map(len, needles)]) - 1

    def watch(self, chunk: memoryview) -> None:
        """Search the next chunk of the file (and where it meets the one before)."""
        carry, offset = self._carry, self._offset
        joint = carry + chunk[: self._overlap].tobytes()
        data = chunk.tobytes() if self.needles else b""  # ``find`` takes no view
        found: list[int] = []
        for needle in self.needles:
            for start in _finds(joint, needle):  # only those that begin before the chunk
                if start < len(carry) < start + len(needle):
                    found.append(offset - len(carry) + start)
            found += [offset + start for start in _finds(data, needle)]
        for pattern in self.patterns:
            for match in pattern.finditer(joint):
                if match.start() < len(carry) < match.end():
                    found.append(offset - len(carry) + match.start())
            found += [offset + match.start() for match in pattern.finditer(chunk)]
        if found:
            starts = self.starts
            starts[-1:] = found
            starts.sort()  # a few, mostly in order: a short sort
            starts.append(self.END)
        self._offset = offset + len(chunk)
        self._carry = (carry + chunk[-self._overlap :].tobytes())[-self._overlap :]


def _finds(data: bytes, needle: bytes) -> list[int]:
    """Where ``needle`` starts in ``data`` (overlapping occurrences too)."""
    starts: list[int] = []
    at = data.find(needle)
    while at >= 0:
        starts.append(at)
        at = data.find(needle, at + 1)
    return starts
