"""The index build's batched steps give what the plain, one-entry-at-a-time steps give.

``chunk.Columns`` indexes a chunk of lines with list operations: however the file is cut into
chunks (one line each, a few, all at once, a line longer than a chunk), the stored index is
byte for byte the same. ``_Views._extend`` appends a branch path as runs of consecutive
entries: it must give the view the entry-by-entry projection gives, on any table.
"""

from __future__ import annotations

import sqlite3
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history import scan
from pi_context.bindings.history.format import _FLIP, _STAMP, _SYSTEM, View, _Entries
from pi_context.bindings.history.index import HistoryIndex
from pi_context.bindings.history.views import _flip, _Views, _walk
from pi_context.bindings.session.jsonl import encode_line

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "t", "cwd": "/"}


def _entry(kind: int, at: int) -> dict[str, Any]:
    base = {"id": f"e{at}", "parentId": f"e{at - 1}" if at else None, "timestamp": f"t{at}"}
    if kind == 0:
        return {**base, "type": "message", "message": {"role": "user", "content": f"u{at} \u00e9"}}
    if kind == 1:
        content = [
            {"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": f"a{at}"},
            {"type": "toolCall", "name": "bash", "arguments": {"n": at}},
        ]
        return {**base, "type": "message", "message": {"role": "assistant", "content": content}}
    if kind == 2:
        return {**base, "type": "custom", "customType": "pi-context/reset-marker", "data": {}}
    if kind == 3:
        return {**base, "type": "compaction", "summary": f"s{at}", "firstKeptEntryId": "e0"}
    if kind == 4:
        return {**base, "type": "message", "message": {"role": "user", "content": "lone \ud800"}}
    if kind == 5:
        return {**base, "type": "label", "targetId": "e0", "label": "x"}
    return {**base, "id": f"e{at // 2}"}  # a repeated id (kind 6)


def _stored(path: Path, cache: Path) -> tuple[list[Any], bytes]:
    with HistoryIndex(path, cache) as index:
        index.open_view(None)
    db = sqlite3.connect(cache / "index.sqlite")
    try:
        parts = db.execute("SELECT name, part, data FROM parts ORDER BY name, part").fetchall()
        meta = db.execute(
            "SELECT key, value FROM meta WHERE key NOT IN"
            " ('generation', 'seen', 'content_stamp') ORDER BY key"
        ).fetchall()
    finally:
        db.close()
    (content,) = cache.glob("content-*.bin")
    return [parts, meta], content.read_bytes()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(kinds=[0, 1, 2, 3], size=1)
@given(kinds=st.lists(st.integers(0, 6), max_size=12), size=st.integers(1, 400))
def test_any_cut_into_chunks_stores_the_same_index(
    tmp_path_factory: pytest.TempPathFactory, kinds: list[int], size: int
) -> None:
    tmp = tmp_path_factory.mktemp("cut")
    path = tmp / "s.jsonl"
    path.write_bytes(b"".join(encode_line(v) for v in [HEADER, *map(_entry, kinds, range(99))]))
    whole = _stored(path, tmp / "whole")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan, "READ_CHUNK", size)  # a line each, a few, or longer than a chunk
        cut = _stored(path, tmp / "cut")
    assert cut == whole


def _extend_entry_by_entry(
    view: View, table: _Entries, path: list[int], before: tuple[int, int, int] | None
) -> None:
    """The projection one entry at a time, as the build made it before runs."""
    first, flags, item0 = table.first, table.flags, table.item0
    previous = before
    for seq in path:
        at = seq - first
        marker = table.markers[at]
        if marker:
            if previous is not None and previous[0] & _FLIP:
                count = previous[2] - previous[1]
                _flip(view, len(view.positions) - count, len(view.positions))
            stamp = table.stamps[at] if flags[at] & _STAMP else None
            view.windows.append((marker, stamp, table.ids[at], len(view.positions)))
        lo, hi = item0[at], item0[at + 1]
        if hi > lo:
            if view.positions and view.positions[-1] >= lo:
                view.ascending = False
            view.positions.extend(range(lo, hi))
            view.roles += table.roles[lo - table.item_base : hi - table.item_base]
        previous = (flags[at], lo, hi)


class _Projector(_Views):
    session_id = "s-1"


@settings(max_examples=400)
@example(
    counts=[1, 1, 1],
    markers=[False, True, True],
    bits=[1, 1, 0],
    order=list(range(8)),
    cut=3,
    before=None,
    first=0,
)
@given(
    counts=st.lists(st.integers(0, 3), max_size=8),
    markers=st.lists(st.booleans(), max_size=8),
    bits=st.lists(st.integers(0, 15), max_size=8),
    order=st.permutations(range(8)),
    cut=st.integers(0, 8),
    before=st.none() | st.tuples(st.sampled_from([0, _FLIP]), st.just(0), st.integers(0, 2)),
    first=st.integers(0, 3),
)
def test_extending_by_runs_gives_the_entry_by_entry_view(
    counts: list[int],
    markers: list[bool],
    bits: list[int],
    order: list[int],
    cut: int,
    before: tuple[int, int, int] | None,
    first: int,
) -> None:
    n = len(counts)
    markers = (markers + [False] * n)[:n]
    bits = (bits + [0] * n)[:n]
    item0 = list(accumulate(counts, initial=5))
    roles = bytes((_SYSTEM, 0)[code % 2] for code in range(item0[-1] - 5))
    table = _Entries(
        first=first,
        ids=[f"e{at}" for at in range(n)],
        parents=[""] * n,
        markers=["m" if marker else "" for marker in markers],
        stamps=[f"t{at}" for at in range(n)],
        flags=bytearray(bits),
        item0=item0,
        roles=roles,
        item_base=5,
    )
    # Mostly in file order, with jumps: a prefix of a permutation, sorted in pieces.
    seqs = [seq for seq in order if seq < n][:cut]
    path = sorted(seqs[: len(seqs) // 2]) + seqs[len(seqs) // 2 :]
    path = [seq + first for seq in path]
    start = array("i", [0, 1]) if before is not None else array("i")
    ours = View(0, array("i", start), bytearray([_SYSTEM] * len(start)), [])
    expected = View(0, array("i", start), bytearray([_SYSTEM] * len(start)), [])
    _Projector()._extend(ours, table, path, before)
    _extend_entry_by_entry(expected, table, path, before)
    assert (ours.positions, ours.roles, ours.windows, ours.ascending) == (
        expected.positions,
        expected.roles,
        expected.windows,
        expected.ascending,
    )


def _walk_step_by_step(leaf_seq: int, table: _Entries) -> list[int]:
    """The branch by following one parent id at a time (a later duplicate id wins)."""
    first, ids, parents = table.first, table.ids, table.parents
    winners = {entry_id: seq for seq, entry_id in enumerate(ids, first)}
    branch: list[int] = []
    seen: set[int] = set()
    current = leaf_seq if first <= leaf_seq < first + len(ids) else None
    while current is not None and current not in seen:
        seen.add(current)
        branch.append(current)
        parent = parents[current - first]
        current = winners.get(parent) if parent else None
    branch.reverse()
    return branch


_IDS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", ""])


@settings(max_examples=500)
@example(ids=["a", "b", "c"], parents=["c", "a", "b"], first=0, unique=True)  # a cycle
@example(ids=["a", "b", "c", "d"], parents=["", "a", "d", "c"], first=2, unique=True)
@example(ids=["a", "b", "c", "d"], parents=["c", "a", "b", "b"], first=0, unique=True)
@given(
    ids=st.lists(_IDS, max_size=8),
    parents=st.lists(_IDS | st.just("zz"), max_size=8),
    first=st.integers(0, 3),
    unique=st.booleans(),
)
def test_walking_by_segments_gives_the_step_by_step_branch(
    ids: list[str], parents: list[str], first: int, unique: bool
) -> None:
    if unique:  # the segments' case (duplicates and empty ids walk step by step)
        ids = [entry_id for entry_id in dict.fromkeys(ids) if entry_id]
    parents = (parents + [""] * len(ids))[: len(ids)]
    table = _Entries(first=first, ids=ids, parents=parents)
    for leaf_seq in range(first - 1, first + len(ids) + 1):
        assert _walk(leaf_seq, table) == _walk_step_by_step(leaf_seq, table)
