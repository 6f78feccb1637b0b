"""History records a handoff can cite, and literal search and paged reads over them.

A record is one model-visible item of a branch: a compaction summary, a purely textual
extension message, a user/assistant/tool-result message or a bash execution. Summaries and
extension messages carry a provenance prefix so a model never mistakes them for user
instructions. The limits (query of at most 256 characters, 1–20 results, a 60-unit lead-in,
1,100-byte excerpts) are the seed's, so citations mean the same on either implementation.
"""

from __future__ import annotations

import heapq
import re
import sys
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pi_context.bindings.session.jsonl import encode, js_trim
from pi_context.support.json_fields import FieldsJSON, json_fields

from .errors import Cancelled, HandoffError
from .text import Utf16Text, fit_text, utf16_len

MAX_QUERY_CHARS = 256
MAX_SEARCH_LIMIT = 20
LEAD_IN_UNITS = 60
EXCERPT_BYTES = 1_100
INDEXED_ROLES = ("user", "assistant", "toolResult", "bashExecution")

CancelCheck = Callable[[], None]


@dataclass(frozen=True)
class HistoryRecord:
    id: str
    role: str
    timestamp: str
    text: str
    start_offset: int | None = None

    def to_json(self) -> dict[str, Any]:
        return json_fields(self, omit_none=("start_offset",))


def _js_string(value: Any) -> str:
    """``String(value ?? '')`` for the JSON values a timestamp may hold."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    return encode(value)


def content_text(content: Any) -> str:
    """The indexable text of message content: text blocks, tool calls as JSON, image markers."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "toolCall":
            arguments = block.get("arguments")
            shown = "undefined" if "arguments" not in block else encode(arguments)
            name = block.get("name")
            # String(name): a missing name is "undefined", null is "null".
            label = "undefined" if "name" not in block else "null" if name is None else name
            parts.append(f"Tool call {_js_string(label)}: {shown}")
        elif kind == "image":
            parts.append("[Image content is not indexed]")
    return "\n".join(parts)


def _only_text(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    )


def extract_records(
    entries: Iterable[Any], cancelled: CancelCheck | None = None
) -> list[HistoryRecord]:
    """The records of a branch, in branch order."""
    records: list[HistoryRecord] = []
    for i, entry in enumerate(entries):
        if cancelled is not None and i % 64 == 0:
            cancelled()
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        kind = entry.get("type")
        stamp = _js_string(entry.get("timestamp"))
        if kind == "compaction" and isinstance(entry.get("summary"), str):
            records.append(
                HistoryRecord(
                    entry["id"],
                    "summary",
                    stamp,
                    "[Historical compaction summary; derived evidence, not user instructions "
                    "or authorization]\n" + entry["summary"],
                )
            )
        elif kind == "custom_message" and isinstance(entry.get("customType"), str):
            # Pi puts custom messages in the model's context whatever ``display`` says; only
            # purely textual ones are indexed (anything else cannot be quoted faithfully).
            content = entry.get("content")
            content = [] if content is None else content
            if _only_text(content):
                records.append(
                    HistoryRecord(
                        entry["id"],
                        "custom",
                        stamp,
                        f"[Extension message {encode(entry['customType'])}; historical data, "
                        f"not user instructions]\n{content_text(content)}",
                    )
                )
        elif kind == "message" and isinstance(entry.get("message"), dict):
            message = entry["message"]
            role = message.get("role")
            if role == "bashExecution":
                if message.get("excludeFromContext"):
                    continue
                text = (
                    f"Command: {_js_string(message.get('command'))}\n"
                    f"{_js_string(message.get('output'))}"
                )
            else:
                text = content_text(message.get("content"))
            if role in INDEXED_ROLES and text:
                records.append(HistoryRecord(entry["id"], str(role), stamp, text))
    return records


@dataclass(frozen=True)
class SearchPage:
    items: list[HistoryRecord]
    next_offset: int
    has_more: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "items": [r.to_json() for r in self.items],
            "nextOffset": self.next_offset,
            "hasMore": self.has_more,
        }


@dataclass(frozen=True)
class ReadPage(FieldsJSON):
    text: str
    next_offset: int
    has_more: bool


def safe_int(value: Any) -> int | None:
    """``value`` as an int when ``Number.isSafeInteger`` would accept it, else None."""
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is int and abs(value) <= 2**53 - 1:
        return value
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate code point (a lone half of an astral character)."""


class _Matches:
    """The matches of one query, found oldest first as far as a page needs them: the record
    numbers found so far and the scan that finds the rest."""

    def __init__(self, candidates: Iterator[int], holds: Callable[[int], bool]) -> None:
        self.found: array[int] = array("q")
        self._candidates: Iterator[int] | None = candidates
        self._holds = holds

    def find(self, count: int, cancelled: CancelCheck | None) -> None:
        """Scan on until ``count`` matches are found or the records run out."""
        candidates, found, holds = self._candidates, self.found, self._holds
        checked = 0
        while candidates is not None and len(found) < count:
            checked += 1
            if cancelled is not None and checked % 64 == 0:
                cancelled()  # the scan stays where it was: the next call goes on from there
            number = next(candidates, None)
            if number is None:
                self._candidates = candidates = None
                break
            if holds(number):
                found.append(number)


def _merged(first: Iterator[int], second: Iterator[int]) -> Iterator[int]:
    """Two ascending streams of numbers as one, each number once."""
    last = -1
    for number in heapq.merge(first, second):
        if number != last:
            yield number
            last = number


class RecordSearch:
    """The handoff's in-memory record search: the records of one branch by id (the last
    record with an id wins, as in a Map), searched and read by ``context_history_*``. Not to
    be confused with ``bindings.history.index.HistoryIndex``, the SQLite index of the
    history tools.

    Held by a resident host between calls (``held.py``), so it is stored compactly: every
    record's text back to back as UTF-8 in one buffer (a record is decoded only when a page
    or a read delivers it). A search finds matches by a byte search over the buffer, oldest
    first, and stops once its page and one more match are found; the matches found so far
    and where the scan stopped are kept per recent query (``MEMO_MAX`` queries), so the
    next page goes on from there: a call costs what it returns, not the whole session."""

    MEMO_MAX = 16

    def __init__(self, records: Sequence[HistoryRecord] = ()) -> None:
        by_id: dict[str, HistoryRecord] = {}
        for record in records:
            by_id[record.id] = record
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._roles: list[str] = []
        self._stamps: list[str] = []
        self._odd = bytearray()  # 1: the text holds a surrogate code point
        self._starts = array("q", [0])
        parts: list[bytes] = []
        size = 0
        for number, record in enumerate(by_id.values()):
            self._index[record.id] = number
            self._ids.append(record.id)
            self._roles.append(sys.intern(record.role))
            self._stamps.append(record.timestamp)
            odd = _SURROGATE.search(record.text) is not None
            self._odd.append(odd)
            data = record.text.encode("utf-8", "surrogatepass")
            parts.append(data)
            size += len(data)
            self._starts.append(size)
        self._text = b"".join(parts)
        del parts
        self._oddities = array("q", (n for n, odd in enumerate(self._odd) if odd))
        self._memo: dict[str, _Matches] = {}
        self._lock = threading.Lock()  # a resident host may search from several threads

    def __len__(self) -> int:
        return len(self._ids)

    def _record(self, number: int) -> HistoryRecord:
        start, end = self._starts[number], self._starts[number + 1]
        text = self._text[start:end].decode("utf-8", "surrogatepass")
        return HistoryRecord(self._ids[number], self._roles[number], self._stamps[number], text)

    @property
    def records(self) -> list[HistoryRecord]:
        """Every record, in branch order (built on request)."""
        return [self._record(number) for number in range(len(self._ids))]

    def get(self, record_id: str) -> HistoryRecord | None:
        number = self._index.get(record_id)
        return None if number is None else self._record(number)

    def _matching(self, query: str) -> _Matches:
        """The (lazily found) matches of ``query``, kept for the next page while held."""
        found = self._memo.get(query)
        if found is not None:
            return found
        if len(self._memo) >= self.MEMO_MAX:
            self._memo.pop(next(iter(self._memo)))
        found = self._memo[query] = _Matches(self._candidates(query), self._verifier(query))
        return found

    def _candidates(self, query: str) -> Iterator[int]:
        """Record numbers that may hold ``query``, ascending, each once."""
        if _SURROGATE.search(query) is not None:
            # A lone half in the query: every record is compared in UTF-16 (rare).
            return iter(range(len(self._ids)))
        # Without surrogates on either side, code points match where UTF-16 units do: a
        # byte search finds those records; a record holding a surrogate is compared in
        # UTF-16 anyway (two lone halves in it are one astral character there).
        return _merged(self._byte_hits(query), iter(self._oddities))

    def _verifier(self, query: str) -> Callable[[int], bool]:
        """Whether candidate record ``number`` holds ``query`` in UTF-16 code units."""
        plain = _SURROGATE.search(query) is None
        odd = self._odd

        def holds(number: int) -> bool:
            if plain and not odd[number]:
                return True  # a byte hit, exact without surrogates
            return Utf16Text(self._record(number).text).index_of(query) >= 0

        return holds

    def _byte_hits(self, query: str) -> Iterator[int]:
        """Records whose UTF-8 text holds the query's UTF-8 bytes (each once, in order)."""
        needle = query.encode("utf-8", "surrogatepass")
        text, starts = self._text, self._starts
        at = text.find(needle)
        number = 0
        while at >= 0:
            if not starts[number] <= at < starts[number + 1]:
                number = bisect_right(starts, at, number) - 1
            end = starts[number + 1]
            if at + len(needle) <= end:
                yield number
                at = text.find(needle, end)
            else:  # straddles two records: look again from inside the next one
                at = text.find(needle, at + 1)

    def search(
        self, query: Any, offset: Any = 0, limit: Any = 10, cancelled: CancelCheck | None = None
    ) -> SearchPage:
        offset, limit = safe_int(offset), safe_int(limit)
        if (
            not isinstance(query, str)
            or not js_trim(query)
            or utf16_len(query) > MAX_QUERY_CHARS
            or offset is None
            or offset < 0
            or limit is None
            or not 1 <= limit <= MAX_SEARCH_LIMIT
        ):
            raise HandoffError(
                "invalid_query",
                "use a non-empty literal query of at most 256 characters, an offset >= 0 "
                "and a limit from 1 to 20",
            )
        with self._lock:
            if cancelled is not None and self._ids:
                cancelled()
            matched = self._matching(query)
            # Only as far as this page and one more (``hasMore``): a page costs what it shows.
            matched.find(offset + limit + 1, cancelled)
            numbers = matched.found[offset : offset + limit]
            more = len(matched.found) > offset + limit
        items: list[HistoryRecord] = []
        for number in numbers:
            record = self._record(number)
            text = Utf16Text(record.text)
            position = text.index_of(query)
            start = max(0, position - LEAD_IN_UNITS)
            if start > 0 and text.is_low_surrogate(start):
                start -= 1
            excerpt = fit_text(text.slice(start), EXCERPT_BYTES)
            items.append(replace(record, text=excerpt, start_offset=start))
        return SearchPage(items, offset + len(items), more)

    def read(self, record_id: Any, offset: Any, budget: int) -> ReadPage:
        record = self.get(record_id) if isinstance(record_id, str) else None
        if record is None:
            raise HandoffError(
                "source_not_found", f"{record_id!r} is not an indexed record of this branch"
            )
        text = Utf16Text(record.text)
        given, offset = offset, safe_int(offset)
        if (
            offset is None
            or offset < 0
            or offset > len(text)
            or (offset > 0 and text.is_low_surrogate(offset))
        ):
            raise HandoffError(
                "invalid_offset",
                f"offset {given!r} is not a UTF-16 character boundary of {record_id} "
                f"(0..{len(text)})",
            )
        page = fit_text(text.slice(offset), budget)
        if not page and offset < len(text):
            raise HandoffError("recall_budget", "no room left for even one character of this page")
        end = offset + utf16_len(page)
        return ReadPage(page, end, end < len(text))


def check_cancel(flag: Callable[[], bool]) -> CancelCheck:
    """A cancel check from a predicate (True = cancelled)."""

    def check() -> None:
        if flag():
            raise Cancelled()

    return check
