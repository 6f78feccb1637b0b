"""Limits on JSON text, checked before any parser sees it: nesting depth and size.

Python's parsers recurse once per nesting level, so a line of 100,000 ``[`` ends in a
``RecursionError`` wherever the stack happens to be. Every reader of untrusted JSON (session
lines, conformance requests and replies, tool arguments on the command line) asks
``check_depth`` first and refuses what nests deeper than ``MAX_DEPTH`` with a
``JSONLimitError`` that states the limit, so the answer does not depend on the caller's stack.

The check is linear and cheap: text with no more opening brackets than the limit is settled
by its length or two counts; only the rest has
its strings cut out (the brackets inside them do not nest) and its depth measured.
"""

from __future__ import annotations

MAX_DEPTH = 512
"""Deepest nesting of arrays and objects any reader accepts."""
SHORTEST_TOO_DEEP = 2 * MAX_DEPTH + 1
"""The shortest JSON text that nests past ``MAX_DEPTH``: an opening and a closing bracket
for each level; any shorter text that parses is within the limit."""


class JSONLimitError(ValueError):
    """JSON text over a stated limit (the message names the limit)."""

    def __init__(self, message: str, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


_KEPT = b'"[]{}'
_DROPPED = bytes(b for b in range(256) if b not in _KEPT)
_PAIRS = bytes.maketrans(b"{}", b"[]")  # one kind of bracket: nesting is all that counts
_RUN = 256  # brackets counted together: a run that cannot pass the limit is taken whole
_PIECE = 8  # near the limit, brackets are followed in pieces of this many
_PIECES: dict[bytes, tuple[int, int]] = {}  # piece -> (depth change, highest depth in it)


def _structure(data: bytes | str) -> bytes:
    """The brackets of ``data`` outside its strings, in order, each spelt ``[`` or ``]``.

    Escaped backslashes and quotes are removed first, so every remaining quote opens or
    closes a string; what lies between an odd quote and the next is string content. (For text
    that is not well-formed JSON the result may be wrong; the parser refuses such text.)
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Two quotes in a row enclose nothing or only what lies between two strings: no bracket
    # either way, so both can go (most strings hold no bracket and vanish here).
    kept = raw.translate(_PAIRS, _DROPPED).replace(b'""', b"")
    if b'"' not in kept:
        return kept
    return b"".join(kept.split(b'"')[::2])


def _opening(data: bytes | str) -> int:
    if isinstance(data, str):
        return data.count("[") + data.count("{")
    return data.count(b"[") + data.count(b"{")


def deeper_than(data: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """Whether the arrays and objects of ``data`` nest more than ``limit`` levels deep."""
    if len(data) <= limit or _opening(data) <= limit:
        return False  # too few opening brackets to get there
    brackets = _structure(data)
    depth = 0
    for at in range(0, len(brackets), _RUN):
        run = brackets[at : at + _RUN]
        opens = run.count(b"[")
        if depth + opens <= limit:
            depth += 2 * opens - len(run)
            continue
        for start in range(0, len(run), _PIECE):
            piece = run[start : start + _PIECE]
            known = _PIECES.get(piece)
            if known is None:
                known = _PIECES[piece] = _measure(piece)
            if depth + known[1] > limit:
                return True
            depth += known[0]
    return False


def _measure(piece: bytes) -> tuple[int, int]:
    depth = highest = 0
    for byte in piece:
        depth += 1 if byte == 0x5B else -1  # "["
        highest = max(highest, depth)
    return depth, highest


def depth_error(limit: int = MAX_DEPTH) -> JSONLimitError:
    return JSONLimitError(f"nests deeper than {limit} levels (the limit)", limit)


def check_depth(data: bytes | str, limit: int = MAX_DEPTH) -> None:
    """Raise ``JSONLimitError`` when ``data`` nests deeper than ``limit`` levels."""
    if deeper_than(data, limit):
        raise depth_error(limit)


def check_size(data: bytes | str, limit: int, what: str = "JSON text") -> None:
    """Raise ``JSONLimitError`` when ``data`` is longer than ``limit`` bytes (or characters)."""
    if len(data) > limit:
        raise JSONLimitError(f"{what} is {len(data):,} long; the limit is {limit:,}", limit)


def too_deep_message(limit: int = MAX_DEPTH) -> str:
    """What a parser's ``RecursionError`` means when the stack was already deep."""
    return f"nests too deeply to parse here (the limit is {limit} levels)"
