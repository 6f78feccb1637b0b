"""Entries of any JSON shape in any field: items, problems or ignored, never an exception.

A session of every entry kind the tools read is written, then one field (or a whole entry)
is replaced by an arbitrary JSON value: lists and objects where strings belong, lone
surrogates (what Node writes for an emoji cut in half), huge and negative numbers. Every
history tool answers on both paths (with and without the index), the two answers are the
same bytes, every text is encodable as UTF-8, and ``session show`` (text and JSON) prints.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history.index import DISABLE_ENV
from pi_context.bindings.history.tools import TOOLS
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tools import ToolContext, ToolError
from pi_context.cli import session as cli_session

SID = "01a22bef-ab69-7573-a842-74562c34d9da"
TOOL = {tool.name: tool for tool in TOOLS}
STAMP = "2026-11-30T10:10:57.003Z"


def template() -> list[dict[str, Any]]:
    """One entry of every kind the history tools and ``session show`` read, as one chain."""
    entries: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": SID, "timestamp": STAMP, "cwd": "/tmp/x"},
    ]
    bodies: list[dict[str, Any]] = [
        {"type": "message", "message": {"role": "user", "content": "hello needle"}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "answer needle"},
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"c": "ls"}},
                ],
                "usage": {"input": 1, "output": 2, "totalTokens": 3},
                "stopReason": "toolUse",
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "bash",
                "content": [{"type": "text", "text": "result needle"}],
                "isError": False,
            },
        },
        {
            "type": "message",
            "message": {"role": "bashExecution", "command": "ls", "output": "out", "exitCode": 0},
        },
        {"type": "custom_message", "customType": "pi-context/guidance", "content": "guide"},
        {"type": "compaction", "summary": "", "firstKeptEntryId": None, "tokensBefore": 9},
        {"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": "pcw:x:01"}},
        {
            "type": "custom_message",
            "customType": BOOT_TYPE,
            "content": [{"type": "text", "text": "boot"}],
            "display": False,
            "details": {"windowId": "pcw:x:01"},
        },
        {"type": "branch_summary", "summary": "branch needle", "fromId": "e1"},
        {"type": "label", "targetId": "e1", "label": "a label"},
        {"type": "session_info", "name": "a name"},
        {"type": "model_change", "provider": "p", "modelId": "m"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "z"}]},
        },
    ]
    parent = None
    for n, body in enumerate(bodies, 1):
        entry = {"type": body["type"], "id": f"e{n}", "parentId": parent, "timestamp": STAMP}
        entry.update(body)
        entries.append(entry)
        parent = entry["id"]
    return entries


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place inside ``value`` a field can be replaced."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from paths(inner, (*prefix, index))


TEMPLATE = template()
PLACES = [(line, ()) for line in range(1, len(TEMPLATE))] + [
    (line, place) for line, entry in enumerate(TEMPLATE) for place in paths(entry)
]

# Text Node can write: any code point, lone surrogates included.
text = st.text(st.characters(), max_size=12) | st.sampled_from(["\ud800", "a\udc80\n", "e1"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
WRONG = [None, True, 0, -1.5, 1e300, 2**64, "", "\ud800", "a\n\udc80", [], ["x"], {}, {"a": 1}]


def hostile_file(directory: Path, line: int, place: tuple[Any, ...], value: Any) -> Path:
    entries = copy.deepcopy(TEMPLATE)
    if place:
        target: Any = entries[line]
        for key in place[:-1]:
            target = target[key]
        target[place[-1]] = value
    else:
        entries[line] = value
    path = directory / "hostile.jsonl"
    path.write_bytes(b"".join(encode_line(entry) for entry in entries))
    return path


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("history_windows", {}),
    ("history_list", {}),
    ("history_list", {"role": "tool_call"}),
    ("history_search", {"query": "needle"}),
    ("history_search", {"query": "e", "tool_name": "bash"}),
    ("history_read", {"item_id": "e1"}),
    ("history_read", {"item_id": "e2#0"}),
]


def answers(path: Path) -> list[str]:
    """Every call's text (or named error), checked encodable."""
    out = []
    context = ToolContext(session_path=path, cwd=path.parent)
    for name, args in CALLS:
        try:
            result = TOOL[name].run(context, args)
            shown = result.text
            json.dumps(result.details, allow_nan=False)
        except ToolError as exc:
            shown = f"ToolError: {exc}"
        shown.encode("utf-8")
        out.append(shown)
    return out


def show(path: Path) -> None:
    for as_json in (False, True):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            cli_session.run_show(argparse.Namespace(file=path, leaf=None, json=as_json))
        stdout.getvalue().encode("utf-8")
        stderr.getvalue().encode("utf-8")


def check(directory: Path, line: int, place: tuple[Any, ...], value: Any) -> None:
    path = hostile_file(directory, line, place, value)
    os.environ[DISABLE_ENV] = "0"
    plain = answers(path)
    os.environ[DISABLE_ENV] = "1"
    indexed = answers(path)
    assert indexed == plain, "the index answers exactly as the file does"
    show(path)


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(DISABLE_ENV, "1")
    return tmp_path


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(PLACES), json_values)
def test_any_json_value_in_any_field_is_answered_on_both_paths(
    isolated: Path, place: tuple[int, tuple[Any, ...]], value: Any
) -> None:
    check(isolated, place[0], place[1], value)


@pytest.mark.parametrize("line", range(1, len(TEMPLATE)))
def test_every_field_of_an_entry_with_every_wrong_type(isolated: Path, line: int) -> None:
    """The issue's sweep, over one entry per test: every field × 13 wrong-typed values."""
    for place in [(), *paths(TEMPLATE[line])]:
        for value in WRONG:
            check(isolated, line, place, value)


def test_the_header_with_every_wrong_type(isolated: Path) -> None:
    for place in paths(TEMPLATE[0]):
        for value in WRONG:
            check(isolated, 0, place, value)


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("line_depth", [511, 512, 513, 600, 990])
def test_a_line_nested_past_the_limit_is_skipped_on_both_paths(
    isolated: Path, line_depth: int
) -> None:
    """The loader refuses a line nested deeper than ``jsonlimits.MAX_DEPTH`` (512) although
    the fast decoders would take it up to ~1,000 levels: the index build checks the depth
    before its typed decoder, so it skips the same lines (the user message's content sits
    two levels down: entry, message)."""
    check(isolated, 1, ("message", "content"), nested(line_depth - 2))
