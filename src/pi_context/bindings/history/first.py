"""A first ``history_search`` answered from the session file, before the history index exists.

Building the index decodes every line of the file (about 0.8 s at 100k entries); a long-lived
host's first search (``resident.first_answer_due``) is answered without it, and the index is
built after the answer (``resident.build_later``). The file is loaded lazily (each line's
shape only, ``session.lazy``) and, while it is read, its bytes are searched for what the few
lines that can matter hold (``search_marks``, ``session.marks``): those that may hold an item
a query matches, and those that may be a reset marker or a boot (they name the windows). Only
those entries are decoded. The answer is the unindexed path's, byte for byte; where it cannot be
had this cheaply, ``first_search`` gives None and the caller answers as before: a page that
needs a newest-first cursor (a cursor names an item by its position among all items), a
query too short to rule lines out, a file that is not clean, a branch other than the file's.

Why a line's bytes can rule it out. An item's content is one of:

* text: a JSON string of the line, or several joined by ``\\n`` (text blocks; a bash run is
  ``$ `` + command + ``\\n`` + output);
* a tool call's arguments re-encoded as ``JSON.stringify`` writes them (``items``).

In a line with no ``\\u`` escape and no ``\\/``, every JSON string is spelt as
``JSON.stringify`` spells it, one character at a time: a piece of text without ``\\n`` that a
string holds appears in the line as that function's spelling of it. A query found in a text
has such a piece (one of its ``\\n``-separated segments; the first may begin in the ``$ ``
that starts a bash run, so that segment counts with the prefix taken off too). A query found
in re-encoded arguments has a run without ``"{}[]:,`` that lies inside one JSON token; if the
run holds a character no number has, that token is a string (spelt as in the line) or a
literal, so the run's bytes appear in the line, once what may be the end of an escape that
``JSON.stringify`` wrote is cut from its start (the line may spell that character otherwise).
A line with ``\\u`` escapes is kept when one of them could spell a character of a needle
(any of them, when a needle holds a backslash), a line with ``\\/`` when a needle holds
``/``. ``tests/history/test_first_search.py`` holds the answers to the unindexed path's on
generated sessions and on each of these spellings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from pi_context.bindings.session.errors import SessionError
from pi_context.bindings.session.jsonl import encode as stringify
from pi_context.bindings.session.marks import Marks
from pi_context.bindings.session.session import Session
from pi_context.bindings.session.windows import root_window_id, spans_of
from pi_context.bindings.tool_output import JSONValue, page

from .cursors import key_of
from .items import History, Item, history_of
from .query import (
    HistoryError,
    Rendered,
    first_match,
    parse_filters,
    parse_max_chars,
    parse_paging,
    parse_queries,
    render_item,
    select_positions,
    shrink_item,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from pi_context.bindings.session.lazy import Branch

SHORTEST_NEEDLE = 3
"""Bytes: a query whose best needle is shorter rules out too few lines to pay (the index is
built first, as before)."""
MARKED_SHARE = 20
MARKED_FEW = 1_000
"""When more than one entry in ``MARKED_SHARE`` (and more than ``MARKED_FEW``) must be
decoded, the index is built first instead."""
WIDEST_CURSOR = len(key_of(10**18 - 1, "")) + 2
"""The most bytes a newest-first cursor can take (its position has at most 18 digits)."""

_STRUCTURAL = re.compile(r'["{}\[\]:,]')
_NUMERIC = frozenset("0123456789.eE+-")
_ESCAPE_TAIL = re.compile(r"u?[0-9a-f]{0,4}")
_TOOL_CALL = "toolCall"  # the block type of a call: its arguments are re-encoded
_BASH_PREFIX = "$ "
_ANY_ESCAPE = re.compile(rb"\\u")
_SLASH_ESCAPE = re.compile(rb"\\/")


class _NeedsPosition(Exception):
    """The page needs a newest-first cursor, which only the index can give."""


def spelt(text: str) -> bytes:
    """``text`` as ``JSON.stringify`` spells it inside a string, in UTF-8."""
    return stringify(text)[1:-1].encode("utf-8")


def _text_needles(query: str) -> list[str] | None:
    """The pieces of ``query`` one of which a text holding it spells in its line: the best of
    its ``\\n``-separated segments (for the first, with the bash prefix taken off too); None
    when the best is too short."""
    best: list[str] | None = None
    best_size = -1
    for number, segment in enumerate(query.split("\n")):
        pieces = [segment]
        if number == 0:
            # The segment may start inside "$ " (one that lies in it whole has at most two
            # characters: too short to be chosen).
            for start in (0, 1):
                head = _BASH_PREFIX[start:]
                if segment.startswith(head):
                    pieces.append(segment[len(head) :])
        size = min(len(spelt(piece)) for piece in pieces)
        if size > best_size:
            best, best_size = pieces, size
    return best if best_size >= SHORTEST_NEEDLE else None


def _call_needle(query: str) -> str | None:
    """A run of ``query`` that re-encoded arguments holding it have inside a string or a
    literal, "" when no re-encoded arguments can hold it (it has a control character or a
    lone surrogate, which ``JSON.stringify`` always escapes), None when it has no run long
    enough."""
    if any(ord(char) < 0x20 or 0xD800 <= ord(char) <= 0xDFFF for char in query):
        return ""
    runs = [_past_escape(run) for run in _STRUCTURAL.split(query)]
    runs = [run for run in runs if not _NUMERIC.issuperset(run)]
    if not runs:
        return None
    run = max(runs, key=lambda run: len(run.encode("utf-8")))
    return run if len(run.encode("utf-8")) >= SHORTEST_NEEDLE else None


def _past_escape(run: str) -> str:
    """``run`` without what may be the end of an escape that ``JSON.stringify`` wrote before
    it (``\\n``, ``\\u001f``: the line may spell that character otherwise). A run with a
    backslash keeps it whole (then any escape in a line sends it to be looked at)."""
    if "\\" in run:
        return run
    cut = _ESCAPE_TAIL.match(run)
    end = cut.end() if cut is not None else 0
    return run[max(end, 1 if run[:1] in ("b", "f", "n", "r", "t") else 0) :]


def _escape_pattern(chars: set[str]) -> re.Pattern[bytes]:
    """A ``\\u`` escape that could spell one of ``chars`` (a character past U+FFFF by its
    first surrogate), in either case."""
    codes = set()
    for char in chars:
        code = ord(char)
        if code > 0xFFFF:
            code = 0xD800 + ((code - 0x10000) >> 10)
        codes.add(f"{code:04x}".encode("ascii"))
    return re.compile(rb"\\u(?i:" + b"|".join(sorted(codes)) + rb")")


def _window_test(token: bytes) -> Callable[[bytes], bool]:
    """The test of a line that may name a window: its kind's name, or any escape."""

    def names_window(line: bytes) -> bool:
        return token in line or _ANY_ESCAPE.search(line) is not None

    return names_window


def search_marks(queries: tuple[str, ...]) -> Marks | None:
    """What a lazy load of the file is to mark for a first search (``Session.open(marks=)``):
    the lines that may hold an item matching one of ``queries``, and those that may name a
    window (a reset marker, a boot); None when some query has no needle long enough."""
    needles: dict[bytes, None] = {}
    chars: set[str] = set()
    any_escape = False
    for query in queries:
        pieces = _text_needles(query)
        if pieces is None:
            return None
        for piece in pieces:
            needles[spelt(piece)] = None
            chars.update(piece)
        run = _call_needle(query)
        if run is None:
            run = _TOOL_CALL  # any call's arguments may hold it: every line with a call
        if run:
            needles[run.encode("utf-8")] = None
            chars.update(run)
            any_escape = any_escape or "\\" in run
    patterns = [_ANY_ESCAPE if any_escape else _escape_pattern(chars)]
    if "/" in chars:
        patterns.append(_SLASH_ESCAPE)
    return Marks(
        tuple(needles),
        tuple(patterns),
        {"custom": _window_test(b"reset-marker"), "custom_message": _window_test(b"boot")},
    )


def _needs_position(index: int) -> JSONValue:
    raise _NeedsPosition


def first_search(
    path: Path, leaf_id: str | None, args: Mapping[str, Any]
) -> dict[str, JSONValue] | None:
    """``query.search_page`` of the session at ``path`` without the index, or None where it
    cannot be had cheaply (see the module's docstring): the caller then answers as before.
    ``leaf_id`` is the selected leaf (None: the file's own, the only one answered here)."""
    try:
        queries = parse_queries(args)
        paging = parse_paging(args)
        max_chars = parse_max_chars(args)
        filters = parse_filters(args)
    except HistoryError:
        return None  # reported by the usual path, in its order (the session's errors first)
    if paging.cursor != 0 or leaf_id is not None:  # another leaf's path is walked entry by entry
        return None
    marks = search_marks(queries)
    if marks is None:
        return None
    try:
        session = Session.open(path, readonly=True, marks=marks)
        branch = session.branch(leaf_id)
    except SessionError:
        return None
    marked = session.marked
    if marked is None or len(marked) > max(MARKED_FEW, len(branch) // MARKED_SHARE):
        return None
    positions = branch.positions_of(marked)
    if positions is None:
        return None
    history = _sparse_history(session.session_id, branch, positions)
    flat, order = select_positions(history, filters, paging.recent_first)
    hits: list[tuple[Item, int]] = []
    for position in order:
        item = flat[position]
        offset = first_match(item.content, queries)
        if offset >= 0:
            hits.append((item, offset))
    rendered = Rendered(len(hits), lambda i: render_item(hits[i][0], max_chars, hits[i][1]))
    if not paging.recent_first:  # oldest first: the cursor is an offset into the hits
        return page(rendered, 0, "items", limit=paging.limit, shrink=shrink_item)
    try:
        # Room for the widest cursor: a page that holds every hit whole with it holds them
        # with the true one too (the usual path reserves room for a cursor of its size).
        answer = page(
            rendered,
            0,
            "items",
            limit=paging.limit,
            shrink=shrink_item,
            cursor_of=_needs_position,
            cursor_bytes=WIDEST_CURSOR,
        )
    except _NeedsPosition:
        return None
    # A lone hit shrunk to fit is shrunk alike: the test of fit is the page's true size.
    return answer


def _sparse_history(session_id: str, branch: Branch, positions: list[int]) -> History:
    """The windows of ``branch`` with the items of the entries at ``positions`` (every marker
    and boot among them), in order."""
    kinds = branch.kinds()
    naming = [
        (position, branch[position])
        for position in positions
        if kinds[position] == "custom" or kinds[position] == "custom_message"
    ]
    root = root_window_id(session_id, [entry for _, entry in naming])
    return history_of(branch, spans_of(naming, len(branch), root), positions)
