"""Properties over random sessions written through the session binding and reopened from disk.

For any session, filters and page sizes: following ``next_cursor`` yields every matching item
exactly once, in order; every response fits the byte budget; following read cursors
reconstructs any item's content exactly, for any Unicode (astral code points included).
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history.items import ROLES, TOOL_ROLES, History, Item, project_history
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tools import ToolContext

from .conftest import MARKER, TOOLS_BY_NAME, parse_read, session_file

# Every code point a session can carry (lone surrogates cannot be written as UTF-8).
chars = st.characters(exclude_categories=("Cs",))
small_text = st.text(chars, max_size=40)
# Mostly small, sometimes far larger than a page, so budget truncation is exercised.
content = st.one_of(
    small_text,
    st.builds(
        lambda s, n: (s or "x") * n,
        st.text(chars, min_size=1, max_size=4),
        st.integers(min_value=2_000, max_value=14_000),
    ),
)
max_chars = st.sampled_from([1, 5, 1_200, 50_000]) | st.integers(1, 50_000)
tool_names = st.sampled_from(["bash", "read", "notes_read", "notes_write", "history_list"])

op = st.one_of(
    st.tuples(st.just("user"), content),
    st.tuples(
        st.just("assistant"), content, st.lists(st.tuples(tool_names, small_text), max_size=3)
    ),
    st.tuples(st.just("tool"), content, tool_names, st.booleans()),
    st.tuples(st.just("bash"), small_text, content),
    st.tuples(st.just("custom"), st.sampled_from(["pi-context/guidance", "other/x"]), content),
    st.tuples(st.just("compaction"), small_text),
    st.tuples(st.just("reset")),
    st.tuples(st.just("branch"), st.integers(min_value=1, max_value=6)),
)


def write_session(directory: Path, ops: list[tuple[Any, ...]]) -> Path:
    """Write ``ops`` through the session binding and return the file it persisted."""
    session = Session.create("/tmp/pi-context-history-props", session_dir=directory)
    session.append_message({"role": "user", "content": "start", "timestamp": 1})
    resets = 0
    for operation in ops:
        kind = operation[0]
        if kind == "user":
            session.append_message({"role": "user", "content": operation[1], "timestamp": 2})
        elif kind == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": operation[1]}]
            blocks += [
                {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": {"arg": arg}}
                for i, (name, arg) in enumerate(operation[2])
            ]
            session.append_message(
                {"role": "assistant", "content": blocks, "stopReason": "stop", "timestamp": 3}
            )
        elif kind == "tool":
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": "c0",
                    "toolName": operation[2],
                    "content": [{"type": "text", "text": operation[1]}],
                    "isError": operation[3],
                    "timestamp": 4,
                }
            )
        elif kind == "bash":
            session.append_message(
                {
                    "role": "bashExecution",
                    "command": operation[1],
                    "output": operation[2],
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 5,
                }
            )
        elif kind == "custom":
            session.append_custom_message(operation[1], operation[2], False)
        elif kind == "compaction":
            session.append_compaction(operation[1], None, 10)
        elif kind == "reset":
            resets += 1
            window_id = f"pcw:props000:{resets:08x}"
            session.append_compaction("", None, 10)
            session.append_custom(RESET_MARKER_TYPE, {"windowId": window_id})
            session.append_custom_message(BOOT_TYPE, "boot", False, {"windowId": window_id})
        elif kind == "branch":
            branch = session.branch()
            session.move_leaf(branch[max(0, len(branch) - 1 - operation[1])]["id"])
    return session_file(session, directory)


@dataclass
class Opened:
    path: Path
    history: History

    def run(self, name: str, args: dict[str, Any]) -> Any:
        result = TOOLS_BY_NAME[name].run(ToolContext(session_path=self.path), args)
        assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES, f"{name} {args} over budget"
        assert not result.is_error, result.text
        return result


def open_history(path: Path) -> Opened:
    session = Session.open(path)
    return Opened(path, project_history(session.branch(), session.session_id))


def expected(items: list[Item], role: str | None, window: str | None, newest: bool) -> list[str]:
    chosen = [
        i.item_id
        for i in items
        if (role is None or i.role == role) and (window is None or i.window_id == window)
    ]
    return chosen[::-1] if newest else chosen


def follow(opened: Opened, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cursor: int | str | None = 0
    while cursor is not None:
        page = json.loads(opened.run(name, {**args, "cursor": cursor}).text)
        assert page["items"] or cursor == 0, "a page before the end is never empty"
        if "limit" in args:
            assert len(page["items"]) <= args["limit"]
        rows.extend(page["items"])
        if any(MARKER.search(json.dumps(row, ensure_ascii=False)) for row in page["items"]):
            event("a page middle-truncated an oversized item")
        if len(page["items"]) > 1:
            event("a page held several items")
        if page["next_cursor"] is not None and not args.get("recent_first", True):
            assert isinstance(cursor, int), "oldest first pages by the published offsets"
            assert page["next_cursor"] == cursor + len(page["items"])
        elif page["next_cursor"] is not None:
            assert isinstance(page["next_cursor"], str), "newest first pages by keys"
        cursor = page["next_cursor"]
    return rows


common = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@common
@given(ops=st.lists(op, max_size=25), data=st.data())
def test_following_list_cursors_yields_every_matching_item_once_in_order(
    ops: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    if data.draw(st.booleans(), label="add an item larger than a page"):
        ops = [*ops, ("user", "🎉進é" * 7_000)]
    with tempfile.TemporaryDirectory() as tmp:
        opened = open_history(write_session(Path(tmp), ops))
        items = list(opened.history.items())
        role = data.draw(st.none() | st.sampled_from(ROLES), label="role")
        window = data.draw(st.none() | st.sampled_from(opened.history.window_ids), label="window")
        newest = data.draw(st.booleans(), label="recent_first")
        args: dict[str, Any] = {"recent_first": newest, "role": role, "window_id": window}
        args["max_chars_per_item"] = data.draw(max_chars, label="max_chars")
        limit = data.draw(st.none() | st.integers(1, 7), label="limit")
        if limit is not None:
            args["limit"] = limit
        rows = follow(opened, "history_list", args)
        assert [r["item_id"] for r in rows] == expected(items, role, window, newest)
        by_id = {i.item_id: i for i in items}
        for row in rows:
            item = by_id[row["item_id"]]
            assert row["total_chars"] == len(item.content)
            assert row["role"] == item.role and row["window_id"] == item.window_id
            shown = row["truncated_content"]
            if shown == item.content:
                assert row["truncated"] is False
            else:
                assert row["truncated"] is True
            if row["role"] not in TOOL_ROLES:
                assert row["tool_name"] is None


@common
@given(ops=st.lists(op, max_size=25), data=st.data())
def test_following_search_cursors_yields_every_hit_once_in_order(
    ops: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    if data.draw(st.booleans(), label="add an item larger than a page"):
        ops = [*ops, ("tool", "🎉進é" * 7_000 + "tail", "bash", False)]
    with tempfile.TemporaryDirectory() as tmp:
        opened = open_history(write_session(Path(tmp), ops))
        items = list(opened.history.items())
        # Queries drawn from real contents (so there are hits) and from thin air.
        pieces = [i.content[a : a + 3] for i in items for a in (0, len(i.content) // 2)]
        pool = [p for p in pieces if p] or ["start"]
        queries = data.draw(
            st.lists(
                st.sampled_from(pool) | st.text(chars, min_size=1, max_size=3),
                min_size=1,
                max_size=3,
            ),
            label="queries",
        )
        newest = data.draw(st.booleans(), label="recent_first")
        role = data.draw(st.none() | st.sampled_from(ROLES), label="role")
        args: dict[str, Any] = {
            "query": queries,
            "recent_first": newest,
            "role": role,
            "max_chars_per_item": data.draw(max_chars, label="max_chars"),
        }
        limit = data.draw(st.none() | st.integers(1, 5), label="limit")
        if limit is not None:
            args["limit"] = limit
        rows = follow(opened, "history_search", args)
        matching = [i for i in items if any(q in i.content for q in queries)]
        assert [r["item_id"] for r in rows] == expected(matching, role, None, newest)
        by_id = {i.item_id: i for i in items}
        for row in rows:
            text = by_id[row["item_id"]].content
            offset = row["match_offset_chars"]
            assert any(text.startswith(q, offset) for q in queries)
            assert not any(q in text[: offset + len(q) - 1] for q in queries), "the first match"


@common
@given(ops=st.lists(op, min_size=1, max_size=15), data=st.data())
def test_following_read_cursors_reconstructs_any_item_exactly(
    ops: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        opened = open_history(write_session(Path(tmp), ops))
        item = data.draw(st.sampled_from(list(opened.history.items())), label="item")
        total = len(item.content)
        start = data.draw(st.integers(-total - 3, total), label="offset")
        limit = data.draw(st.integers(1, 50_000), label="limit")
        expected_text = item.content[start:] if start < 0 else item.content[start:]
        parts: list[str] = []
        cursor: int | None = start
        while cursor is not None:
            read = parse_read(
                opened.run(
                    "history_read",
                    {
                        "window_id": item.window_id,
                        "item_id": item.item_id,
                        "offset_chars": cursor,
                        "limit_chars": limit,
                    },
                )
            )
            assert read.total_chars == total
            assert len(read.content) <= limit
            assert read.content or read.offset_chars == total, "reads make progress"
            assert set(read.details) == {
                "window_id",
                "item_id",
                "offset_chars",
                "total_chars",
                "next_offset_chars",
                "limit_chars",
            }
            parts.append(read.content)
            if read.next_offset_chars is not None:
                event("a read continued")
            cursor = read.next_offset_chars
        assert "".join(parts) == expected_text


@common
@given(
    ops=st.lists(op, max_size=12),
    huge=st.lists(st.integers(min_value=11_000, max_value=40_000), min_size=1, max_size=3),
    data=st.data(),
)
def test_items_larger_than_a_page_are_truncated_visibly_and_paging_still_advances(
    ops: list[tuple[Any, ...]], huge: list[int], data: st.DataObject
) -> None:
    for size in huge:
        ops = [*ops, ("user", ("🎉進é" * size)[:size] + " needle")]
    with tempfile.TemporaryDirectory() as tmp:
        opened = open_history(write_session(Path(tmp), ops))
        items = list(opened.history.items())
        newest = data.draw(st.booleans(), label="recent_first")
        cap = data.draw(st.integers(20_000, 50_000), label="max_chars")
        for name, extra in (("history_list", {}), ("history_search", {"query": "needle"})):
            rows = follow(
                opened, name, {"recent_first": newest, "max_chars_per_item": cap, **extra}
            )
            wanted = [i for i in items if name == "history_list" or "needle" in i.content]
            assert [r["item_id"] for r in rows] == expected(wanted, None, None, newest)
            by_id = {i.item_id: i for i in items}
            for row in rows:
                text = by_id[row["item_id"]].content
                shown = row["truncated_content"]
                match = re.fullmatch(r"(.*)…\[truncated (\d+) chars\]…(.*)", shown, re.DOTALL)
                if match is None:
                    assert shown == text[:cap]
                else:
                    event("budget middle-truncated an item")
                    assert row["truncated"] is True
                    assert text.startswith(match.group(1)) and text[:cap].endswith(match.group(3))
                    assert len(match.group(1)) + len(match.group(3)) + int(match.group(2)) == len(
                        text[:cap]
                    )
