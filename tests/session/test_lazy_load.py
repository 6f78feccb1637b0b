"""A lazy load (``lazy.py``) keeps clean entry lines undecoded until they are read, and gives
exactly what a careful whole-line parse of every line gives: the same entries, problems, tree,
branch and projection, on files whose lines carry what the shape read skips without checking
(invalid UTF-8, numbers beyond a double), what ``msgspec`` refuses (lone surrogate escapes, in
skipped text and in the tree's own fields), repeated keys, non-object messages, deep nesting
and a torn last line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import Durability, Session
from pi_context.bindings.session.errors import Problem
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.session.lazy import Branch, ById, LazyEntries
from pi_context.bindings.session.store import SKIPPED, parse_chunk, parse_raw
from pi_context.support.jsonlimits import MAX_DEPTH

HEADER = b'{"type":"session","version":3,"id":"s0","timestamp":"t","cwd":"/"}'

# Pieces of JSON text put into an entry line where the shape read skips them, or into the
# fields it reads.
SKIPPED_TEXT = [
    b'"plain"',
    b'"caf\xc3\xa9 \xe2\x9c\x93"',  # valid UTF-8
    b'"bad \xff byte"',  # invalid UTF-8: reported, decoded with replacement
    b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8: invalid
    b'"lone \\ud800 escape"',
    b'"pair \\ud83d\\ude00"',
    b'"literal \\\\ud800"',
    b"1e400",
    b"-1e999",
    b"123456789012345678901234567890",
    b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    b'{"nested": [1, 2.5, null, true]}',
]
IDS = [b'"a"', b'"b"', b'"c"', b'"\\ud800x"', b'"\\\\ud800"', b'"caf\xc3\xa9"', b"7", b"null"]


@st.composite
def _line(draw: st.DrawFn, previous: bytes) -> bytes:
    kind = draw(st.sampled_from([b'"message"', b'"custom"', b'"label"', b'"compaction"']))
    entry_id = draw(st.sampled_from(IDS))
    parent = draw(st.sampled_from([previous, previous, b"null", *IDS]))
    fields = [b'"type":' + kind, b'"id":' + entry_id, b'"parentId":' + parent]
    message = draw(
        st.sampled_from(
            [
                b'{"role":"user","content":' + draw(st.sampled_from(SKIPPED_TEXT)) + b"}",
                b'{"role":"assistant","provider":"p","model":"m","content":[]}',
                b'"not an object"',
                b"null",
                b"[1]",
            ]
        )
    )
    if kind == b'"message"' or draw(st.booleans()):
        fields.append(b'"message":' + message)
    if kind == b'"label"':
        fields += [b'"targetId":' + draw(st.sampled_from(IDS)), b'"label":"x"']
    if kind == b'"compaction"':
        fields += [b'"summary":"s"', b'"firstKeptEntryId":' + draw(st.sampled_from(IDS))]
    fields.append(b'"data":' + draw(st.sampled_from(SKIPPED_TEXT)))
    if draw(st.integers(0, 5)) == 0:  # a repeated key: the last one wins
        fields.append(draw(st.sampled_from([b'"id":', b'"type":', b'"message":'])) + message)
    order = draw(st.permutations(fields))
    return b"{" + b",".join(order) + b"}"


@st.composite
def _files(draw: st.DrawFn) -> bytes:
    lines = [HEADER]
    previous = b"null"
    for _ in range(draw(st.integers(0, 25))):
        line = draw(_line(previous))
        lines.append(line)
        previous = draw(st.sampled_from(IDS))
    data = b"\n".join(lines)
    return data if draw(st.integers(0, 4)) == 0 else data + b"\n"  # sometimes a torn tail


def _careful(data: bytes) -> Session:
    """The reference: every line through the careful parse (Python's ``json``, no ``msgspec``,
    no shape read), then the per-entry loop of ``Session._load``."""
    problems: list[Problem] = []
    values: list[Any] = []
    numbers: list[int] = []
    pieces = data.split(b"\n")
    for number, piece in enumerate(pieces, 1):
        torn = number == len(pieces)
        if torn and not piece:
            break
        value = parse_chunk(piece, number, torn, problems)
        if value is SKIPPED:
            continue
        values.append(value)
        numbers.append(number)
    session = Session(
        header=values[0], path=None, persist=False, now=None, uuids=None,
        durability=Durability.NONE, readonly=True,
    )  # fmt: skip
    session._load(values, numbers, problems)
    return session


def _loaded(path: Path, data: bytes) -> Session:
    """``data`` written to ``path`` and opened (lazily)."""
    path.write_bytes(data)
    return Session.open(path, readonly=True, durability=Durability.NONE)


def _same(lazy: Session, careful: Session) -> None:
    assert lazy.entries == careful.entries
    assert [(p.kind, p.line) for p in lazy.problems] == [(p.kind, p.line) for p in careful.problems]
    assert (lazy.leaf_id, lazy.labels, lazy.session_name) == (
        careful.leaf_id,
        careful.labels,
        careful.session_name,
    )
    assert lazy.branch() == careful.branch()
    assert lazy.projection() == careful.projection()
    assert lazy.view() == careful.view()
    for entry_id in {e["id"] for e in careful.entries if isinstance(e.get("id"), str)}:
        assert lazy.branch(entry_id) == careful.branch(entry_id)
        assert lazy.get(entry_id) == careful.get(entry_id)
        assert lazy.line_of(entry_id) == careful.line_of(entry_id)


@settings(max_examples=300, deadline=None)
@given(data=_files())
def test_a_lazy_load_equals_a_careful_parse_of_every_line(
    tmp_path_factory: Any, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("lazy") / "s.jsonl"
    careful = _careful(data)
    _same(_loaded(path, data), careful)
    _same(Session.open(path, readonly=True, lazy=False), careful)  # every line decoded at open


def _clean_file(path: Path, entries: int) -> list[dict[str, Any]]:
    """A clean conversation with a compaction 20 entries before its end."""
    rows: list[dict[str, Any]] = []
    parent = None
    for n in range(entries):
        row: dict[str, Any] = {"type": "message", "id": f"e{n}", "parentId": parent}
        row["message"] = {"role": "user" if n % 2 else "assistant", "content": f"text {n}"}
        if n == entries - 20:
            row = {"type": "compaction", "id": f"e{n}", "parentId": parent, "summary": "s"}
            row["firstKeptEntryId"] = f"e{n - 5}"
        rows.append(row)
        parent = row["id"]
    path.write_bytes(HEADER + b"\n" + b"".join(encode_line(r) for r in rows))
    return rows


def test_open_branch_and_projection_decode_only_what_the_projection_shows(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = _clean_file(path, 1000)
    session = Session.open(path, readonly=True, durability=Durability.NONE)
    entries = session._entries
    assert isinstance(entries, LazyEntries) and isinstance(session._by_id, ById)
    branch = session.branch()
    assert isinstance(branch, Branch) and len(branch) == 1000
    projection = session.projection()
    assert len(projection["messages"]) == 1 + 5 + 19  # the summary, the kept, the rest
    decoded = [i for i in range(len(entries)) if entries.decoded(i)]
    assert decoded == list(range(1000 - 25, 1000)), "only the kept entries and those after"
    assert list(branch) == rows  # reading everything decodes everything, once
    assert all(entries.decoded(i) for i in range(len(entries)))
    assert session.branch()[10] is session.get("e10") is entries[10]


def test_a_branch_reads_as_the_list_it_stands_for(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    rows = _clean_file(path, 60)
    branch = Session.open(path, readonly=True).branch()
    assert branch == rows and rows == branch and branch != rows[:-1]
    assert branch[3:7] == rows[3:7] and branch[-1] == rows[-1]
    assert list(reversed(branch)) == rows[::-1]
    assert branch.kinds() == [r["type"] for r in rows]
    assert branch + [] == rows and [] + branch == rows
    assert json.loads(json.dumps(list(branch))) == rows


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["set", "del"]), st.sampled_from(["a", "b", "c", "x", "y"])),
        max_size=12,
    )
)
def test_the_id_index_behaves_as_a_dict(ops: list[tuple[str, str]]) -> None:
    raw = parse_raw(
        HEADER
        + b"\n"
        + b"".join(encode_line({"type": "custom", "id": i, "parentId": None}) for i in "abc")
    )
    assert raw.clean is not None
    lazy = LazyEntries(raw.values[1:], raw.kinds[1:])
    index = ById(dict(raw.clean.by_id), lazy)
    model = {i: lazy[n] for i, n in raw.clean.by_id.items()}
    for op, key in ops:
        if op == "set":
            index[key] = model[key] = {"id": key, "n": len(ops)}
        elif key in model:
            del index[key], model[key]
    assert list(index.items()) == list(model.items())
    assert len(index) == len(model)
    assert all((key in index) == (key in model) for key in "abcxy")
