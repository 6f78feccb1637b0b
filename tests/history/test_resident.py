"""The history index held open across calls (a resident host): it answers as the file says
after appends, a cache cleared or rebuilt by someone else, and keeps what it loaded only while
nothing changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history import resident
from pi_context.bindings.history.index import HistoryIndex, cache_dir_for

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
