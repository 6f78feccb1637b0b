"""``context_history_*`` on a resident host: the session's branch is parsed once and held while
the file's ``stat`` vouches for it; any change (an append, an edit of the same size, a swapped
file) is seen on the next call. And the search's fast path (records passed over when the query
is not in them) finds exactly what the UTF-16 search finds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from pi_context.bindings.handoff import held
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import HistoryRecord, RecordSearch
from pi_context.bindings.handoff.text import Utf16Text
from pi_context.bindings.history import scan as held_scan
from pi_context.bindings.session import Session
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext


def search(path: Path, query: str) -> list[str]:
    result = all_tools()["context_history_search"].run(
        ToolContext(session_path=path), {"query": query, "limit": 20}
    )
    assert not result.is_error, result.text
    return [item["text"] for item in json.loads(result.text)["items"]]


def test_the_branch_is_parsed_once_while_the_file_is_unchanged(tmp_path: Path) -> None:
    session = Session.create(tmp_path, tmp_path)
    session.append_message({"role": "user", "content": "alpha one"})
    path = session.path
    assert path is not None
    made: list[int] = []

    def make() -> RecordSearch:
        made.append(1)
        return RecordSearch([])

    time.sleep(held_scan.RACY_NS / 1e9 + 0.1)  # until the file's stat can vouch for it
    first = held.held_records(path, None, make)
    assert held.held_records(path, None, make) is first and len(made) == 1
    assert held.held_records(path, "other-leaf", make) is not first, "a branch of its own"
    session.append_message({"role": "user", "content": "alpha two"})
    assert held.held_records(path, None, make) is not first, "an append is seen"
    assert any("alpha two" in t for t in search(path, "alpha"))


def test_a_same_size_edit_or_a_swapped_file_is_seen(tmp_path: Path) -> None:
    session = Session.create(tmp_path, tmp_path)
    session.append_message({"role": "user", "content": "alpha one"})
    path = session.path
    assert path is not None
    assert search(path, "alpha one")
    data = path.read_bytes()
    path.write_bytes(data.replace(b"alpha one", b"gamma one"))  # same size, in place
    assert search(path, "gamma one") and not search(path, "alpha one")
    swapped = path.with_suffix(".new")
    swapped.write_bytes(data)
    os.replace(swapped, path)  # another inode
    assert search(path, "alpha one") and not search(path, "gamma one")


# Astral characters (two UTF-16 units) and their halves alone: a half is found inside a pair
# in UTF-16 units, never in code points, so such queries take the slow path.
pieces = st.sampled_from(["a", "b", " ", "é", "🎉", "\ud83c", "\udf89"])
texts = st.text(pieces, max_size=12)


@given(records=st.lists(texts, max_size=8), query=st.text(pieces, min_size=1, max_size=3))
@example(records=["\ud83c\udf89"], query="🎉")  # two lone halves are one character in UTF-16
def test_passing_over_records_finds_what_the_utf16_search_finds(
    records: list[str], query: str
) -> None:
    found = RecordSearch(
        [HistoryRecord(f"r{i}", "user", "t", text) for i, text in enumerate(records)]
    )
    try:
        fast = found.search(query, 0, 20)
    except HandoffError:
        return  # a query the tool refuses (blank, say)
    expected = [r.id for r in found.records if Utf16Text(r.text).index_of(query) >= 0][:20]
    assert [item.id for item in fast.items] == expected
