"""Addresses the history tools hand out are whole and resolve when passed back.

The attack: a hand-edited session file carries a window id (in a marker) or entry ids far
longer than any tool result can show. A middle-truncated id looks like an id and resolves to
nothing, so an id is either delivered whole (up to ``ADDRESS_MAX_CHARS``) or reported as
unaddressable with its reason — identically with and without the history index.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.addresses import ADDRESS_MAX_CHARS, address_problem
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tools import ToolContext

from .conftest import MARKER, TOOLS_BY_NAME, parse_read


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


class Calls:
    """The four tools over one file, through the index or the plain projection."""

    def __init__(self, path: Path, indexed: bool) -> None:
        self.path = path
        self.indexed = indexed

    def raw(self, name: str, args: dict[str, Any] | None = None) -> Any:
        previous = os.environ.get("PI_CONTEXT_HISTORY_INDEX")
        os.environ["PI_CONTEXT_HISTORY_INDEX"] = "1" if self.indexed else "0"
        try:
            result = TOOLS_BY_NAME[name].run(ToolContext(session_path=self.path), args or {})
        finally:
            if previous is None:
                del os.environ["PI_CONTEXT_HISTORY_INDEX"]
            else:
                os.environ["PI_CONTEXT_HISTORY_INDEX"] = previous
        assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES
        return result

    def json(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(self.raw(name, args).text)
        return decoded

    def follow(self, name: str, args: dict[str, Any], key: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        cursor: int | None = 0
        while cursor is not None:
            page = self.json(name, {**args, "cursor": cursor})
            assert "error" not in page, page
            rows.extend(page[key])
            cursor = page["next_cursor"]
        return rows


def both(path: Path) -> Iterator[Calls]:
    yield Calls(path, indexed=False)
    yield Calls(path, indexed=True)


# --- building hostile files from real ones ----------------------------------------------------


def file_of(session: Session) -> Path:
    assert session.path is not None
    return session.path


def new_session(directory: Path) -> Session:
    session = Session.create("/tmp/pi-context-addresses", session_dir=directory)
    session.append_message({"role": "user", "content": "start", "timestamp": 1})
    return session


def reset(session: Session, window_id: str) -> None:
    """A reset as the runtime writes it: checkpoint, marker, boot."""
    session.append_compaction("", None, 100)
    session.append_custom(RESET_MARKER_TYPE, {"windowId": window_id})
    session.append_custom_message(BOOT_TYPE, "boot", False, {"windowId": window_id})


def rewrite_ids(path: Path, rename: dict[str, str], session_id: str | None = None) -> None:
    """Edit the file as an attacker would: entry ids (and the links to them) replaced."""
    lines = []
    for raw in path.read_text(encoding="utf-8").split("\n"):
        if not raw:
            continue
        entry = json.loads(raw)
        if entry.get("type") == "session":
            if session_id is not None:
                entry["id"] = session_id
        else:
            for key in ("id", "parentId", "firstKeptEntryId"):
                if entry.get(key) in rename:
                    entry[key] = rename[entry[key]]
        lines.append(json.dumps(entry, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def assert_round_trips(calls: Calls) -> int:
    """Every address any tool returns, passed back, resolves to what it named. Returns the
    number of addresses checked."""
    checked = 0
    windows = calls.follow("history_windows", {}, "windows")
    items = calls.follow("history_list", {"recent_first": False}, "items")
    for window in windows:
        window_id = window["window_id"]
        if window_id is None:
            assert address_problem_text(window)
            continue
        assert not MARKER.search(window_id)
        listed = calls.follow("history_list", {"window_id": window_id}, "items")
        assert len(listed) == window["item_count"]
        assert all(item["window_id"] == window_id for item in listed)
        checked += 1
    for item in items:
        if item["item_id"] is None:
            assert address_problem_text(item)
            continue
        args = {"item_id": item["item_id"], "limit_chars": 10}
        if item["window_id"] is not None:
            args["window_id"] = item["window_id"]
        read = parse_read(calls.raw("history_read", args))
        assert read.details["item_id"] == item["item_id"]
        assert read.details["window_id"] == item["window_id"]
        assert read.total_chars == item["total_chars"]
        assert read.header.startswith(f"[{item['item_id']} · ")
        if item["window_id"] is not None:
            assert f" · window {item['window_id']} · " in read.header
        checked += 1
    return checked


def address_problem_text(row: dict[str, Any]) -> str:
    note: str = row["unaddressable"]
    assert f"{ADDRESS_MAX_CHARS}-character address limit" in note or "contains" in note
    return note


# --- window ids ------------------------------------------------------------------------------


def test_a_marker_window_id_at_the_limit_is_listed_whole_and_selects_its_window(
    tmp_path: Path,
) -> None:
    session = new_session(tmp_path)
    window_id = "pcw:" + "𝔴é" * ((ADDRESS_MAX_CHARS - 4) // 2)
    assert len(window_id) == ADDRESS_MAX_CHARS
    reset(session, window_id)
    session.append_message({"role": "user", "content": "inside", "timestamp": 2})
    answers = []
    for calls in both(file_of(session)):
        rows = calls.json("history_windows")["windows"]
        assert rows[0]["window_id"] == window_id, "whole, not middle-truncated"
        assert "unaddressable" not in rows[0]
        assert assert_round_trips(calls) > 0
        error = calls.json("history_list", {"window_id": "pcw:nope"})
        assert window_id in error["known_windows"], "an error offers the id whole as well"
        answers.append([calls.raw(n).text for n in ("history_windows", "history_list")])
    assert answers[0] == answers[1], "index and projection agree"


@pytest.mark.parametrize("length", [ADDRESS_MAX_CHARS + 1, 10_000, 100_000])
def test_a_marker_window_id_over_the_limit_is_unaddressable_everywhere_never_cut(
    tmp_path: Path, length: int
) -> None:
    session = new_session(tmp_path)
    window_id = "pcw:" + "w" * (length - 4)
    reset(session, window_id)
    inside = session.append_message({"role": "user", "content": "inside", "timestamp": 2})
    answers = []
    for calls in both(file_of(session)):
        row = calls.json("history_windows")["windows"][0]
        assert row["window_id"] is None and row["current"] is True
        assert f"is {length} characters" in row["unaddressable"]
        items = calls.json("history_list")["items"]
        assert {item["window_id"] for item in items[:2]} == {None}  # the item and the boot
        assert all("window_id cannot select it" in item["unaddressable"] for item in items[:2])
        assert items[0]["item_id"] == inside, "its items stay readable by item id"
        read = parse_read(calls.raw("history_read", {"item_id": inside}))
        assert read.content == "inside" and read.details["window_id"] is None
        assert f"window (unaddressable: the window id is {length} characters" in read.header
        # Passing the id (or any cut of it) back is refused by name, never half-matched.
        for attempt in (window_id, window_id[:ADDRESS_MAX_CHARS]):
            error = calls.json("history_list", {"window_id": attempt})
            assert "error" in error
        error = calls.json("history_list", {"window_id": "pcw:nope"})
        assert error["unaddressable_windows"] == 1
        assert all(address_problem(w) is None for w in error["known_windows"])
        assert_round_trips(calls)
        answers.append([calls.raw(n).text for n in ("history_windows", "history_list")])
    assert answers[0] == answers[1]


def test_a_window_id_holding_a_newline_is_unaddressable_not_reshaped(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    reset(session, "pcw:two\nlines")
    for calls in both(file_of(session)):
        row = calls.json("history_windows")["windows"][0]
        assert row["window_id"] is None
        assert "control character (U+000A)" in row["unaddressable"]


def test_a_window_id_argument_over_the_limit_is_refused_by_name(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    for calls in both(file_of(session)):
        for tool, args in (
            ("history_list", {"window_id": "w" * (ADDRESS_MAX_CHARS + 1)}),
            ("history_search", {"query": "x", "window_id": "w" * 50_000}),
            ("history_read", {"item_id": "x", "window_id": "w" * 50_000}),
        ):
            error = calls.json(tool, args)
            assert "the window_id is" in error["error"]
            assert "address limit" in error["error"]


# --- item ids --------------------------------------------------------------------------------


def test_long_entry_ids_round_trip_through_history_read(tmp_path: Path) -> None:
    session = new_session(tmp_path)
    user = session.append_message({"role": "user", "content": "question", "timestamp": 2})
    turn = session.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer"},
                {"type": "toolCall", "id": "c0", "name": "bash", "arguments": {"cmd": "ls"}},
            ],
            "stopReason": "toolUse",
            "timestamp": 3,
        }
    )
    # The turn's id leaves room for "#0", so its call stays addressable too.
    rename = {user: "u" * ADDRESS_MAX_CHARS, turn: "t" * (ADDRESS_MAX_CHARS - 2)}
    rewrite_ids(file_of(session), rename)
    for calls in both(file_of(session)):
        ids = [item["item_id"] for item in calls.follow("history_list", {}, "items")]
        assert rename[user] in ids and rename[turn] in ids and rename[turn] + "#0" in ids
        assert assert_round_trips(calls) >= 4
        found = calls.json("history_search", {"query": "answer"})["items"]
        assert found[0]["item_id"] == rename[turn]


def test_an_entry_id_over_the_limit_is_listed_unaddressable_and_refused_on_read(
    tmp_path: Path,
) -> None:
    session = new_session(tmp_path)
    turn = session.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer"},
                {"type": "toolCall", "id": "c0", "name": "bash", "arguments": {"cmd": "ls"}},
            ],
            "stopReason": "toolUse",
            "timestamp": 3,
        }
    )
    huge = "t" * (ADDRESS_MAX_CHARS - 1)  # the turn fits; its call "…#0" is one over
    rewrite_ids(file_of(session), {turn: huge})
    for calls in both(file_of(session)):
        items = calls.json("history_list")["items"]
        call_row = next(i for i in items if i["role"] == "tool_call")
        turn_row = next(i for i in items if i["role"] == "assistant")
        assert turn_row["item_id"] == huge
        assert call_row["item_id"] is None
        assert "history_read cannot fetch it" in call_row["unaddressable"]
        assert call_row["truncated_content"] == '{"cmd":"ls"}', "the preview is still shown"
        error = calls.json("history_read", {"item_id": huge + "#0"})
        assert "the item_id is 513 characters" in error["error"]
        assert MARKER.search(error["item_id"]), "what is no address is echoed visibly cut"
        assert_round_trips(calls)


def test_pages_of_ids_at_the_limit_never_cut_an_address(tmp_path: Path) -> None:
    """Astral ids at the limit take 2 KB each: pages shrink content, never the ids."""
    session = new_session(tmp_path)
    window_id = "pcw:" + "𝔴" * (ADDRESS_MAX_CHARS - 4)
    reset(session, window_id)
    rename = {}
    for index in range(30):
        entry = session.append_message(
            {"role": "user", "content": f"needle {index} " + "x" * 3_000, "timestamp": 2}
        )
        rename[entry] = f"{index:03d}" + "𝔦" * (ADDRESS_MAX_CHARS - 3)
    rewrite_ids(file_of(session), rename)
    for calls in both(file_of(session)):
        for tool, args in (("history_list", {}), ("history_search", {"query": "needle"})):
            rows = calls.follow(tool, {**args, "max_chars_per_item": 50_000}, "items")
            addressed = {row["item_id"] for row in rows} & set(rename.values())
            assert addressed == set(rename.values())
            root = f"pcw:{session.session_id[:8]}:root"
            assert {row["window_id"] for row in rows} <= {window_id, root}


# --- the property ----------------------------------------------------------------------------

# Anything but C0 controls, DEL and lone surrogates (which no address may hold).
id_chars = st.characters(
    blacklist_categories=("Cs",), blacklist_characters=[chr(c) for c in range(32)] + ["\x7f"]
)
# Short ids and ids right at the limit (where a header or an error used to cut them).
addresses = st.one_of(
    st.text(id_chars, min_size=1, max_size=40),
    st.text(id_chars, min_size=ADDRESS_MAX_CHARS - 8, max_size=ADDRESS_MAX_CHARS),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    window_ids=st.lists(addresses, min_size=1, max_size=3, unique=True),
    entry_ids=st.lists(addresses, min_size=4, max_size=4, unique=True),
    index=st.booleans(),
)
def test_every_returned_address_up_to_the_limit_resolves_when_passed_back(
    window_ids: list[str], entry_ids: list[str], index: bool
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        session = new_session(Path(directory))
        rename: dict[str, str] = {}
        for position, window_id in enumerate(window_ids):
            reset(session, window_id)
            entry = session.append_message(
                {"role": "user", "content": f"message {position}", "timestamp": 2}
            )
            rename[entry] = entry_ids[position % len(entry_ids)]
        turn = session.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "done"},
                    {"type": "toolCall", "id": "c", "name": "notes_read", "arguments": {}},
                ],
                "stopReason": "toolUse",
                "timestamp": 3,
            }
        )
        rename[turn] = entry_ids[-1]
        if len(set(rename.values())) != len(rename):
            return  # two entries sharing an id is a different attack (duplicate ids)
        rewrite_ids(file_of(session), rename)
        calls = Calls(file_of(session), indexed=index)
        shown = calls.follow("history_windows", {}, "windows")
        addressable = {w for w in window_ids if address_problem(w) is None}
        assert {row["window_id"] for row in shown} - {None} >= addressable
        assert assert_round_trips(calls) >= len(addressable) + len(rename)


@pytest.mark.parametrize("fork_safe", [False, True])
def test_a_10kb_session_id_makes_the_root_window_unaddressable_not_cut(
    tmp_path: Path, fork_safe: bool
) -> None:
    hostile = "s" * 10_000
    session = new_session(tmp_path)
    if fork_safe:  # the session's own root boot names its window after the whole id
        root_id = f"pcw:{hostile}:root"
        session.append_custom_message(BOOT_TYPE, "boot", False, {"windowId": root_id})
    reset(session, "pcw:fine:00000001")
    session.append_message({"role": "user", "content": "after", "timestamp": 2})
    rewrite_ids(file_of(session), {}, session_id=hostile)
    for calls in both(file_of(session)):
        if not fork_safe:  # the extension's naming keeps 8 characters: the root is whole
            root, current = calls.follow("history_windows", {"recent_first": False}, "windows")
            assert root["window_id"] == "pcw:ssssssss:root"
            assert current["window_id"] == "pcw:fine:00000001"
            assert assert_round_trips(calls) > 0
            continue
        root, current = calls.follow("history_windows", {"recent_first": False}, "windows")
        assert root["window_id"] is None and "10009 characters" in root["unaddressable"]
        assert current["window_id"] == "pcw:fine:00000001"
        assert assert_round_trips(calls) > 0
