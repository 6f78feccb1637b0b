"""The index build's shortcuts agree with the plain definitions they stand in for.

``entry_rows`` extracts every item of an entry line eagerly; it must give exactly what the lazy
``entry_items`` projection gives, on any entry a file can hold, whether the line was decoded
typed (``DECODE_ENTRY``) or parsed as the loader parses it (``entry_line``). ``_branch``
skips the parent walk when the file is one chain; it must give the walk's answer on any table.
``scan.chunks`` reads the file in small pieces; they must be the file's lines, whole, however long
a line is.
"""

from __future__ import annotations

import json as stdlib_json
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history import scan
from pi_context.bindings.history.format import _Entries
from pi_context.bindings.history.items import ROLES, _text_of, entry_items
from pi_context.bindings.history.lines import DECODE_ENTRY, entry_line, entry_rows
from pi_context.bindings.history.views import _branch, _walk

text = st.text(max_size=8)
leaf = st.none() | st.booleans() | st.integers() | st.floats() | text
json = st.recursive(
    leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
anything = st.sampled_from(["pi-context/boot", "pi-context/", "other/x", ""]) | json

block = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["text", "toolCall", "thinking", "image"]) | json,
        "text": text | json,
        "name": st.sampled_from(["bash", "notes_read"]) | json,
        "arguments": json,
    },
)
tool_call = st.fixed_dictionaries(
    {"type": st.just("toolCall")},
    optional={"name": st.sampled_from(["bash", ""]) | json, "arguments": json},
)
text_block = st.fixed_dictionaries({"type": st.just("text")}, optional={"text": text | json})
blocks = st.lists(tool_call | text_block | block, max_size=4)
content = text | blocks | st.lists(block | json, max_size=4) | json
entry_id = st.sampled_from(["e1", "a#0", ""]) | json
good_id = st.sampled_from(["e1", "a#0"])


def _message(role: st.SearchStrategy[Any], **required: Any) -> st.SearchStrategy[dict[str, Any]]:
    optional = {
        "content": content,
        "toolName": st.sampled_from(["bash", "read", ""]) | json,
        "customType": anything,
        "command": text | json,
        "output": text | json,
        "isError": json,
        "details": json,
    }
    for name in required:
        del optional[name]
    return st.fixed_dictionaries({"role": role, **required}, optional=optional)


ROLES_OF_MESSAGES = ["user", "assistant", "toolResult", "bashExecution", "custom", "system"]
# Each kind of entry well formed, with its other fields missing or of any type; each message
# role its own branch (so each is drawn often); then entries of no known shape at all.
entry = st.one_of(
    *[
        st.fixed_dictionaries(
            {
                "type": st.just("message"),
                "id": good_id,
                "message": _message(st.just(role), content=content),
            },
            optional={"timestamp": text | json, "parentId": text | json},
        )
        for role in ROLES_OF_MESSAGES
    ],
    st.fixed_dictionaries(
        {
            "type": st.just("message"),
            "id": good_id,
            "message": _message(
                st.just("toolResult"), toolName=st.sampled_from(["bash", "read"]) | json
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("message"),
            "id": good_id,
            "message": _message(st.just("bashExecution"), command=text, output=text),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("message"), "id": entry_id},
        optional={"message": _message(json) | json},
    ),
    st.fixed_dictionaries(  # assistant turns: text, thinking and tool calls in any mix
        {
            "type": st.just("message"),
            "id": good_id,
            "message": st.fixed_dictionaries({"role": st.just("assistant"), "content": blocks}),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("custom_message"), "id": good_id},
        optional={"customType": anything, "content": content},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["compaction", "branch_summary"]), "id": good_id},
        optional={
            "summary": text | json,
            "details": st.fixed_dictionaries({"piContext": text | json}) | json,
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["message", "custom_message", "compaction"]), "id": json}
    ),
    st.dictionaries(
        st.sampled_from(
            ["type", "id", "message", "customType", "content", "summary", "parentId", "timestamp"]
        ),
        json,
    ),
)


def _lazy(value: dict[str, Any]) -> list[tuple[int, str, str, str | None]]:
    return [
        (ROLES.index(item.role), item.item_id, item.content, item.tool_name)
        for item in entry_items(value, None, "")
    ]


@settings(max_examples=600)
@example(
    {
        "type": "message",
        "id": "e1",
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "name": "bash", "arguments": {"n": 1.0}}],
        },
    }
)
@example({"type": "compaction", "id": "e1", "summary": "s", "details": {"piContext": "x"}})
@example(  # a text block whose text is truthy but not a string: the turn item is still kept
    {
        "type": "message",
        "id": "e1",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": 1}, {"type": "toolCall", "name": "x"}],
        },
    }
)
@given(entry)
def test_entry_rows_are_the_lazy_items_extracted(value: dict[str, Any]) -> None:
    expected = _lazy(value)
    fields = ("type", "id", "parentId", "timestamp", "customType")
    parsed = entry_line(value)
    assert entry_rows(parsed) == expected
    assert [getattr(parsed, name) for name in fields] == [value.get(name) for name in fields]
    try:
        typed = DECODE_ENTRY(stdlib_json.dumps(value).encode())
    except msgspec.DecodeError:
        # Only a message that is neither an object nor null, a content (the entry's or its
        # message's) that is not a string, a list of objects or null, or a number JSON cannot
        # hold (the loader's parser decides those), sends a line to the careful path.
        message = value.get("message")
        assert (
            not isinstance(message, (dict, type(None)))
            or not _typed_content(value.get("content"))
            or (isinstance(message, dict) and not _typed_content(message.get("content")))
            or _nan(value)
        )
        return
    assert entry_rows(typed) == expected
    assert [getattr(typed, name) for name in fields] == [value.get(name) for name in fields]


def _typed_content(content: object) -> bool:
    """Whether the typed decoder takes ``content`` (``lines.Content``)."""
    if isinstance(content, list):
        return all(isinstance(block, dict) for block in content)
    return content is None or isinstance(content, str)


def _nan(value: object) -> bool:
    """Whether a float that JSON cannot hold (NaN, an infinity) is anywhere in ``value``."""
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_nan(item) for item in value.values())
    if isinstance(value, list):
        return any(_nan(item) for item in value)
    return False


_IDS = st.sampled_from(["a", "b", "c", "d", "e"])


@settings(max_examples=400)
# A later duplicate id wins; the root names the leaf as its parent; the root's parent dangles.
@example(ids=["a", "b", "a"], parents=["", "a", "b"], first=0, chain=False)
@example(ids=["a", "b", "c"], parents=["c", "a", "b"], first=0, chain=False)
@example(ids=["a", "b", "c"], parents=["zz", "a", "b"], first=7, chain=False)
@given(
    ids=st.lists(_IDS, max_size=6),
    parents=st.lists(st.just("") | _IDS | st.just("zz"), max_size=6),
    first=st.integers(0, 3),
    chain=st.booleans(),
)
def test_the_one_chain_shortcut_gives_the_walks_branch(
    ids: list[str], parents: list[str], first: int, chain: bool
) -> None:
    parents = (parents + [""] * len(ids))[: len(ids)]
    if chain:  # make the file one chain, so the shortcut is taken whenever the ids are unique
        parents = parents[:1] + ids[:-1]
    table = _Entries(first=first, ids=ids, parents=parents)
    for leaf_seq in range(first - 1, first + len(ids) + 1):
        assert list(_branch(leaf_seq, table)) == _walk(leaf_seq, table)


@settings(max_examples=300)
@example(data=b"", start=0, size=1)
@example(data=b"abc", start=0, size=1)  # no line end at all
@example(data=b"a\n" + b"x" * 40 + b"\nb\n", start=2, size=3)  # one line over many reads
@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"long" * 9]), max_size=40).map(b"".join),
    start=st.integers(0, 200),
    size=st.integers(1, 16),
)
def test_chunks_are_the_files_lines_whole(data: bytes, start: int, size: int) -> None:
    start = min(start, len(data))
    if start and data[start - 1 : start] != b"\n":
        start = data.rfind(b"\n", 0, start) + 1  # reads start at a line start
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(scan, "READ_CHUNK", size)
                chunks = list(scan.chunks(fd, start))
        finally:
            os.close(fd)
    # a long line comes alone, without its newline
    whole = [chunk + b"\n" if single else chunk for chunk, _, single in chunks]
    assert b"".join(whole) == data[start:]
    for position, (chunk, at, single) in enumerate(chunks):
        assert chunk and data[at : at + len(chunk)] == chunk
        if single:
            assert b"\n" not in chunk and len(chunk) >= size and data[at + len(chunk)] == 10
        elif position < len(chunks) - 1:
            assert chunk.endswith(b"\n")  # only the last may end mid-line
    starts = [at for _, at, _ in chunks]
    assert starts == sorted(starts)


def _visible_text(content: object) -> str:
    """The rule ``_text_of`` implements, written plainly: a string as it is, else the
    non-empty string texts of the text blocks, one per line."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"]
    ]
    return "\n".join(texts)


@settings(max_examples=300)
@example([{"type": "text", "text": 5}])  # one block: the shortcut must still want a string
@example([{"type": "text"}])
@example([{"type": "image", "text": "x"}])
@given(content)
def test_visible_text_takes_the_one_block_shortcut_faithfully(value: object) -> None:
    assert _text_of(value) == _visible_text(value)
