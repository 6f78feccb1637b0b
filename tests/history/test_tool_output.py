"""The shared byte budget: middle truncation, budget-fitting JSON, pages and read windows."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.tool_output import (
    HEADER_FIELD_MAX_CHARS,
    READ_LIMIT_CHARS_MAX,
    TOOL_OUTPUT_MAX_BYTES,
    BudgetError,
    ReadRangeError,
    encode_json,
    fit_json,
    json_bytes,
    middle_truncate,
    middle_truncate_to_fit,
    page,
    read_window,
    truncation_marker,
    utf8_len,
)

MARKER = re.compile(r"^(.*)…\[truncated (\d+) chars\]…(.*)$", re.DOTALL)
HEADER = re.compile(r" · chars (\d+)-(\d+) of (\d+) · (end|continue at offset_chars=(\d+))")

# Any code point a JSONL session can hold, astral planes included (surrogates cannot be
# encoded as UTF-8 and are covered by their own test).
any_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=400)


def test_budget_is_32_kib() -> None:
    assert TOOL_OUTPUT_MAX_BYTES == 32768
    assert READ_LIMIT_CHARS_MAX == 50_000


def test_utf8_len_counts_bytes_not_code_points() -> None:
    assert utf8_len("aé进🎉") == 1 + 2 + 3 + 4
    assert utf8_len("\ud800") == 3  # a lone surrogate still has a bounded size


def test_encode_json_is_compact_literal_and_valid_utf8_even_with_lone_surrogates() -> None:
    assert encode_json({"a": "é", "b": [1, None]}) == '{"a":"é","b":[1,null]}'
    text = encode_json({"s": "x\ud800y"})
    assert text == '{"s":"x\\ud800y"}'
    text.encode("utf-8")  # would raise if a raw surrogate had leaked through
    assert json.loads(text) == {"s": "x\ud800y"}


@given(text=any_text, max_chars=st.integers(min_value=0, max_value=450))
def test_middle_truncate_keeps_head_and_tail_and_counts_what_it_removed(
    text: str, max_chars: int
) -> None:
    result = middle_truncate(text, max_chars)
    if len(text) <= max_chars:
        assert result == text
        return
    match = MARKER.match(result)
    assert match is not None, result
    head, removed, tail = match.group(1), int(match.group(2)), match.group(3)
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head) + len(tail) + removed == len(text)
    assert removed > 0
    marker = truncation_marker(len(text))
    if max_chars >= len(marker):
        assert len(result) <= max_chars
    else:
        assert result == marker  # the marker is never dropped, even when nothing else fits


def test_middle_truncate_example() -> None:
    assert middle_truncate("abcdefghij" * 5, 30) == "abcd…[truncated 42 chars]…ghij"


@given(text=any_text, budget=st.integers(min_value=30, max_value=300))
def test_middle_truncate_to_fit_returns_a_fitting_visible_truncation(
    text: str, budget: int
) -> None:
    def fits(candidate: str) -> bool:
        return utf8_len(candidate) <= budget

    result = middle_truncate_to_fit(text, fits)
    assert fits(result)
    if fits(text):
        assert result == text
    else:
        match = MARKER.match(result)
        assert match is not None
        assert text.startswith(match.group(1)) and text.endswith(match.group(3))
        # Maximal: allowing one more character (marker included) no longer fits.
        wider = middle_truncate(text, len(result) + 1)
        assert wider in (result, text) or not fits(wider)


def test_fit_json_truncates_the_longest_string_visibly_and_leaves_small_ones() -> None:
    value = {"error": "unknown thing", "echo": "é" * 40_000, "n": 7}
    text = fit_json(value)
    assert utf8_len(text) <= TOOL_OUTPUT_MAX_BYTES
    decoded = json.loads(text)
    assert decoded["error"] == "unknown thing"
    assert decoded["n"] == 7
    assert MARKER.match(decoded["echo"]) is not None
    assert fit_json({"a": "b"}) == '{"a":"b"}'


def test_fit_json_refuses_a_value_with_nothing_left_to_cut() -> None:
    with pytest.raises(BudgetError):
        fit_json(list(range(20_000)))


# --- page() -------------------------------------------------------------------------------------

BIG = TOOL_OUTPUT_MAX_BYTES * 2


def test_page_delivers_an_oversized_first_item_truncated_and_advances() -> None:
    first = page([{"text": "a" * BIG}, {"text": "b"}], 0, "items")
    assert len(first["items"]) == 1
    assert MARKER.match(first["items"][0]["text"]) is not None
    assert first["next_cursor"] == 1
    assert json_bytes(first) <= TOOL_OUTPUT_MAX_BYTES


def test_page_an_oversized_last_item_terminates() -> None:
    last = page([{"text": "a" * BIG}], 0, "items")
    assert len(last["items"]) == 1
    assert last["next_cursor"] is None


def test_page_an_oversized_item_behind_a_small_one_starts_the_next_page() -> None:
    items = [{"text": "small"}, {"text": "c" * BIG}, {"text": "tail"}]
    behind = page(items, 0, "items")
    assert behind == {"items": [{"text": "small"}], "next_cursor": 1}
    resumed = page(items, 1, "items")
    assert len(resumed["items"]) == 1
    assert MARKER.match(resumed["items"][0]["text"]) is not None
    assert resumed["next_cursor"] == 2
    assert page(items, 2, "items") == {"items": [{"text": "tail"}], "next_cursor": None}


def test_page_limit_caps_the_page_not_the_set() -> None:
    items = [{"n": i} for i in range(120)]
    assert page(items, 0, "items", limit=50)["next_cursor"] == 50
    assert page(items, 50, "items", limit=50)["next_cursor"] == 100
    tail = page(items, 100, "items", limit=50)
    assert len(tail["items"]) == 20
    assert tail["next_cursor"] is None
    assert page(items, 500, "items") == {"items": [], "next_cursor": None}


def test_page_protected_keys_survive_truncation() -> None:
    item = {"item_id": "x" * 100, "text": "y" * BIG, "name": "z" * BIG}
    result = page([item], 0, "items", protect=frozenset({"item_id"}))
    assert result["items"][0]["item_id"] == "x" * 100
    assert json_bytes(result) <= TOOL_OUTPUT_MAX_BYTES


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=3000), max_size=30),
    char=st.sampled_from(["a", "é", "进", "🎉"]),
    limit=st.none() | st.integers(min_value=1, max_value=7),
    budget=st.integers(min_value=200, max_value=4000),
)
def test_following_page_cursors_reaches_every_item_once_within_budget(
    sizes: list[int], char: str, limit: int | None, budget: int
) -> None:
    items = [{"id": index, "text": char * size} for index, size in enumerate(sizes)]
    seen: list[int] = []
    cursor: int | None = 0
    pages = 0
    while cursor is not None:
        result = page(items, cursor, "items", limit=limit, budget=budget, protect=frozenset({"id"}))
        assert json_bytes(result) <= budget
        assert result["items"] or not items, "a page before the end is never empty"
        if limit is not None:
            assert len(result["items"]) <= limit
        for delivered in result["items"]:
            original = items[delivered["id"]]["text"]
            if delivered["text"] != original:
                assert len(result["items"]) == 1, "only a lone oversized item is truncated"
                match = MARKER.match(delivered["text"])
                assert match is not None
                assert original.startswith(match.group(1)) and original.endswith(match.group(3))
        seen.extend(delivered["id"] for delivered in result["items"])
        cursor = result["next_cursor"]
        pages += 1
        assert pages <= len(items) + 1
    assert seen == list(range(len(items)))


# --- read_window() ------------------------------------------------------------------------------


def _parse(text: str) -> tuple[str, str, int, int, int, int | None]:
    header, _, content = text.partition("\n")
    assert header.startswith("[") and header.endswith("]")
    match = HEADER.search(header)
    assert match is not None, header
    start, end, total = int(match.group(1)), int(match.group(2)), int(match.group(3))
    nxt = None if match.group(4) == "end" else int(match.group(5))
    assert len(content) == end - start
    return header, content, start, end, total, nxt


def test_read_window_header_and_plain_prefix_under_the_budget() -> None:
    original = "z" * (TOOL_OUTPUT_MAX_BYTES * 3)
    window = read_window(original, name="a1b2c3d4", limit_chars=50_000, suffix=["user"])
    assert utf8_len(window.text) <= TOOL_OUTPUT_MAX_BYTES
    header, content, start, end, total, nxt = _parse(window.text)
    assert (
        header == f"[a1b2c3d4 · chars 0-{end} of {total} · continue at offset_chars={end} · user]"
    )
    assert "…" not in content
    assert original.startswith(content)
    assert nxt == end == window.next_offset_chars
    assert total == len(original)


def test_read_window_negative_offset_counts_from_the_end() -> None:
    window = read_window("第一行\nneedle Café", name="n.md", offset_chars=-4)
    assert window.content == "Café"
    assert window.header == "[n.md · chars 11-15 of 15 · end]"
    assert read_window("abc", name="n", offset_chars=-10).content == "abc"  # clamped at 0


def test_read_window_end_read_is_empty_and_past_the_end_names_the_length() -> None:
    end = read_window("hello world", name="x", offset_chars=11)
    assert end.content == ""
    assert end.next_offset_chars is None
    assert end.text == "[x · chars 11-11 of 11 · end]\n"
    with pytest.raises(ReadRangeError, match="past the end") as caught:
        read_window("hello world", name="x", offset_chars=12)
    assert (caught.value.offset_chars, caught.value.total_chars) == (12, 11)


@pytest.mark.parametrize("bad", [0, 50_001, -1, "10", 2.5, True])
def test_read_window_rejects_bad_limits(bad: object) -> None:
    with pytest.raises(ValueError, match="limit_chars"):
        read_window("abc", name="x", limit_chars=bad)


def test_read_window_delivers_lone_surrogates_as_replacement_characters() -> None:
    window = read_window("a\ud800b\udfffc", name="x\udc00", offset_chars=1, limit_chars=3)
    assert window.content == "\ufffdb\ufffd"
    assert (window.offset_chars, window.end_chars, window.total_chars) == (1, 4, 5)
    window.text.encode("utf-8")  # valid UTF-8: it can be printed and sent as is


def test_read_window_header_cannot_hold_a_newline_or_a_huge_name() -> None:
    window = read_window("body", name="a\nb" + "n" * 10_000, suffix=["x\ny"])
    header = window.text.split("\n", 1)[0]
    assert "\n" not in header
    assert len(header) < HEADER_FIELD_MAX_CHARS + 100
    assert window.content == "body"


@settings(max_examples=200, deadline=None)
@given(
    text=any_text,
    limit=st.integers(min_value=1, max_value=60),
    budget=st.integers(min_value=90, max_value=300),
    start=st.integers(min_value=-500, max_value=500),
)
def test_following_read_cursors_reconstructs_any_text_exactly(
    text: str, limit: int, budget: int, start: int
) -> None:
    offset = max(-len(text), min(start, len(text)))
    expected = text[offset:] if offset < 0 else text[offset:]
    parts: list[str] = []
    cursor: int | None = offset
    calls = 0
    while cursor is not None:
        window = read_window(
            text, name="item", offset_chars=cursor, limit_chars=limit, budget=budget
        )
        assert utf8_len(window.text) <= budget
        _, content, begin, end, total, nxt = _parse(window.text)
        assert total == len(text)
        assert content == text[begin:end]
        assert nxt == window.next_offset_chars
        assert nxt is None or (nxt == end and end < total)
        assert len(content) <= limit
        assert content or begin == total, "a read before the end always makes progress"
        parts.append(content)
        cursor = nxt
        calls += 1
        assert calls <= len(text) + 1
    assert "".join(parts) == expected
