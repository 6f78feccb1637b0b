"""``session.marks``: byte strings and patterns searched chunk by chunk as a file is read find
every match a search of the whole file finds (across chunk boundaries too), and a lazy load
marks exactly the lines they start in, the lines its type tests accept, and every line it
decodes whole."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.session.marks import Marks
from pi_context.bindings.session.session import Session

ESCAPE = re.compile(rb"\\u(?i:00e9|0041)")


def whole_file_starts(data: bytes, needles: tuple[bytes, ...]) -> list[int]:
    starts = {m.start() for needle in needles for m in re.finditer(re.escape(needle), data)}
    # overlapping occurrences of a needle
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            starts.add(at)
            at = data.find(needle, at + 1)
    starts |= {m.start() for m in ESCAPE.finditer(data)}
    return sorted(starts)


pieces = st.sampled_from([b"ab", b"aba", b"x", b"\\u00E9", b"\\u0041", b"\\", b"u", b"\n", b"b"])


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(pieces, max_size=60).map(b"".join),
    cuts=st.lists(st.integers(1, 9), max_size=40),
    needles=st.sampled_from([(b"aba",), (b"ab", b"aba"), (b"ba", b"xab")]),
)
def test_chunks_find_what_the_whole_file_search_finds(
    data: bytes, cuts: list[int], needles: tuple[bytes, ...]
) -> None:
    marks = Marks(needles, (ESCAPE,))
    at = 0
    for size in [*cuts, len(data)]:
        chunk = data[at : at + size]
        if chunk:
            marks.watch(memoryview(chunk))
        at += size
    assert marks.starts[-1] == Marks.END
    found = marks.starts[:-1]
    # A needle that holds another is found where the other is: only the other is sought.
    wanted = tuple(n for n in needles if not any(o in n and o != n for o in needles))
    assert found == whole_file_starts(data, wanted)


def test_a_needle_is_a_single_line_of_bytes() -> None:
    with pytest.raises(ValueError, match="newline"):
        Marks((b"a\nb",))
    with pytest.raises(ValueError, match="non-empty"):
        Marks((b"",))


def test_a_lazy_load_marks_the_lines_a_reader_wants(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/"}
    lines = [json.dumps(header)]
    texts = ["plain", "has the needle", "caf\\u00e9", "plain again", "needle twice needle"]
    parent = None
    for number, text in enumerate(texts):
        entry_id = f"e{number}"
        body = {"role": "user", "content": "TEXT"}
        entry = {"type": "message", "id": entry_id, "parentId": parent, "message": body}
        lines.append(json.dumps(entry).replace("TEXT", text))
        parent = entry_id
    lines.append(json.dumps({"type": "label", "id": "l1", "parentId": parent, "targetId": "e0"}))
    state = {"type": "custom", "id": "c1", "parentId": "l1", "customType": "x/state"}
    lines.append(json.dumps({**state, "data": {"keep": True}}))
    lines.append(json.dumps({**state, "id": "c2", "parentId": "c1", "data": {}}))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    marks = Marks((b"needle",), (ESCAPE,), {"custom": lambda line: b"keep" in line})
    session = Session.open(path, readonly=True, marks=marks)
    # e1 and e4 hold the needle, e2 an escape, the label is decoded whole, c1 passes its test
    assert session.marked == [1, 2, 4, 5, 6]
    assert Session.open(path, readonly=True).marked is None  # no marks asked for


def test_a_file_that_is_not_clean_marks_nothing(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/"}
    entry = {"type": "message", "id": "e1", "parentId": None, "message": {"role": "user"}}
    text = "\n".join(json.dumps(v) for v in (header, entry, entry)) + "\n"  # a repeated id
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    assert Session.open(path, readonly=True, marks=Marks((b"user",))).marked is None
