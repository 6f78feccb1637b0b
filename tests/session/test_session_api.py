"""The public Session API: Pi's byte layout, deferral, navigation, validation, fork."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import (
    Durability,
    Session,
    SessionError,
    default_session_dir,
    seeded_uuids,
)
from pi_context.bindings.session.jsonl import (
    encode,
    iso_from_ms,
    js_date_ms,
    js_number,
    js_trim,
    parse,
)
from pi_context.testing.synth import apply_ops, random_ops, stepping_clock

T0 = 1_796_000_000_000  # 2026-11-30T00:53:20.000Z


def _fixed(tmp_path: Path) -> Session:
    clock = iter(range(T0, T0 + 10_000_000, 1))
    return Session.create(
        Path("/work/proj"),
        tmp_path,
        session_id="sess-1",
        now=lambda: next(clock),
        uuids=seeded_uuids(42),
        durability=Durability.NONE,
    )


def test_every_entry_type_is_written_in_pis_key_order(tmp_path: Path) -> None:
    s = _fixed(tmp_path)
    s.append_thinking_level_change("high")
    s.append_model_change("anthropic", "m1")
    user = s.append_message({"role": "user", "content": "hi", "timestamp": 5})
    s.append_custom("ext/state", {"b": 1, "a": 2, "10": 3, "2": 4})
    s.append_custom("ext/empty")
    s.append_custom_message("ext/msg", "text", True)
    s.append_custom_message("ext/msg", [{"type": "text", "text": "t"}], False, {"k": 1.5})
    s.append_context_edit(user, {"content": "edited"})
    s.append_label(user, "mark")
    s.append_label(user, None)
    s.append_session_info("  my\r\n\nname ")
    s.append_usage("summary", "p", "m", {"input": 1}, note="n")
    s.append_compaction("sum", user, 100, details={"x": 1}, from_hook=True)
    s.branch_with_summary(user, "gone", details={"d": 1})
    assert s.path is not None
    lines = s.path.read_text().splitlines()
    sid = lines[0]
    assert sid == (
        '{"type":"session","version":3,"id":"sess-1",'
        '"timestamp":"2026-11-30T00:53:20.000Z","cwd":"/work/proj"}'
    )
    shapes = [list(json.loads(line)) for line in lines[1:]]
    assert shapes == [
        ["type", "id", "parentId", "timestamp", "thinkingLevel"],
        ["type", "id", "parentId", "timestamp", "provider", "modelId"],
        ["type", "id", "parentId", "timestamp", "message"],
        ["type", "customType", "data", "id", "parentId", "timestamp"],
        ["type", "customType", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        ["type", "id", "parentId", "timestamp", "targetId", "replacement"],
        ["type", "id", "parentId", "timestamp", "targetId", "label"],
        ["type", "id", "parentId", "timestamp", "targetId"],
        ["type", "id", "parentId", "timestamp", "name"],
        ["type", "id", "parentId", "timestamp", "kind", "provider", "model", "usage", "note"],
        [
            "type",
            "id",
            "parentId",
            "timestamp",
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "details",
            "fromHook",
        ],
        ["type", "id", "parentId", "timestamp", "fromId", "summary", "details"],
    ]
    assert '"data":{"2":4,"10":3,"b":1,"a":2}' in lines[4], "JS enumerates index-like keys first"
    assert json.loads(lines[11])["name"] == "my name"
    assert s.session_name == "my name"
    assert s.labels == {}
    ids = [json.loads(line)["id"] for line in lines[1:]]
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids) and len(set(ids)) == len(ids)
    assert json.loads(lines[-1])["fromId"] == ids[-2] and json.loads(lines[-1])["parentId"] == user


def test_nothing_is_written_before_a_user_or_assistant_message(tmp_path: Path) -> None:
    s = _fixed(tmp_path)
    s.append_model_change("p", "m")
    s.append_message({"role": "system", "content": "prompt", "timestamp": 1})
    s.append_custom_message("pi-context/boot", "boot", False, {"windowId": "pcw:sess-1:root"})
    assert s.path is not None and not s.path.exists() and not s.persisted
    s.append_message({"role": "assistant", "content": [], "timestamp": 2})
    assert s.persisted and len(s.path.read_text().splitlines()) == 5
    s.append_custom("ext/after")
    assert len(s.path.read_text().splitlines()) == 6, "later entries are single appends"


def test_default_session_directory_encodes_the_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert (
        default_session_dir(Path("/home/u/my:proj"))
        == tmp_path / "agent" / "sessions" / "--home-u-my-proj--"
    )
    session = Session.create(Path("/home/u/x"), now=lambda: T0, session_id="abc")
    assert (
        session.path
        == tmp_path / "agent" / "sessions" / "--home-u-x--" / "2026-11-30T00-53-20-000Z_abc.jsonl"
    )


def test_invalid_session_ids_are_refused() -> None:
    for bad in ["", "-a", "a-", "a b", "a/b", "é"]:
        with pytest.raises(SessionError, match="invalid session id"):
            Session.in_memory(Path("/p"), session_id=bad)


def test_navigation_reset_leaf_and_branch_summary(tmp_path: Path) -> None:
    s = _fixed(tmp_path)
    a = s.append_message({"role": "user", "content": "a", "timestamp": 1})
    b = s.append_message({"role": "assistant", "content": [], "timestamp": 2})
    s.move_leaf(a)
    c = s.append_message({"role": "user", "content": "c", "timestamp": 3})
    assert [e["id"] for e in s.branch()] == [a, c]
    assert [e["id"] for e in s.branch(b)] == [a, b]
    s.reset_leaf()
    assert s.branch() == [] and s.projection()["messages"] == []
    summary = s.branch_with_summary(None, "from nowhere")
    assert s.get(summary) is not None and s.get(summary)["fromId"] == "root"  # type: ignore[index]
    assert s.get(summary)["parentId"] is None  # type: ignore[index]
    with pytest.raises(SessionError, match="entry nope not found"):
        s.move_leaf("nope")
    with pytest.raises(SessionError, match="entry nope not found"):
        s.branch("nope")
    with pytest.raises(SessionError, match="entry nope not found"):
        s.branch_with_summary("nope", "x")
    # The tree: a has two children ordered by timestamp; the summary is a second root.
    tree = s.tree()
    assert [n.id for n in tree] == [a, summary]
    assert [n.id for n in tree[0].children] == [b, c]


def test_context_edit_validation(tmp_path: Path) -> None:
    s = _fixed(tmp_path)
    system = s.append_message({"role": "system", "content": "p", "timestamp": 1})
    user = s.append_message({"role": "user", "content": "u", "timestamp": 2})
    assistant = s.append_message({"role": "assistant", "content": [], "timestamp": 3})
    custom = s.append_custom("ext/state")
    with pytest.raises(SessionError, match="does not contribute editable"):
        s.append_context_edit(system, None)
    with pytest.raises(SessionError, match="does not contribute editable"):
        s.append_context_edit(custom, None)
    with pytest.raises(SessionError, match="replacement must be None"):
        s.append_context_edit(user, {"text": "x"})  # type: ignore[typeddict-item]
    s.move_leaf(user)
    with pytest.raises(SessionError, match="not on the active branch"):
        s.append_context_edit(assistant, None)
    s.move_leaf(custom)
    edit = s.append_context_edit(assistant, {"content": "now a string"})
    assert s.get(edit)["replacement"] == {"content": [{"type": "text", "text": "now a string"}]}  # type: ignore[index]
    s.append_context_edit(user, {"content": "user keeps strings"})
    messages = s.projection()["messages"]
    assert [m["content"] for m in messages] == [
        "p",
        "user keeps strings",
        [{"type": "text", "text": "now a string"}],
    ]
    s.append_context_edit(user, None)
    assert [m["role"] for m in s.projection()["messages"]] == ["system", "assistant"]


def test_compaction_records_the_folded_system_prompt(tmp_path: Path) -> None:
    s = _fixed(tmp_path)
    tool = {"name": "bash", "description": "run", "parameters": {"type": "object"}}
    s.append_message(
        {
            "role": "system",
            "content": "base",
            "sections": {"a": "A", "b": "B"},
            "toolsAdded": [tool],
            "timestamp": 7,
        }
    )
    s.append_message({"role": "user", "content": "u", "timestamp": 8})
    s.append_message(
        {
            "role": "system",
            "content": "more",
            "sections": {"a": None},
            "toolsRemoved": [{"name": "bash"}],
            "timestamp": 9,
        }
    )
    compaction = s.append_compaction("summary", None, 10)
    entry = s.get(compaction)
    assert entry is not None
    assert entry["firstKeptEntryId"] == compaction
    assert entry["systemMessage"] == {
        "role": "system",
        "content": "base\n\nmore",
        "sections": {"b": "B"},
        "timestamp": js_date_ms(entry["timestamp"]),
    }
    assert [m["role"] for m in s.projection()["messages"]] == ["system", "compactionSummary"]


def test_fork_copies_every_entry_under_a_new_header(tmp_path: Path) -> None:
    s = _fixed(tmp_path / "a")
    a = s.append_message({"role": "user", "content": "a", "timestamp": 1})
    s.append_message({"role": "assistant", "content": [], "timestamp": 2})
    s.move_leaf(a)
    s.append_message({"role": "user", "content": "b", "timestamp": 3})
    fork = s.fork(tmp_path / "b", cwd=Path("/elsewhere"), session_id="fork-1")
    assert fork.path is not None and fork.path.parent == tmp_path / "b"
    assert fork.path.name.endswith("_fork-1.jsonl")
    assert fork.header["parentSession"] == str(s.path) and fork.header["cwd"] == "/elsewhere"
    assert fork.entries == s.entries
    with pytest.raises(SessionError, match="already exists"):
        s.fork(fork.path, session_id="fork-1")


def test_reopen_equals_the_live_session(tmp_path: Path) -> None:
    for seed in range(25):
        rng = random.Random(seed)
        s = Session.create(
            Path("/p"),
            tmp_path / str(seed),
            now=stepping_clock(rng),
            uuids=seeded_uuids(seed),
            durability=Durability.NONE,
        )
        apply_ops(
            s,
            random_ops(
                rng,
                40,
                opening={
                    "op": "message",
                    "message": {"role": "user", "content": "x", "timestamp": 1},
                },
            ),
        )
        assert s.path is not None
        again = Session.open(s.path, readonly=True)
        assert encode(again.entries) == encode(s.entries) and again.problems == []
        for entry in s.entries[:: max(1, len(s.entries) // 5)]:
            assert encode(again.view(entry["id"])) == encode(s.view(entry["id"]))


# ---------------------------------------------------------------------------------------------
# JSON and dates as JavaScript does them


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-1.5, "-1.5"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (12345678901234567890, "12345678901234567000"),
        (float("inf"), "null"),
        (float("nan"), "null"),
        (100.0, "100"),
        (0.000123, "0.000123"),
    ],
)
def test_numbers_are_spelled_as_javascript_spells_them(value: float, js: str) -> None:
    assert js_number(value) == js


def test_strings_escape_as_javascript_does() -> None:
    assert (
        encode('\x00\x1f\x7f\u2028é"\\\b\f\n\r\t')
        == '"\\u0000\\u001f\x7f\u2028é\\"\\\\\\b\\f\\n\\r\\t"'
    )
    assert encode("\ud800x\udfff") == '"\\ud800x\\udfff"'
    assert encode("\ud83d\ude00") == '"\U0001f600"', "a split pair is still one code point"
    assert (
        encode({"1": 0, "b": 1, "0": 2, "01": 3, "4294967295": 4})
        == '{"0":2,"1":0,"b":1,"01":3,"4294967295":4}'
    )


def test_dates_as_javascript_parses_them() -> None:
    assert js_date_ms("2026-11-30T10:07:57.716Z") == 1796033277716
    assert js_date_ms("2026-11-30T10:07:57.7168Z") == 1796033277716
    assert js_date_ms("2026-11-30") == 1795996800000
    assert js_date_ms("2026-11-30T10:07:57+01:00") == 1796029677000
    assert js_date_ms("nonsense") is None and js_date_ms(None) == 0 and js_date_ms(5) == 5
    assert js_date_ms("2026-13-01T00:00:00Z") is None
    assert iso_from_ms(1796033277716) == "2026-11-30T10:07:57.716Z"
    assert js_trim("\ufeff\u00a0 x \u3000") == "x" and js_trim("\x1cx") == "\x1cx"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_encode_is_valid_json_and_stable_under_reparse(value: Any) -> None:
    text = encode(value)
    again = parse(text)
    assert encode(again) == text
    if not _has_float_or_big(value):
        assert json.loads(text) == value


def _has_float_or_big(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > 2**53
    if isinstance(value, list):
        return any(_has_float_or_big(v) for v in value)
    if isinstance(value, dict):
        return any(_has_float_or_big(v) for v in value.values())
    return False


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_numbers_read_back_to_the_same_double(value: float) -> None:
    assert float(js_number(value)) == value or (value == 0 and js_number(value) == "0")
    assert not math.isnan(float(js_number(value)))
