"""History records for handoff: extraction, literal search and UTF-16 reads (seed limits)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import HistoryRecord, RecordSearch, extract_records
from pi_context.bindings.handoff.text import byte_cost, fit_text, utf16_len
from pi_context.bindings.session import Session

from .conftest import new_session, user


def test_extraction_roles_and_prefixes(conversation: Session) -> None:
    records = extract_records(conversation.branch())
    assert [r.role for r in records] == [
        "user",
        "assistant",
        "toolResult",
        "summary",
        "bashExecution",
        "custom",
    ]
    by_role = {r.role: r for r in records}
    assert 'Tool call read: {"path":"src/parser.py"}' in by_role["assistant"].text
    assert by_role["summary"].text.startswith("[Historical compaction summary;")
    assert by_role["summary"].text.endswith("\nEarlier: the user wants a Rust port.")
    assert by_role["bashExecution"].text == "Command: cargo build\nerror[E0425]: cannot find value"
    assert by_role["custom"].text.startswith('[Extension message "some-extension";')


def test_extraction_skips_what_cannot_be_quoted() -> None:
    s = new_session()
    s.append_custom_message("ext", [{"type": "image", "data": "x", "mimeType": "image/png"}], True)
    s.append_message(
        {"role": "bashExecution", "command": "ls", "output": "", "excludeFromContext": True}
    )
    s.append_message({"role": "user", "content": [], "timestamp": 1})
    s.append_message(
        {"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "i/p"}]}
    )
    s.append_custom("not-a-message", {"x": 1})
    records = extract_records(s.branch())
    assert [r.text for r in records] == ["[Image content is not indexed]"]


def _index(*texts: str) -> RecordSearch:
    return RecordSearch([HistoryRecord(f"r{i}", "user", "", t) for i, t in enumerate(texts)])


@pytest.mark.parametrize(
    ("query", "offset", "limit"),
    [
        ("", 0, 5),
        ("   ", 0, 5),
        ("x" * 257, 0, 5),
        ("😀" * 129, 0, 5),  # 258 UTF-16 units
        ("x", -1, 5),
        ("x", 0, 0),
        ("x", 0, 21),
        ("x", 0.5, 5),
        ("x", 0, True),
        (5, 0, 5),
    ],
)
def test_invalid_queries(query: Any, offset: Any, limit: Any) -> None:
    with pytest.raises(HandoffError) as err:
        _index("x").search(query, offset, limit)
    assert err.value.code == "invalid_query"


def test_search_limits_accept_bounds() -> None:
    index = _index(*["needle"] * 25)
    assert len(index.search("x" * 256, 0, 20).items) == 0
    page = index.search("needle", 0, 20)
    assert len(page.items) == 20 and page.has_more and page.next_offset == 20
    rest = index.search("needle", 20, 20)
    assert len(rest.items) == 5 and not rest.has_more and rest.next_offset == 25
    assert index.search("needle", 0, 1).items[0].id == "r0"


def test_search_lead_in_and_fit() -> None:
    text = "a" * 100 + "needle" + "b" * 3000
    item = _index(text).search("needle", 0, 1).items[0]
    assert item.start_offset == 40
    assert item.text.startswith("a" * 60 + "needle")
    assert byte_cost(item.text) == 1100


def test_search_lead_in_never_splits_a_surrogate_pair() -> None:
    text = "😀" * 40 + "needle"  # needle at unit 80; 80-60 = 20 is a high surrogate
    assert _index(text).search("needle", 0, 1).items[0].start_offset == 20
    text = "😀" * 40 + "x" + "needle"  # needle at 81; 21 is a low surrogate -> 20
    item = _index(text).search("needle", 0, 1).items[0]
    assert item.start_offset == 20 and item.text.startswith("😀")


def test_read_pages_through_a_record() -> None:
    text = "é😀" * 500
    index = _index(text)
    pages, offset = [], 0
    while True:
        page = index.read("r0", offset, 100)
        assert byte_cost(page.text) <= 100
        pages.append(page.text)
        offset = page.next_offset
        if not page.has_more:
            break
    assert "".join(pages) == text and offset == utf16_len(text)


def test_read_errors() -> None:
    index = _index("a😀b")
    with pytest.raises(HandoffError, match="source_not_found"):
        index.read("missing", 0, 100)
    for bad in (-1, 5, 2, 0.5, "1", None):
        with pytest.raises(HandoffError) as err:
            index.read("r0", bad, 100)
        assert err.value.code == "invalid_offset", bad
    with pytest.raises(HandoffError, match="recall_budget"):
        index.read("r0", 1, 3)
    end = index.read("r0", 4, 100)
    assert end.text == "" and not end.has_more


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=0, max_size=200), st.integers(0, 400))
def test_fit_text_is_longest_safe_prefix(text: str, budget: int) -> None:
    fitted = fit_text(text, budget)
    assert text.startswith(fitted) and byte_cost(fitted) <= budget
    if fitted != text:
        assert byte_cost(text[: len(fitted) + 1]) > budget


@settings(max_examples=100, deadline=None)
@given(
    st.text(alphabet="ab😀é", min_size=1, max_size=80),
    st.text(alphabet="ab😀", min_size=1, max_size=3),
)
def test_search_matches_python_find(text: str, query: str) -> None:
    page = _index(text).search(query, 0, 20)
    assert bool(page.items) == (query in text)
    if page.items:
        start = page.items[0].start_offset
        assert start is not None
        assert utf16_len(text[: text.index(query)]) - start <= 60
        assert page.items[0].text in text


def test_last_duplicate_id_wins() -> None:
    index = RecordSearch(
        [HistoryRecord("x", "user", "", "one"), HistoryRecord("x", "user", "", "two")]
    )
    assert index.read("x", 0, 100).text == "two" and len(index.records) == 1


def test_records_from_a_real_branch() -> None:
    s = new_session()
    s.append_message(user("hello"))
    assert extract_records(s.branch())[0].text == "hello"


def test_tool_call_text_follows_javascript_string_conversion() -> None:
    from pi_context.bindings.handoff.history import content_text

    blocks = [
        {"type": "toolCall", "name": "read", "arguments": {"path": "a", "n": 1.5}},
        {"type": "toolCall", "arguments": None},
        {"type": "toolCall", "name": None},
        {"type": "text", "text": "tail"},
    ]
    assert content_text(blocks).split("\n") == [
        'Tool call read: {"path":"a","n":1.5}',
        "Tool call undefined: null",
        "Tool call null: undefined",
        "tail",
    ]
