"""Pure list ordering and literal search over note bodies."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from pi_context.bindings.notes.records import NoteRecord
from pi_context.support.frozen import frozen
from pi_context.support.gc_pause import gc_paused


def list_order(records: Sequence[NoteRecord]) -> list[NoteRecord]:
    """Most recently updated first; equal times by path, then by scope name."""
    # Stable sorts on single attributes, least significant first (no key tuple per record).
    with gc_paused():
        ordered = sorted(records, key=attrgetter("scope"))
        ordered.sort(key=attrgetter("path"))
        ordered.sort(key=attrgetter("meta.updated_at"), reverse=True)
    return ordered


@frozen
class LineMatch:
    line: int
    """1-based line number (lines are split on ``\\n``)."""
    offset_chars: int
    """Body-absolute offset of the earliest query occurrence that starts on this line."""
    text: str
    """The whole line, without its ``\\n``."""


def _line_bounds(body: str, position: int) -> tuple[int, int]:
    start = body.rfind("\n", 0, position) + 1
    end = body.find("\n", position)
    return start, len(body) if end == -1 else end


def match_lines(body: str, queries: Sequence[str]) -> list[LineMatch]:
    """Every line on which some query starts, once per line, in body order.

    Each query is a case-sensitive literal. A line containing several queries (or one query
    several times) is reported once, at its earliest occurrence. The search jumps to the end
    of a matched line, so its cost grows with the matching lines, not the occurrences.
    """
    first_on_line: dict[int, tuple[int, int]] = {}  # line start -> (earliest offset, line end)
    for query in queries:
        position = body.find(query)
        while position != -1:
            start, end = _line_bounds(body, position)
            known = first_on_line.get(start)
            if known is None or position < known[0]:
                first_on_line[start] = (position, end)
            position = body.find(query, end + 1) if end < len(body) else -1
    matches: list[LineMatch] = []
    line = 1
    counted_to = 0
    for start in sorted(first_on_line):
        line += body.count("\n", counted_to, start)
        counted_to = start
        offset, end = first_on_line[start]
        matches.append(LineMatch(line, offset, body[start:end]))
    return matches
