"""Paging a live session: items are appended between page calls (as every history call appends
its own call and result). A walk of all pages lists every row present at its start exactly
once, in order, and ends; on both the indexed and the unindexed path, for every paged tool:
the history tools and the handoff's ``context_history_search`` (which pages by offset in
branch order, as published: appends land after its last page, so they never shift one).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.handoff.history import extract_records
from pi_context.bindings.handoff.tools import CONTEXT_HISTORY_SEARCH
from pi_context.bindings.history.index import DISABLE_ENV
from pi_context.bindings.history.items import project_history
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tools import ToolContext

from .conftest import TOOLS_BY_NAME, session_file

WORDS = ("alpha", "beta", "gamma")

append_op = st.one_of(
    st.tuples(st.just("user"), st.sampled_from(WORDS)),
    st.tuples(st.just("call"), st.sampled_from(WORDS)),  # a tool call and its result
    st.tuples(st.just("reset"), st.just("")),
)


class Live:
    """A session file that grows while it is paged."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.session = Session.create("/tmp/pi-context-live-paging", session_dir=directory)
        self.resets = 0
        self.calls = 0

    def append(self, op: tuple[str, str]) -> None:
        kind, word = op
        session = self.session
        if kind == "user":
            session.append_message({"role": "user", "content": f"{word} said", "timestamp": 1})
        elif kind == "call":
            self.calls += 1
            call_id = f"c{self.calls}"
            session.append_message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": call_id, "name": "history_list", "arguments": {}}
                    ],
                    "stopReason": "toolUse",
                    "timestamp": 2,
                }
            )
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "history_list",
                    "content": [{"type": "text", "text": f"{word} result"}],
                    "isError": False,
                    "timestamp": 3,
                }
            )
        else:
            self.resets += 1
            window_id = f"pcw:live0000:{self.resets:08x}"
            session.append_compaction("", None, 10)
            session.append_custom(RESET_MARKER_TYPE, {"windowId": window_id})
            session.append_custom_message(BOOT_TYPE, "boot", False, {"windowId": window_id})

    @property
    def path(self) -> Path:
        return session_file(self.session, self.directory)

    def ids(self, key: str, accept: Any) -> list[str]:
        """The ids present now, oldest first: items (``accept``-ed) or windows."""
        reopened = Session.open(self.path, readonly=True)
        history = project_history(reopened.branch(), reopened.session_id)
        if key == "windows":
            return history.window_ids
        return [item.item_id for item in history.items() if accept(item)]

    def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = TOOLS_BY_NAME[name].run(ToolContext(session_path=self.path), args)
        decoded: dict[str, Any] = json.loads(result.text)
        assert not result.is_error, result.text
        return decoded


@contextmanager
def index_switch(indexed: bool) -> Iterator[None]:
    before = os.environ.get(DISABLE_ENV)
    os.environ[DISABLE_ENV] = "1" if indexed else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[DISABLE_ENV]
        else:
            os.environ[DISABLE_ENV] = before


def walk(
    live: Live, name: str, args: dict[str, Any], key: str, appends: list[list[tuple[str, str]]]
) -> list[str]:
    """Follow next_cursor from the start, appending ``appends[i]`` after page ``i``."""
    row_key = "window_id" if key == "windows" else "item_id"
    rows: list[str] = []
    cursor: int | str | None = 0
    pages = 0
    while cursor is not None:
        page = live.run(name, {**args, "cursor": cursor})
        assert page[key] or cursor == 0, "a page before the end is never empty"
        rows.extend(row[row_key] for row in page[key])
        cursor = page["next_cursor"]
        for op in appends[pages] if pages < len(appends) else []:
            live.append(op)
        pages += 1
        assert pages < 500, "the walk ends"
    return rows


TOOLS = {
    "history_list": ("items", {}),
    "history_search": ("items", {"query": ["alpha", "beta"]}),
    "history_windows": ("windows", {}),
}


def accepts(name: str, role: str | None) -> Any:
    def accept(item: Any) -> bool:
        if role is not None and item.role != role:
            return False
        return name != "history_search" or any(q in item.content for q in ("alpha", "beta"))

    return accept


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    name=st.sampled_from(sorted(TOOLS)),
    indexed=st.booleans(),
    newest=st.booleans(),
    limit=st.integers(1, 4),
    role=st.none() | st.sampled_from(["user", "tool", "tool_call"]),
    start=st.lists(append_op, min_size=1, max_size=12),
    appends=st.lists(st.lists(append_op, max_size=3), max_size=12),
)
def test_a_walk_during_appends_lists_every_row_present_at_its_start_once(
    name: str,
    indexed: bool,
    newest: bool,
    limit: int,
    role: str | None,
    start: list[tuple[str, str]],
    appends: list[list[tuple[str, str]]],
) -> None:
    key, extra = TOOLS[name]
    args: dict[str, Any] = {**extra, "limit": limit, "recent_first": newest}
    if key == "items" and role is not None:
        args["role"] = role
    with tempfile.TemporaryDirectory() as tmp, index_switch(indexed):
        live = Live(Path(tmp))
        live.session.append_message({"role": "user", "content": "start", "timestamp": 0})
        for op in start:
            live.append(op)
        accept = accepts(name, args.get("role"))
        present = live.ids(key, accept)
        rows = walk(live, name, args, key, appends)
        if newest:
            assert rows == present[::-1], "newest first: exactly the rows present at the start"
        else:
            # Oldest first: appends land after the cursor, so the walk may go on to them.
            assert rows[: len(present)] == present
            assert rows == live.ids(key, accept)[: len(rows)]
        assert len(set(rows)) == len(rows), "no row twice"


@pytest.mark.parametrize("indexed", [False, True])
def test_a_cursor_from_another_branch_is_refused_by_name(indexed: bool, tmp_path: Path) -> None:
    with index_switch(indexed):
        live = Live(tmp_path)
        live.session.append_message({"role": "user", "content": "start", "timestamp": 0})
        for word in WORDS * 3:
            live.append(("user", word))
        first = live.run("history_list", {"limit": 2})
        cursor = first["next_cursor"]
        assert isinstance(cursor, str)
        # The leaf moves back five entries and the session goes on from there: the item the
        # cursor named is no longer on the branch at its position.
        branch = live.session.branch()
        live.session.move_leaf(branch[-6]["id"])
        for word in WORDS * 2:
            live.append(("user", word))
        result = TOOLS_BY_NAME["history_list"].run(
            ToolContext(session_path=live.path), {"limit": 2, "cursor": cursor}
        )
        assert result.is_error
        error = json.loads(result.text)
        assert "start again without a cursor" in error["error"]
        assert error["cursor"] == cursor


@pytest.mark.parametrize("indexed", [False, True])
def test_integer_and_malformed_cursors(indexed: bool, tmp_path: Path) -> None:
    with index_switch(indexed):
        live = Live(tmp_path)
        live.session.append_message({"role": "user", "content": "start", "timestamp": 0})
        for word in WORDS * 2:
            live.append(("user", word))
        everything = [r["item_id"] for r in live.run("history_list", {})["items"]]
        # A newest-first integer keeps its published meaning: an offset from the newest item,
        # and the page answers with a key from then on.
        page = live.run("history_list", {"cursor": 2, "limit": 2})
        assert [r["item_id"] for r in page["items"]] == everything[2:4]
        assert isinstance(page["next_cursor"], str)
        resumed = live.run("history_list", {"cursor": page["next_cursor"]})
        assert [r["item_id"] for r in resumed["items"]] == everything[4:]
        # Oldest first keeps the published integer offsets.
        oldest = live.run("history_list", {"recent_first": False, "limit": 3})
        assert oldest["next_cursor"] == 3
        for bad, says in (
            ("p1", "exactly as a newest-first page returned it"),
            ("12", "exactly as a newest-first page returned it"),
            ("p99.00000000", "start again without a cursor"),
            (1.5, "exactly as a page returned it"),
        ):
            result = TOOLS_BY_NAME["history_list"].run(
                ToolContext(session_path=live.path), {"cursor": bad}
            )
            assert result.is_error and says in json.loads(result.text)["error"], (bad, result)
        mixed = TOOLS_BY_NAME["history_list"].run(
            ToolContext(session_path=live.path),
            {"cursor": page["next_cursor"], "recent_first": False},
        )
        assert mixed.is_error and "came from a newest-first page" in mixed.text


def context_search_ids(live: Live, query: str) -> list[str]:
    """The ids of the records holding ``query`` now, in branch order (the last record with an
    id wins, in the first one's place, as ``RecordSearch`` keeps them)."""
    reopened = Session.open(live.path, readonly=True)
    by_id = {record.id: record for record in extract_records(reopened.branch())}
    return [record_id for record_id, record in by_id.items() if query in record.text]


def context_walk(
    live: Live, query: str, limit: int, appends: list[list[tuple[str, str]]]
) -> list[str]:
    """Follow ``nextOffset`` while ``hasMore``, appending ``appends[i]`` after page ``i``."""
    rows: list[str] = []
    offset = 0
    pages = 0
    while True:
        result = CONTEXT_HISTORY_SEARCH.run(
            ToolContext(session_path=live.path), {"query": query, "offset": offset, "limit": limit}
        )
        assert not result.is_error, result.text
        page = json.loads(result.text)
        assert page["items"] or offset == 0, "a page before the end is never empty"
        rows.extend(item["id"] for item in page["items"])
        assert page["nextOffset"] == offset + len(page["items"])
        if not page["hasMore"]:
            return rows
        offset = page["nextOffset"]
        for op in appends[pages] if pages < len(appends) else []:
            live.append(op)
        pages += 1
        assert pages < 500, "the walk ends"


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    query=st.sampled_from(["alpha", "result", "said"]),
    limit=st.integers(1, 4),
    start=st.lists(append_op, min_size=1, max_size=12),
    appends=st.lists(st.lists(append_op, max_size=3), max_size=12),
)
def test_a_context_history_search_walk_during_appends_lists_every_match_once(
    query: str,
    limit: int,
    start: list[tuple[str, str]],
    appends: list[list[tuple[str, str]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        live = Live(Path(tmp))
        live.session.append_message({"role": "user", "content": "start", "timestamp": 0})
        for op in start:
            live.append(op)
        present = context_search_ids(live, query)
        rows = context_walk(live, query, limit, appends)
        assert rows[: len(present)] == present, "every match present at the start, in order"
        assert rows == context_search_ids(live, query)[: len(rows)], "then only later matches"
        assert len(set(rows)) == len(rows), "no record twice"
        again = context_walk(live, query, 20, [])
        assert again == context_search_ids(live, query), "a new walk sees every append"
