"""``RecordSearch`` holds its records compactly (one UTF-8 buffer, matches found once per
query by a byte search): every page equals the plain scan of the seed's rule, record by
record in UTF-16 code units, whatever the texts and queries hold (lone surrogates, astral
characters, matches that would straddle two records in the buffer) and however often a
query is asked again."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.handoff.history import (
    EXCERPT_BYTES,
    LEAD_IN_UNITS,
    HistoryRecord,
    RecordSearch,
    SearchPage,
)
from pi_context.bindings.handoff.text import Utf16Text, fit_text


def plain_scan(records: list[HistoryRecord], query: str, offset: int, limit: int) -> SearchPage:
    """The seed's search: every record in order, ``indexOf`` in UTF-16 units."""
    by_id: dict[str, HistoryRecord] = {}
    for record in records:
        by_id[record.id] = record
    items: list[HistoryRecord] = []
    matched = 0
    for record in by_id.values():
        text = Utf16Text(record.text)
        position = text.index_of(query)
        if position < 0:
            continue
        matched += 1
        if matched <= offset:
            continue
        if len(items) == limit:
            return SearchPage(items, offset + len(items), True)
        start = max(0, position - LEAD_IN_UNITS)
        if start > 0 and text.is_low_surrogate(start):
            start -= 1
        items.append(
            replace(record, text=fit_text(text.slice(start), EXCERPT_BYTES), start_offset=start)
        )
    return SearchPage(items, offset + len(items), False)


ALPHABET = st.sampled_from(["a", "b", "ab", "é", "進", "😀", "\ud83d", "\ude00", "\n", " "])
texts = st.lists(ALPHABET, max_size=12).map("".join)
queries = st.lists(ALPHABET, min_size=1, max_size=3).map("".join).filter(lambda q: q.strip())


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(texts, max_size=12),
    ids=st.lists(st.sampled_from(["r0", "r1", "r2", "r3", "r4"]), min_size=12, max_size=12),
    query=queries,
    offset=st.integers(0, 6),
    limit=st.integers(1, 4),
)
@example(texts=["a", "b"], ids=["r0", "r1"] * 6, query="ab", offset=0, limit=1)  # straddles
@example(texts=["\ud83d\ude00"], ids=["r0"] * 12, query="😀", offset=0, limit=1)  # halves
def test_every_page_is_the_plain_scans(
    texts: list[str], ids: list[str], query: str, offset: int, limit: int
) -> None:
    records = [HistoryRecord(ids[n], "user", f"t{n}", text) for n, text in enumerate(texts)]
    search = RecordSearch(records)
    want = plain_scan(records, query, offset, limit)
    assert search.search(query, offset, limit) == want
    assert search.search(query, offset, limit) == want, "asked again: from the held matches"
    for record in {r.id: r for r in records}.values():
        assert search.get(record.id) == record


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(texts, max_size=12),
    query=queries,
    pages=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 4)), min_size=1, max_size=6),
)
def test_pages_asked_in_any_order_are_the_plain_scans(
    texts: list[str], query: str, pages: list[tuple[int, int]]
) -> None:
    """Matches are found lazily and kept per query: any later page, deeper or shallower,
    still equals the plain scan."""
    records = [HistoryRecord(f"r{n}", "user", f"t{n}", text) for n, text in enumerate(texts)]
    search = RecordSearch(records)
    for offset, limit in pages:
        assert search.search(query, offset, limit) == plain_scan(records, query, offset, limit)


def test_a_page_looks_only_as_far_as_it_shows() -> None:
    """A query that every record holds finds the page and one more match, not all of them;
    the next page goes on from there."""
    records = [HistoryRecord(f"r{n}", "user", "t", f"quick {n}") for n in range(10_000)]
    search = RecordSearch(records)
    first = search.search("quick", 0, 10)
    assert [r.id for r in first.items] == [f"r{n}" for n in range(10)] and first.has_more
    assert len(search._memo["quick"].found) == 11
    second = search.search("quick", 10, 10)
    assert [r.id for r in second.items] == [f"r{n}" for n in range(10, 20)]
    assert len(search._memo["quick"].found) == 21
    last = search.search("quick", 9_995, 10)
    assert [r.id for r in last.items] == [f"r{n}" for n in range(9_995, 10_000)]
    assert not last.has_more
