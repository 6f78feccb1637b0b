"""The seeds' history-tool behaviours, on sessions written through the session binding."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, json_bytes, utf8_len

from .conftest import MARKER, TOOLS_BY_NAME, Harness, parse_read


def test_the_four_tools_declare_object_schemas_with_the_documented_defaults() -> None:
    assert set(TOOLS_BY_NAME) == {
        "history_windows",
        "history_list",
        "history_read",
        "history_search",
    }
    for tool in TOOLS_BY_NAME.values():
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert not tool.sequential, "history tools are read-only"
    assert TOOLS_BY_NAME["history_read"].parameters["required"] == ["item_id"]
    assert TOOLS_BY_NAME["history_search"].parameters["required"] == ["query"]
    for name in ("history_windows", "history_list", "history_search"):
        recent = TOOLS_BY_NAME[name].parameters["properties"]["recent_first"]
        assert "Defaults to true." in recent["description"]
    read = TOOLS_BY_NAME["history_read"].parameters["properties"]
    assert "minimum" not in read["offset_chars"], "negative offsets count from the end"
    assert read["limit_chars"]["maximum"] == 50_000


def test_13_items_of_50kb_page_within_budget_and_reads_reconstruct(harness: Harness) -> None:
    text = "历史内容-" + "x" * 50_000
    ids = [harness.text("user", text) for _ in range(13)]

    listed = harness.follow("history_list", {"recent_first": False, "max_chars_per_item": 1200})
    assert [row["item_id"] for row in listed] == ids

    # A page of whole 50 KB items cannot fit: the first item is middle-truncated, not skipped.
    first = harness.json(
        "history_search", {"query": "历史内容", "recent_first": False, "max_chars_per_item": 50_000}
    )
    assert json_bytes(first) <= TOOL_OUTPUT_MAX_BYTES
    assert first["next_cursor"] is not None
    assert first["items"][0]["truncated"] is True
    assert MARKER.search(first["items"][0]["truncated_content"])

    found = harness.follow(
        "history_search", {"query": "历史内容", "recent_first": False, "max_chars_per_item": 1200}
    )
    assert [row["item_id"] for row in found] == ids

    parts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        read = harness.read(
            {
                "window_id": harness.root_window,
                "item_id": ids[0],
                "offset_chars": offset,
                "limit_chars": 12_000,
            }
        )
        assert read.offset_chars == offset
        parts.append(read.content)
        offset = read.next_offset_chars
    assert "".join(parts) == text


def test_limit_caps_the_page_not_the_set(harness: Harness) -> None:
    for index in range(60):
        harness.text("user", f"entry-{index}")
        harness.text("assistant", f"reply-{index}")
    assert harness.json("history_windows")["windows"][0]["item_count"] == 120

    def listing(cursor: int) -> dict[str, Any]:
        return harness.json(
            "history_list",
            {"limit": 50, "cursor": cursor, "recent_first": False, "max_chars_per_item": 100},
        )

    assert [(len(p["items"]), p["next_cursor"]) for p in map(listing, (0, 50, 100))] == [
        (50, 50),
        (50, 100),
        (20, None),
    ]

    def searching(cursor: int) -> dict[str, Any]:
        return harness.json(
            "history_search",
            {
                "query": "entry-",
                "limit": 50,
                "cursor": cursor,
                "recent_first": False,
                "max_chars_per_item": 100,
            },
        )

    assert [(len(p["items"]), p["next_cursor"]) for p in map(searching, (0, 50))] == [
        (50, 50),
        (10, None),
    ]


def test_or_search_returns_each_matching_item_once(harness: Harness) -> None:
    both = harness.text("user", "alpha beta together")
    alpha = harness.text("user", "alpha only")
    beta = harness.text("assistant", "beta only")
    harness.text("user", "gamma only")

    def ids(query: Any) -> list[str]:
        return harness.ids("history_search", {"query": query, "recent_first": False})

    assert ids(["alpha", "beta"]) == [both, alpha, beta]
    assert ids(["alpha", "beta", "alpha"]) == [both, alpha, beta], "duplicates collapse"
    assert ids(["alpha"]) == [both, alpha]
    assert ids("alpha") == ids(["alpha"]) == [both, alpha]
    assert ids(["gamma"]) != []


def test_or_search_paginates_without_cross_page_duplicates(harness: Harness) -> None:
    for index in range(12):
        word = ("alpha", "beta", "gamma")[index % 3]
        harness.text("user", f"{word} {index}")
    args = {
        "query": ["alpha", "beta"],
        "recent_first": False,
        "max_chars_per_item": 100,
        "limit": 3,
    }
    rows = harness.follow("history_search", args)
    assert len(rows) == 8
    assert len({row["item_id"] for row in rows}) == 8
    assert harness.json("history_search", {**args, "cursor": 0})["next_cursor"] == 3
    tail = harness.json("history_search", {**args, "cursor": 6})
    assert (len(tail["items"]), tail["next_cursor"]) == (2, None)


def test_search_filters_compose_with_or_queries_and_windows(harness: Harness) -> None:
    user = harness.text("user", "alpha root message")
    assistant = harness.text("assistant", "beta assistant message")
    tool = harness.text("toolResult", "alpha beta bash output")
    harness.reset("pcw:test0000:second")
    later = harness.text("user", "alpha next window")

    def ids(**filters: Any) -> list[str]:
        return harness.ids(
            "history_search", {"query": ["alpha", "beta"], "recent_first": False, **filters}
        )

    assert ids(role="user") == [user, later]
    assert ids(role="assistant") == [assistant]
    assert ids(tool_name="bash") == [tool]
    assert ids(tool_namespace="bash") == []  # "bash" has no family prefix
    assert ids(tool_name="read") == []
    assert ids(window_id=harness.root_window) == [user, assistant, tool]
    assert ids(window_id="pcw:test0000:second") == [later]


def test_read_delivers_a_plain_prefix_with_slim_details(harness: Harness) -> None:
    original = "z" * (TOOL_OUTPUT_MAX_BYTES * 3)
    item = harness.text("user", original)
    first = harness.read({"window_id": harness.root_window, "item_id": item, "limit_chars": 50_000})
    assert first.content and "…" not in first.content
    assert original.startswith(first.content)
    assert first.total_chars == len(original)
    assert list(first.details) == [
        "window_id",
        "item_id",
        "offset_chars",
        "total_chars",
        "next_offset_chars",
        "limit_chars",
    ]
    assert first.details["item_id"] == item
    assert first.next_offset_chars == len(first.content) < first.total_chars
    assert first.header == (
        f"[{item} · chars 0-{len(first.content)} of {len(original)} · continue at "
        f"offset_chars={len(first.content)} · window {harness.root_window} · user]"
    )
    parts = [first.content]
    offset = first.next_offset_chars
    while offset is not None:
        page = harness.read({"item_id": item, "offset_chars": offset, "limit_chars": 50_000})
        end = page.offset_chars + len(page.content)
        assert page.next_offset_chars == (end if end < page.total_chars else None)
        parts.append(page.content)
        offset = page.next_offset_chars
    assert "".join(parts) == original


def test_items_report_truncation_honestly_and_search_offsets_resolve(harness: Harness) -> None:
    content = "padding " * 400 + "NEEDLE" + " trailing" * 400
    item = harness.text("user", content)
    listed = harness.json("history_list", {"recent_first": False, "max_chars_per_item": 5})
    row = next(r for r in listed["items"] if r["item_id"] == item)
    assert (row["truncated"], row["total_chars"], row["truncated_content"]) == (
        True,
        len(content),
        "paddi",
    )
    whole = harness.json("history_list", {"max_chars_per_item": 50_000})["items"][0]
    assert (whole["truncated"], whole["truncated_content"]) == (False, content)

    hit = harness.json("history_search", {"query": "NEEDLE", "max_chars_per_item": 1})["items"][0]
    assert (hit["truncated"], hit["total_chars"], hit["truncated_content"]) == (
        True,
        len(content),
        "p",
    )
    assert hit["match_offset_chars"] == 3200
    resolved = harness.read(
        {
            "window_id": harness.root_window,
            "item_id": item,
            "offset_chars": hit["match_offset_chars"],
            "limit_chars": 6,
        }
    )
    assert resolved.content == "NEEDLE"


def test_tool_calls_are_their_own_items_and_turn_text_stays_pure(harness: Harness) -> None:
    turn = harness.message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "on it"},
                {
                    "type": "toolCall",
                    "id": "tc-1",
                    "name": "bash",
                    "arguments": {"command": "keiyaku status"},
                },
                {
                    "type": "toolCall",
                    "id": "tc-2",
                    "name": "notes_read",
                    "arguments": {"path": "x.md"},
                },
            ],
            "stopReason": "toolUse",
        }
    )
    rows = {r["item_id"]: r for r in harness.json("history_list", {"recent_first": False})["items"]}
    assert list(rows) == [turn, f"{turn}#0", f"{turn}#1"]
    assert (rows[turn]["role"], rows[turn]["tool_name"], rows[turn]["truncated_content"]) == (
        "assistant",
        None,
        "on it",
    )
    assert (rows[f"{turn}#0"]["role"], rows[f"{turn}#0"]["tool_name"]) == ("tool_call", "bash")
    assert rows[f"{turn}#0"]["truncated_content"] == '{"command":"keiyaku status"}'
    assert rows[f"{turn}#1"]["tool_name"] == "notes_read"

    def ids(**args: Any) -> list[str]:
        return harness.ids("history_search", args)

    assert ids(query="keiyaku status", role="tool_call", tool_name="bash") == [f"{turn}#0"]
    assert ids(query="x.md", tool_namespace="notes") == [f"{turn}#1"]
    assert ids(query="keiyaku status", role="assistant") == []
    assert ids(query="on it", role="assistant") == [turn]
    assert ids(query="keiyaku status", role="tool") == []
    call = harness.read({"window_id": harness.root_window, "item_id": f"{turn}#0"})
    assert call.content == '{"command":"keiyaku status"}'


def test_a_turn_of_only_tool_calls_contributes_only_call_items(harness: Harness) -> None:
    turn = harness.message(
        {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": "t", "name": "read", "arguments": {"p": 1.0}}],
        }
    )
    assert harness.ids("history_list", {}) == [f"{turn}#0"]
    assert harness.read({"item_id": f"{turn}#0"}).content == '{"p":1}', "JSON as JS writes it"


@pytest.mark.parametrize("tool", ["history_list", "history_search"])
def test_a_vacuous_role_and_tool_name_combination_is_a_named_error(
    harness: Harness, tool: str
) -> None:
    harness.text("user", "anything")
    base: dict[str, Any] = {"query": "keiyaku"} if tool == "history_search" else {}
    dead = harness.json(tool, {**base, "role": "assistant", "tool_name": "bash"})
    assert 'only set on "tool_call" and "tool"' in dead["error"]
    assert (dead["role"], dead["tool_name"]) == ("assistant", "bash")
    for role in ("user", "system", "developer"):
        assert (
            "never carries one"
            in harness.json(tool, {**base, "role": role, "tool_name": "x"})["error"]
        )
    namespaced = harness.json(tool, {**base, "role": "user", "tool_namespace": "notes"})
    assert namespaced["tool_namespace"] == "notes"
    for legit in (
        {"role": "tool_call", "tool_name": "bash"},
        {"role": "tool", "tool_name": "bash"},
        {"tool_name": "bash"},
        {"role": "assistant"},
    ):
        fine = harness.json(tool, {**base, **legit})
        assert "error" not in fine and isinstance(fine["items"], list)

    bad = harness.json(tool, {**base, "window_id": "pcw:00000000:deadbeef"})
    assert "unknown window_id" in bad["error"]
    assert bad["window_id"] == "pcw:00000000:deadbeef"
    assert bad["known_windows"] == [harness.root_window]
    assert "error" not in harness.json(tool, {**base, "window_id": harness.root_window})


def test_developer_names_this_extensions_entries_and_system_native_summaries(
    harness: Harness,
) -> None:
    foreign = str(harness.session.append_custom_message("other/extension", "foreign body", False))
    guidance = str(harness.session.append_custom_message("pi-context/guidance", "low", False))
    native = str(harness.session.append_compaction("native summary", None, 100))
    checkpoint = str(harness.session.append_compaction("", None, 100))
    harness.session.append_custom("pi-context/reset-marker", {"windowId": "pcw:test0000:dev"})
    boot = str(
        harness.session.append_custom_message(
            "pi-context/boot", "boot body", False, {"windowId": "pcw:test0000:dev"}
        )
    )
    harness.text("user", "after the reset")

    def ids(role: str) -> list[str]:
        return harness.ids("history_list", {"role": role, "recent_first": False})

    assert ids("developer") == [guidance, checkpoint, boot]
    assert ids("system") == [native], "a native compaction stays system and opens no window"
    assert ids("user")[0] == foreign, "foreign custom messages are user turns"
    windows = harness.json("history_windows", {"recent_first": False})["windows"]
    assert [w["window_id"] for w in windows] == [harness.root_window, "pcw:test0000:dev"]


def test_branch_summaries_are_system_items_of_the_current_window(harness: Harness) -> None:
    anchor = harness.text("user", "anchor")
    harness.text("user", "abandoned path")
    summary = str(harness.session.branch_with_summary(anchor, "what the other path did"))
    rows = harness.json("history_list", {"recent_first": False})["items"]
    assert [(r["item_id"], r["role"]) for r in rows] == [(anchor, "user"), (summary, "system")]
    assert harness.json("history_windows")["windows"][0]["item_count"] == 2


def test_an_oversized_tool_name_is_truncated_visibly_and_the_page_fits(harness: Harness) -> None:
    huge = "oversized_" + "t" * 40_000
    harness.text("user", "run it")  # Pi writes the file once a user/assistant message exists
    item = harness.text("toolResult", "tool output line", tool_name=huge)
    for name, args in (
        ("history_list", {"role": "tool", "max_chars_per_item": 1200}),
        ("history_search", {"query": "tool output", "recent_first": False}),
    ):
        result = harness.json(name, args)
        assert json_bytes(result) <= TOOL_OUTPUT_MAX_BYTES
        (row,) = result["items"]
        assert row["item_id"] == item
        assert row["truncated_content"] == "tool output line"
        assert row["truncated"] is False
        assert MARKER.search(row["tool_name"])
        assert row["tool_name"].startswith("oversized_t")


def test_argument_footguns_are_named_errors_that_echo_the_argument(harness: Harness) -> None:
    item = harness.text("user", "hello world")
    for query in ("", ["alpha", ""]):
        error = harness.json("history_search", {"query": query})
        assert "empty query matches everything" in error["error"]
        assert error["query"] == query
    assert "non-empty array of strings" in harness.json("history_search", {"query": []})["error"]
    mixed = harness.json("history_search", {"query": ["alpha", 7]})
    assert "elements must be strings" in mixed["error"]
    assert mixed["query"] == ["alpha", 7]

    past = harness.json(
        "history_read", {"window_id": harness.root_window, "item_id": item, "offset_chars": 12}
    )
    assert "past the end" in past["error"]
    assert (past["item_id"], past["offset_chars"], past["total_chars"]) == (item, 12, 11)
    end = harness.read({"window_id": harness.root_window, "item_id": item, "offset_chars": 11})
    assert (end.content, end.next_offset_chars) == ("", None)
    tail = harness.read({"item_id": item, "offset_chars": -5})
    assert tail.content == "world"

    unknown = harness.json("history_read", {"window_id": harness.root_window, "item_id": "nope"})
    assert "unknown item_id or window_id" in unknown["error"]
    assert unknown["item_id"] == "nope"
    elsewhere = harness.json("history_read", {"window_id": "pcw:x:y", "item_id": item})
    assert "unknown item_id or window_id" in elsewhere["error"]
    assert harness.root_window in elsewhere["error"], "the error says where the item lives"

    for args, needle in (
        ({"limit_chars": 50_001}, "limit_chars must be between 1 and 50000"),
        ({"limit_chars": 0}, "limit_chars must be between 1 and 50000"),
        ({"offset_chars": "3"}, "offset_chars must be an integer"),
    ):
        assert needle in harness.json("history_read", {"item_id": item, **args})["error"]
    assert "unknown role" in harness.json("history_list", {"role": "robot"})["error"]
    assert "cursor must be >= 0" in harness.json("history_list", {"cursor": -1})["error"]
    assert "limit must be >= 1" in harness.json("history_list", {"limit": 0})["error"]
    assert (
        "recent_first must be true or false"
        in harness.json("history_list", {"recent_first": "no"})["error"]
    )
    extra = harness.json("history_list", {"windowId": "x"})
    assert "does not take 'windowId'" in extra["error"]
    huge = harness.json("history_list", {"window_id": "w" * 100_000})
    assert "over the 512-character address limit" in huge["error"]
    assert MARKER.search(huge["window_id"]), "a huge echo is truncated, never the budget"


def test_tool_run_metadata_appears_only_when_true(harness: Harness) -> None:
    harness.text("user", "run things")
    harness.message(
        {
            "role": "bashExecution",
            "command": "yes",
            "output": "y\ny\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": "/tmp/full-yes.txt",
        }
    )
    harness.message(
        {
            "role": "bashExecution",
            "command": "true",
            "output": "",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    )
    harness.message(
        {
            "role": "bashExecution",
            "command": "false",
            "output": "",
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
        }
    )
    harness.message(
        {
            "role": "toolResult",
            "content": [{"type": "text", "text": "boom"}],
            "toolCallId": "c",
            "toolName": "bash",
            "isError": True,
        }
    )
    harness.message(
        {
            "role": "toolResult",
            "content": [{"type": "text", "text": "cut"}],
            "toolCallId": "d",
            "toolName": "bash",
            "isError": False,
            "details": {"truncation": {"truncated": True}, "fullOutputPath": "/tmp/o"},
        }
    )
    harness.text("toolResult", "fine")
    rows = harness.json("history_list", {"role": "tool", "recent_first": False})["items"]
    keys = ("tool_error", "output_truncated", "full_output_path")
    assert [r["truncated_content"] for r in rows] == [
        "$ yes\ny\ny\n",
        "$ true\n",
        "$ false\n",
        "boom",
        "cut",
        "fine",
    ]
    assert [{k: r[k] for k in keys if k in r} for r in rows] == [
        {"output_truncated": True, "full_output_path": "/tmp/full-yes.txt"},
        {},
        {"tool_error": True},
        {"tool_error": True},
        {"output_truncated": True, "full_output_path": "/tmp/o"},
        {},
    ]


def test_after_a_reset_old_windows_stay_searchable_and_readable(harness: Harness) -> None:
    old = harness.text("user", "OLD-UNIQUE-TRANSCRIPT needle")
    harness.text("assistant", "I will use a tool")
    harness.text("toolResult", "tool result safely recorded")
    harness.reset("pcw:test0000:00000001")
    windows = harness.json("history_windows", {})["windows"]
    assert [w["window_id"] for w in windows] == ["pcw:test0000:00000001", harness.root_window]
    assert windows[0].get("current") is True and "current" not in windows[1]
    assert harness.read({"window_id": harness.root_window, "item_id": old}).content == (
        "OLD-UNIQUE-TRANSCRIPT needle"
    )
    assert harness.ids("history_search", {"query": "needle"}) == [old]
    new = harness.json("history_list", {"window_id": "pcw:test0000:00000001"})["items"]
    assert [r["role"] for r in new] == ["developer"], "the new window opens with its boot"


def test_ordering_is_newest_first_unless_recent_first_is_false(harness: Harness) -> None:
    first = harness.text("user", "needle alpha")
    second = harness.text("assistant", "needle beta")
    third = harness.text("user", "needle gamma")
    for name, base in (("history_list", {}), ("history_search", {"query": "needle"})):
        assert harness.ids(name, base) == [third, second, first]
        assert harness.ids(name, {**base, "recent_first": True}) == [third, second, first]
        assert harness.ids(name, {**base, "recent_first": False}) == [first, second, third]


def test_history_follows_the_selected_branch_and_is_never_cached(harness: Harness) -> None:
    anchor = harness.text("user", "shared root")
    left = harness.text("user", "left-only needle")
    harness.session.move_leaf(anchor)
    right = harness.text("user", "right-only needle")
    assert harness.ids("history_search", {"query": "needle"}) == [right]
    harness.leaf_id = left
    assert harness.ids("history_search", {"query": "needle"}) == [left]
    assert harness.ids("history_list", {"recent_first": False}) == [anchor, left]
    harness.leaf_id = None
    later = harness.text("user", "appended after a call")
    assert harness.ids("history_list", {"recent_first": False}) == [anchor, right, later]


def test_context_edits_leave_the_durable_record_readable(harness: Harness) -> None:
    removed = harness.text("toolResult", "a huge output the context dropped")
    replaced = harness.text("user", "original words")
    harness.session.append_context_edit(removed, None)
    harness.session.append_context_edit(replaced, {"content": "edited words"})
    rows = harness.json("history_list", {"recent_first": False})["items"]
    assert [(r["item_id"], r["truncated_content"]) for r in rows] == [
        (removed, "a huge output the context dropped"),
        (replaced, "original words"),
    ]


def test_a_retain_none_compaction_keeps_earlier_items_in_the_same_window(
    harness: Harness,
) -> None:
    before = harness.text("user", "before the cut")
    cut = str(harness.session.append_compaction("summary of the cut", None, 100))
    after = harness.text("user", "after the cut")
    windows = harness.json("history_windows", {})["windows"]
    assert [(w["window_id"], w["item_count"]) for w in windows] == [(harness.root_window, 3)]
    assert harness.ids("history_list", {"recent_first": False}) == [before, cut, after]


def test_windows_page_with_limit_and_cursor(harness: Harness) -> None:
    harness.text("user", "root")
    for index in range(5):
        harness.reset(f"pcw:test0000:{index:08x}")
    first = harness.json("history_windows", {"limit": 2, "recent_first": False})
    assert [w["window_id"] for w in first["windows"]] == [
        harness.root_window,
        "pcw:test0000:00000000",
    ]
    assert first["next_cursor"] == 2
    rows = harness.follow("history_windows", {"limit": 2}, key="windows")
    assert [w["window_id"] for w in rows][0] == "pcw:test0000:00000004"
    assert len(rows) == 6


def test_unicode_contents_count_code_points(harness: Harness) -> None:
    text = "進捗🎉Café\u2028𝖛"
    item = harness.text("user", text)
    row = harness.json("history_list", {"max_chars_per_item": 3})["items"][0]
    assert (row["total_chars"], row["truncated_content"]) == (len(text), "進捗🎉")
    assert harness.read({"item_id": item, "offset_chars": 2, "limit_chars": 1}).content == "🎉"
    assert utf8_len(harness.call("history_read", {"item_id": item}).text) < 200


def test_the_result_text_is_compact_json(harness: Harness) -> None:
    harness.text("user", "é")
    text = harness.call("history_list", {}).text
    assert text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


def test_a_lone_surrogate_in_the_session_is_delivered_as_valid_utf8(harness: Harness) -> None:
    item = harness.text("user", "a\ud800b")
    row = harness.json("history_search", {"query": "\ud800"})["items"][0]
    assert (row["item_id"], row["match_offset_chars"], row["total_chars"]) == (item, 1, 3)
    assert row["truncated_content"] == "a\ud800b", "JSON carries it as an escape"
    result = harness.call("history_read", {"item_id": item})
    result.text.encode("utf-8")
    assert parse_read(result).content == "a\ufffdb", "raw text replaces it one for one"


def test_a_pathological_window_id_is_marked_unaddressable_never_cut(harness: Harness) -> None:
    harness.text("user", "root")
    huge = "pcw:" + "w" * 100_000
    harness.session.append_custom("pi-context/reset-marker", {"windowId": huge})
    item = harness.text("user", "inside the huge window")
    for name, args, key in (
        ("history_windows", {}, "windows"),
        ("history_list", {}, "items"),
        ("history_search", {"query": "inside"}, "items"),
    ):
        rows = harness.follow(name, args, key=key)
        assert rows[0]["window_id"] is None, "a shortened id would look like a real one"
        assert "100004 characters" in rows[0]["unaddressable"]
    assert harness.follow("history_list", {}, key="items")[0]["item_id"] == item
    read = harness.read({"item_id": item})
    assert read.content == "inside the huge window"
    assert "window (unaddressable: the window id is 100004 characters" in read.header
    assert not MARKER.search(read.header)


def test_unknown_window_errors_name_at_most_50_recent_windows(harness: Harness) -> None:
    harness.text("user", "root")
    for index in range(120):
        harness.session.append_custom(
            "pi-context/reset-marker", {"windowId": f"pcw:test0000:{index:08x}"}
        )
    error = harness.json("history_list", {"window_id": "pcw:nope"})
    assert len(error["known_windows"]) == 50
    assert error["known_windows"][-1] == "pcw:test0000:00000077"
    assert error["known_windows_total"] == 121
