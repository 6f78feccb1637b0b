"""The history index held open across calls (a resident host): it answers as the file says
after appends, a cache cleared or rebuilt by someone else, and keeps what it loaded only while
nothing changed."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.history import resident
from pi_context.bindings.history.index import HistoryIndex, cache_dir_for
from pi_context.bindings.session.jsonl import encode_line

from .conftest import Harness


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PI_CONTEXT_HISTORY_INDEX", raising=False)
    resident.close_all()


def texts(harness: Harness, args: dict[str, Any] | None = None) -> list[str]:
    page = harness.json("history_list", args or {})
    return [row["truncated_content"] for row in page["items"]]


def held(harness: Harness) -> HistoryIndex:
    with resident.held_index(harness.path) as index:
        return index


def test_an_unchanged_file_is_answered_from_what_was_loaded(tmp_path: Path) -> None:
    harness = Harness(tmp_path)
    for word in ("alpha", "beta", "gamma"):
        harness.text("user", word)
    assert texts(harness) == ["gamma", "beta", "alpha"]
    index = held(harness)
    assert not index._columns, "a first call (a one-shot command) reads values in place"
    assert texts(harness) == ["gamma", "beta", "alpha"]
    assert index.resident, "asked again in this process: a resident host"
    view, columns = index.file_view, dict(index._columns)
    assert columns, "the call loaded columns"
    assert harness.json("history_search", {"query": "beta"})["items"]
    assert held(harness) is index and index.file_view is view
    assert all(index._columns[name] is column for name, column in columns.items())


def test_appends_another_process_indexed_and_a_cleared_cache_are_seen(tmp_path: Path) -> None:
    harness = Harness(tmp_path)
    harness.text("user", "alpha")
    assert texts(harness) == ["alpha"]
    harness.text("user", "beta")  # appended: the held index catches up
    assert texts(harness) == ["beta", "alpha"]
    harness.text("user", "gamma")
    with HistoryIndex(harness.path) as other:  # another process indexes the append first
        other.open_view(None)
    assert texts(harness) == ["gamma", "beta", "alpha"]
    shutil.rmtree(cache_dir_for(harness.path))  # cache cleared under the held index
    harness.text("user", "delta")
    assert texts(harness) == ["delta", "gamma", "beta", "alpha"]
    with HistoryIndex(harness.path) as other:  # rebuilt by someone else
        other.discard()
        other.open_view(None)
    harness.text("user", "epsilon")
    assert texts(harness)[:2] == ["epsilon", "delta"]
    search = harness.json("history_search", {"query": "epsilon"})
    assert [row["truncated_content"] for row in search["items"]] == ["epsilon"]


def test_at_most_a_few_indexes_are_held(tmp_path: Path) -> None:
    harnesses = [Harness(tmp_path / f"s{n}") for n in range(resident.HELD_MAX + 2)]
    for n, harness in enumerate(harnesses):
        harness.directory.mkdir(exist_ok=True)
        harness.text("user", f"session {n}")
        assert json.loads(harness.call("history_windows").text)["windows"]
    assert len(resident._held) == resident.HELD_MAX


def test_an_error_answer_keeps_what_was_loaded(tmp_path: Path) -> None:
    """A call answered with an error (an unknown id, a bad argument) is an answer: the index
    and what it loaded stay held, so a typo does not cost the next call a reload."""
    harness = Harness(tmp_path)
    for word in ("alpha", "beta"):
        harness.text("user", word)
    texts(harness)
    texts(harness)
    index = held(harness)
    columns = dict(index._columns)
    assert columns
    result = harness.call("history_read", {"item_id": "no-such-item"})
    assert result.is_error and "unknown item_id" in result.text
    assert held(harness) is index and index.db is not None
    assert all(index._columns[name] is column for name, column in columns.items())


_ID = st.sampled_from(["a", "b", "x\ny", "é", "a\n", "\nz", "0123abcd"])


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(_ID, min_size=1, max_size=12), asked=_ID)
def test_a_resident_id_lookup_finds_what_the_column_scan_finds(ids: list[str], asked: str) -> None:
    """Held open, ids are looked up in a table of their hashes made once; it names the same
    items as the byte search of the id column a one-shot call makes, repeated ids (a
    hand-edited file) and ids holding newlines included."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        header = {"type": "session", "version": 3, "id": "s-1", "timestamp": "t", "cwd": "/"}
        lines = [encode_line(header)]
        for n, entry_id in enumerate(ids):
            message = {"role": "user", "content": f"m{n}", "timestamp": 1}
            entry = {"type": "message", "id": entry_id, "parentId": None, "timestamp": "t"}
            lines.append(encode_line({**entry, "message": message}))
        path.write_bytes(b"".join(lines))
        with HistoryIndex(path, Path(tmp) / "cache") as index:
            index.open_view(None)
            strings = index._strings("i_id")
            for item_id in {*strings.all(), asked}:
                scanned = index.find_ids(item_id)
                assert scanned == strings.positions(item_id)
                index.resident = True
                assert index.find_ids(item_id) == scanned
                index.resident = False


def test_a_long_lived_host_holds_an_index_as_resident_from_its_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP server says it is long-lived: its first history call (the open) loads what
    later calls use, rather than the second call paying for it."""
    harness = Harness(tmp_path)
    harness.text("user", "alpha")
    assert texts(harness) == ["alpha"]
    assert not held(harness)._columns, "a one-shot process reads values in place"
    resident.close_all()
    import gc

    from pi_context.support import heap

    assert gc.get_freeze_count() == 0, "nothing else freezes the test process"
    monkeypatch.setattr(heap, "_long_lived", True)  # what heap.long_lived_host() declares
    try:
        assert texts(harness) == ["alpha"]
        index = held(harness)
        assert index.resident and index._columns and index._id_table is not None
    finally:
        gc.unfreeze()  # the settle after that load froze the test process's heap


def test_a_role_page_looks_only_as_far_as_it_shows() -> None:
    """A role filter's positions are found from the nearer end as pages ask (a newest-first
    page reads from the end), and a cursor resumes by counting, not by probing them."""
    from pi_context.bindings.history.indexed import _Reversed, _RolePositions

    roles = bytearray(b"\x01\x02\x03" * 10_000)
    ascending = _RolePositions(roles, 2)
    assert len(ascending) == 10_000
    newest = _Reversed(ascending)
    assert [newest[i] for i in range(5)] == [29_998, 29_995, 29_992, 29_989, 29_986]
    assert len(ascending._tail) == 5 and not ascending._head
    assert newest.first_at_or_before(29_990) == 3 and len(ascending._tail) == 5
    assert [ascending[i] for i in range(3)] == [1, 4, 7] and len(ascending._head) == 3
    assert list(ascending) == list(range(1, 30_000, 3))


def test_a_long_lived_host_freezes_what_a_resident_load_leaves_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a resident load, a long-lived host collects once and freezes what is alive, so
    later full collections do not traverse what it holds; a one-off process never does."""
    import gc

    from pi_context.support import heap

    held_now = [[n] for n in range(1_000)]  # what a load leaves held
    gc.unfreeze()
    try:
        monkeypatch.setattr(heap, "_long_lived", False)
        heap.settle_after_load()
        assert gc.get_freeze_count() == 0
        heap.long_lived_host()
        heap.settle_after_load()
        assert gc.get_freeze_count() >= len(held_now)
        assert not any(o is held_now for o in gc.get_objects()), "frozen: not traversed"
    finally:
        gc.unfreeze()
