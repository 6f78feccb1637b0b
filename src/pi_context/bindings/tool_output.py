"""Byte-bounded tool output shared by every model-facing tool.

Everything a tool hands the model must fit ``TOOL_OUTPUT_MAX_BYTES`` of UTF-8 *as delivered*.
This module owns the three shapes that guarantee it:

* JSON results (``encode_json``, ``fit_json``): compact JSON; an oversized value is shrunk by
  middle-truncating its longest strings with a visible marker rather than being dropped.
* Paged JSON lists (``page``): as many items as fit, at least one (middle-truncated if it alone
  is too big) so the cursor always advances; ``next_cursor`` is ``None`` only at the true end.
* Raw character reads (``read_window``): a one-line bracketed header and a plain prefix of the
  requested range (no marker), with the resume offset in the header.

Character counts and offsets are Unicode code points (Python ``str`` indices), never UTF-16
units or bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from pi_context.support.frozen import frozen

TOOL_OUTPUT_MAX_BYTES = 32_768
"""Hard ceiling, in UTF-8 bytes, on the text one tool call delivers to the model."""

READ_LIMIT_CHARS_MAX = 50_000
"""Largest ``limit_chars`` a read accepts; the byte budget may still deliver fewer."""

HEADER_FIELD_MAX_CHARS = 2_048
"""Each header field is middle-truncated to this so a pathological name cannot eat the budget.

It exceeds every address limit (note paths: 1,024 bytes; window and item ids: 512 characters,
shown as ``window <id>``), so the address a header names is always shown whole."""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    JSONValue = Any
else:
    JSONValue = object  # only annotations use it

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_len(text: str) -> int:
    """Bytes ``text`` occupies as UTF-8 (a lone surrogate counts as its 3-byte WTF-8 form)."""
    return len(text.encode("utf-8", "surrogatepass"))


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, the encoder made once
(``json.dumps`` with options builds a new one per call)."""


def encode_json(value: JSONValue) -> str:
    """The delivered JSON text: compact, non-ASCII kept literal, lone surrogates escaped.

    Escaping lone surrogates (which Python can read from a JSONL session) keeps the output valid
    UTF-8; nested values serialise to exactly the bytes they take inside a larger document.
    """
    text = _COMPACT.encode(value)
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_bytes(value: JSONValue) -> int:
    return utf8_len(encode_json(value))


# --- middle truncation -------------------------------------------------------------------


def truncation_marker(removed: int) -> str:
    return f"…[truncated {removed} chars]…"


def middle_truncate(text: str, max_chars: int) -> str:
    """Keep the head and tail of ``text`` around a visible ``…[truncated N chars]…`` marker.

    The result has at most ``max_chars`` code points, except that the marker itself is never
    dropped: a budget smaller than the marker yields the bare marker. ``N`` is exactly the
    number of code points removed, so head + tail + N == len(text).
    """
    if len(text) <= max_chars:
        return text
    # The marker's width depends on N's digit count, which depends on the kept width; two
    # passes settle it because the digit count can only shrink by the second pass.
    keep = max(0, max_chars - len(truncation_marker(len(text))))
    keep = max(0, max_chars - len(truncation_marker(len(text) - keep)))
    head = (keep + 1) // 2
    tail = keep - head
    removed = len(text) - head - tail
    return text[:head] + truncation_marker(removed) + (text[len(text) - tail :] if tail else "")


def middle_truncate_to_fit(text: str, fits: Callable[[str], bool]) -> str:
    """The longest middle-truncation of ``text`` that ``fits`` accepts (``fits`` is monotone).

    Returns ``text`` unchanged when it already fits and the bare marker when nothing fits.
    """
    if fits(text):
        return text
    lo, hi = 0, len(text) - 1  # invariant: the answer's max_chars lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(middle_truncate(text, mid)):
            lo = mid
        else:
            hi = mid - 1
    return middle_truncate(text, lo)


# --- fitting JSON values -------------------------------------------------------------------


class BudgetError(ValueError):
    """A value cannot be made to fit the budget (nothing left to truncate)."""


_Path = tuple[str | int, ...]


def _string_leaves(value: JSONValue, path: _Path, protect: frozenset[str]) -> list[_Path]:
    found: list[_Path] = []
    if isinstance(value, str):
        found.append(path)
    elif isinstance(value, Mapping):
        for key, child in value.items():
            if key not in protect:
                found.extend(_string_leaves(child, (*path, key), protect))
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            found.extend(_string_leaves(child, (*path, index), protect))
    return found


def _get(value: JSONValue, path: _Path) -> JSONValue:
    for step in path:
        value = value[step]
    return value


def _replace(value: JSONValue, path: _Path, new: str) -> JSONValue:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        copy = dict(value)
        copy[head] = _replace(value[head], rest, new)
        return copy
    items = list(value)
    assert isinstance(head, int)
    items[head] = _replace(items[head], rest, new)
    return items


def shrink_to_fit(
    value: JSONValue,
    fits: Callable[[JSONValue], bool],
    *,
    protect: frozenset[str] = frozenset(),
) -> JSONValue:
    """Middle-truncate the longest string leaves of ``value`` until ``fits`` accepts it.

    Strings under a key in ``protect`` (identities such as ``item_id``) are never touched.
    Each truncation is visible. Raises ``BudgetError`` when no string can shrink further.
    """
    while not fits(value):
        leaves = _string_leaves(value, (), protect)
        candidates = [(len(_get(value, p)), p) for p in leaves]
        shrinkable = [(n, p) for n, p in candidates if n > len(truncation_marker(n))]
        if not shrinkable:
            raise BudgetError("the value cannot be truncated to fit the output budget")
        _, path = max(shrinkable, key=lambda pair: pair[0])
        longest: str = _get(value, path)
        current = value

        def leaf_fits(s: str, current: JSONValue = current, path: _Path = path) -> bool:
            return fits(_replace(current, path, s))

        # The longest leaf alone may be enough to cut; if even its bare marker is not, the
        # loop moves on to the next longest.
        value = _replace(value, path, middle_truncate_to_fit(longest, leaf_fits))
        if fits(value):
            break
        if _get(value, path) == longest:  # could not shrink: avoid spinning
            raise BudgetError("the value cannot be truncated to fit the output budget")
    return value


def shrink_to_fit_guarded(
    value: JSONValue, fits: Callable[[JSONValue], bool], protect: frozenset[str]
) -> JSONValue:
    """``shrink_to_fit`` that sacrifices protected strings only when nothing else can give.

    A hand-edited file can hold a 100 KB id; delivering it visibly truncated beats failing.
    """
    try:
        return shrink_to_fit(value, fits, protect=protect)
    except BudgetError:
        return shrink_to_fit(value, fits)


def fit_json(value: JSONValue, budget: int = TOOL_OUTPUT_MAX_BYTES) -> str:
    """Encode ``value`` as delivered JSON within ``budget`` bytes, truncating strings visibly."""
    fitted = shrink_to_fit(value, lambda v: json_bytes(v) <= budget)
    return encode_json(fitted)


# --- pages -------------------------------------------------------------------------------


def page(
    items: Sequence[JSONValue],
    cursor: int,
    key: str,
    *,
    limit: int | None = None,
    extra: Mapping[str, JSONValue] | None = None,
    protect: frozenset[str] = frozenset(),
    shrink: Callable[[JSONValue, Callable[[JSONValue], bool]], JSONValue] | None = None,
    budget: int = TOOL_OUTPUT_MAX_BYTES,
    cursor_of: Callable[[int], JSONValue] | None = None,
    cursor_bytes: int = 0,
    size_of: Callable[[int], int] | None = None,
) -> dict[str, JSONValue]:
    """One page ``{**extra, key: [...], "next_cursor": n | None}`` of ``items[cursor:]``.

    ``limit`` caps the page, never the set. Items are added while the whole page fits
    ``budget``; if even the first item does not fit alone it is shrunk and delivered, so the
    cursor always advances. ``shrink(item, fits)`` does the shrinking (default: middle-truncate
    the longest strings, leaving those under ``protect`` keys intact). ``cursor_of`` turns the
    next index into the cursor delivered (a key that does not move); ``cursor_bytes`` is the
    most bytes such a cursor takes as JSON. ``size_of(index)``, when given, is what
    ``json_bytes(items[index])`` is (a caller that keeps its rows' sizes).
    """
    if cursor < 0:
        raise ValueError(f"cursor must be >= 0, got {cursor}")
    total = len(items)
    base = dict(extra or {})

    def envelope(chosen: list[JSONValue], next_index: int | None) -> dict[str, JSONValue]:
        shown = next_index
        if next_index is not None and cursor_of is not None:
            shown = cursor_of(next_index)
        return {**base, key: chosen, "next_cursor": shown}

    if cursor >= total:
        return envelope([], None)
    cap = total - cursor if limit is None else max(1, min(limit, total - cursor))
    # Size accounting is incremental: the empty envelope with the widest possible cursor,
    # plus each item's own bytes and a comma between items (compact JSON nests byte-exactly).
    widest = max(len("null"), len(str(total)), cursor_bytes)
    base_bytes = json_bytes(envelope([], None)) - len("null") + widest
    chosen: list[JSONValue] = []
    used = base_bytes
    # Index one at a time so a lazily rendered sequence renders only what the page inspects.
    for index in range(cursor, cursor + cap):
        item = items[index]
        size = (json_bytes(item) if size_of is None else size_of(index)) + (1 if chosen else 0)
        if used + size > budget:
            break
        chosen.append(item)
        used += size
    if not chosen:
        first = items[cursor]
        nxt = cursor + 1 if cursor + 1 < total else None

        def fits(candidate: JSONValue) -> bool:
            return json_bytes(envelope([candidate], nxt)) <= budget

        if shrink is None:
            chosen = [shrink_to_fit_guarded(first, fits, protect)]
        else:
            chosen = [shrink(first, fits)]
            if not fits(chosen[0]):
                raise BudgetError("the shrink function returned an item over the budget")
    end = cursor + len(chosen)
    return envelope(chosen, end if end < total else None)


# --- raw character reads -----------------------------------------------------------------


class ReadRangeError(ValueError):
    """``offset_chars`` lies past the end of the text; carries the fields an error echoes."""

    def __init__(self, offset_chars: int, total_chars: int) -> None:
        super().__init__(
            f"offset_chars {offset_chars} is past the end (the length is {total_chars} chars; "
            f"offset_chars={total_chars} is the end)"
        )
        self.offset_chars = offset_chars
        self.total_chars = total_chars


@frozen
class ReadWindow:
    """A delivered read: ``text`` is header line + newline + payload, within the budget."""

    text: str
    header: str
    content: str
    offset_chars: int
    end_chars: int
    total_chars: int
    next_offset_chars: int | None
    limit_chars: int


def validate_limit_chars(limit_chars: object) -> int:
    """``limit_chars`` as given, or a ``ValueError`` naming the accepted range."""
    if limit_chars is None:
        return READ_LIMIT_CHARS_MAX
    if isinstance(limit_chars, bool) or not isinstance(limit_chars, int):
        raise ValueError(f"limit_chars must be an integer, got {limit_chars!r}")
    if not 1 <= limit_chars <= READ_LIMIT_CHARS_MAX:
        raise ValueError(
            f"limit_chars must be between 1 and {READ_LIMIT_CHARS_MAX}, got {limit_chars}"
        )
    return limit_chars


def resolve_offset(offset_chars: object, total_chars: int) -> int:
    """Absolute start for ``offset_chars`` (negative counts back from the end, clamped at 0).

    Raises ``ReadRangeError`` past the end; ``offset == total`` is the legal empty end-read.
    """
    if offset_chars is None:
        return 0
    if isinstance(offset_chars, bool) or not isinstance(offset_chars, int):
        raise ValueError(f"offset_chars must be an integer, got {offset_chars!r}")
    if offset_chars > total_chars:
        raise ReadRangeError(offset_chars, total_chars)
    if offset_chars < 0:
        return max(0, total_chars + offset_chars)
    return offset_chars


def read_header(
    name: str, start: int, end: int, total: int, next_offset: int | None, suffix: Sequence[str]
) -> str:
    cursor = "end" if next_offset is None else f"continue at offset_chars={next_offset}"
    fields = [middle_truncate(name, HEADER_FIELD_MAX_CHARS), f"chars {start}-{end} of {total}"]
    fields.append(cursor)
    fields.extend(middle_truncate(part, HEADER_FIELD_MAX_CHARS) for part in suffix)
    # A newline inside a field would break the one-line header contract.
    line = " · ".join(fields).replace("\r", " ").replace("\n", " ")
    return f"[{line}]"


def read_window(
    text: str,
    *,
    name: str,
    offset_chars: object = None,
    limit_chars: object = None,
    suffix: Sequence[str] = (),
    budget: int = TOOL_OUTPUT_MAX_BYTES,
) -> ReadWindow:
    """Deliver ``text[offset : offset + limit]``, cut to a plain prefix that fits ``budget``.

    The header reads ``[name · chars A-B of T · end]`` or ``… · continue at offset_chars=B``
    followed by any ``suffix`` fields. Raises ``ValueError`` for a malformed argument and
    ``ReadRangeError`` for an offset past the end.
    """
    limit = validate_limit_chars(limit_chars)
    total = len(text)
    start = resolve_offset(offset_chars, total)
    want = min(limit, total - start)

    def render(count: int) -> tuple[str, str]:
        end = start + count
        header = read_header(name, start, end, total, end if end < total else None, suffix)
        return header, text[start:end]

    def size(count: int) -> int:
        header, content = render(count)
        return utf8_len(header) + 1 + utf8_len(content)

    count = want
    if size(count) > budget:
        lo, hi = 0, want - 1  # largest count that fits lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if size(mid) <= budget:
                lo = mid
            else:
                hi = mid - 1
        count = lo
        if count == 0 and want > 0:
            raise BudgetError("the read header alone exceeds the output budget")
    header, content = render(count)
    end = start + count
    # A lone surrogate (which a JSONL session can carry as an escape) has no UTF-8 form; it is
    # delivered as U+FFFD, one code point for one, so every offset stays exact.
    header, content = _SURROGATE.sub("\ufffd", header), _SURROGATE.sub("\ufffd", content)
    return ReadWindow(
        text=f"{header}\n{content}",
        header=header,
        content=content,
        offset_chars=start,
        end_chars=end,
        total_chars=total,
        next_offset_chars=end if end < total else None,
        limit_chars=limit,
    )
