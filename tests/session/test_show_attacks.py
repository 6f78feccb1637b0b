"""Hostile sessions through ``pi-context session show``: every entry once, any depth, no hang.

Each test is named after the attack it replays (issue 15). Exit codes: 0 when the file loads as a
session, whatever problems it holds (they are warnings on stderr); 1 when it is not a session,
is missing, or ``--leaf`` names no entry.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.tree import tree_view
from pi_context.cli import main

from .test_fixtures import nested_tree

HEADER = (
    '{"type":"session","version":3,"id":"0123abcd-0000-7000-8000-000000000000",'
    '"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
)
TREE_ROW = re.compile(r"[●○] (\S+)")


def _message_line(entry_id: str, parent: str | None, second: int = 1) -> str:
    parent_json = "null" if parent is None else f'"{parent}"'
    return (
        f'{{"type":"message","id":"{entry_id}","parentId":{parent_json},'
        f'"timestamp":"2026-01-01T00:00:{second % 60:02d}.000Z",'
        f'"message":{{"role":"user","content":"hi {entry_id}","timestamp":1}}}}\n'
    )


def _ids(count: int) -> list[str]:
    return [f"{index:08x}" for index in range(count)]


def _chain(ids: list[str]) -> list[str]:
    return [_message_line(entry_id, ids[i - 1] if i else None) for i, entry_id in enumerate(ids)]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text(HEADER + "".join(lines))
    return path


def _show(path: Path, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["session", "show", str(path), *flags])
    return code, out.getvalue(), err.getvalue()


def _tree_ids(text: str) -> list[str]:
    section = text.split("\ntree:\n", 1)[1]
    return [match.group(1) for match in map(TREE_ROW.search, section.splitlines()) if match]


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line]


# --- duplicate ids ---------------------------------------------------------------------------


def _duplicated_session(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    ids = _ids(count)
    chain = _chain(ids)
    return _write(tmp_path / f"dup{count}.jsonl", chain + chain), ids


def test_duplicate_id_session_of_20_entries_shows_each_once(tmp_path: Path) -> None:
    path, ids = _duplicated_session(tmp_path, 20)
    code, out, err = _show(path)
    assert code == 0
    assert _tree_ids(out) == ids, "each entry once, in chain order"
    (warning,) = _warnings(err)
    assert warning.startswith(f"warning: {path}: duplicate-id: 20 ids written more than once")
    assert "00000000 (lines 2, 22)" in warning and "00000004 (lines 6, 26)" in warning
    assert warning.endswith("and 15 more")
    code, out, _ = _show(path, "--json")
    assert code == 0
    assert [node["id"] for node in json.loads(out)["tree"]] == ids


def test_duplicate_id_session_of_2000_entries_completes_with_one_warning(tmp_path: Path) -> None:
    path, ids = _duplicated_session(tmp_path, 2000)
    code, out, err = _show(path)
    assert code == 0 and _tree_ids(out) == ids
    assert len(_warnings(err)) == 1 and "2000 ids written more than once" in err
    view = json.loads(_show(path, "--json")[1])
    assert [node["id"] for node in view["tree"]] == ids
    assert view["branchIds"] == ids, "the later copies win: the same chain"


def test_duplicate_id_later_entry_wins_its_place_in_the_tree(tmp_path: Path) -> None:
    # aaaa first hangs under root, then again (winning) under bbbb: shown once, under bbbb.
    lines = [
        _message_line("root0000", None),
        _message_line("aaaa0001", "root0000"),
        _message_line("bbbb0002", "root0000", 2),
        _message_line("aaaa0001", "bbbb0002", 3),
    ]
    path = _write(tmp_path / "moved.jsonl", lines)
    tree = json.loads(_show(path, "--json")[1])["tree"]
    assert [(n["id"], n["parentId"]) for n in tree] == [
        ("root0000", None),
        ("bbbb0002", "root0000"),
        ("aaaa0001", "bbbb0002"),
    ]


def test_one_id_repeated_many_times_lists_a_few_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "same.jsonl", [_message_line("aaaa0001", None)] * 1000)
    code, out, err = _show(path)
    assert code == 0 and _tree_ids(out) == ["aaaa0001"]
    (warning,) = _warnings(err)
    assert "1 id written more than once" in warning
    assert "aaaa0001 (lines 2, 3, 4, 5, 6, … 995 more)" in warning


# --- depth -----------------------------------------------------------------------------------


def test_400k_entry_linear_session_through_json_in_a_subprocess(tmp_path: Path) -> None:
    count = 400_000
    ids = _ids(count)
    path = _write(tmp_path / "long.jsonl", _chain(ids))
    result = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "show", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr == ""
    view = json.loads(result.stdout)
    tree = view["tree"]
    assert len(tree) == count
    assert [node["id"] for node in tree] == ids
    assert tree[0] == {
        "id": ids[0],
        "parentId": None,
        "label": None,
        "depth": 0,
        "children": [ids[1]],
    }
    last = {"id": ids[-1], "parentId": ids[-2], "label": None, "depth": count - 1, "children": []}
    assert tree[-1] == last
    assert view["branchIds"] == ids and view["leafId"] == ids[-1]
    assert len(view["projection"]["messages"]) == count


def test_deep_chain_text_view_stays_at_one_indent(tmp_path: Path) -> None:
    ids = _ids(100_000)
    path = _write(tmp_path / "deep.jsonl", _chain(ids))
    code, out, _ = _show(path)
    assert code == 0
    section = out.split("\ntree:\n", 1)[1].splitlines()
    assert [TREE_ROW.search(line).group(1) for line in section] == ids  # type: ignore[union-attr]
    assert {line.index("●") for line in section} == {2}, "a chain without forks is one column"


def test_deep_fork_comb_text_view_has_bounded_indentation(tmp_path: Path) -> None:
    # Every spine entry forks into a leaf and the next spine entry: 3,000 nested forks.
    lines, parent = [], None
    for index in range(3000):
        spine = f"s{index:07x}"
        lines.append(_message_line(spine, parent, index))
        lines.append(_message_line(f"l{index:07x}", spine, index + 1))
        parent = spine
    path = _write(tmp_path / "comb.jsonl", lines)
    code, out, _ = _show(path)
    assert code == 0
    section = out.split("\ntree:\n", 1)[1].splitlines()
    assert len(section) == 6000 and len(set(_tree_ids(out))) == 6000
    assert max(len(line) for line in section) < 120, "indentation stops growing"
    assert any("»2999 ├ " in line for line in section), "the nesting is written as a number"
    tree = json.loads(_show(path, "--json")[1])["tree"]
    assert max(node["depth"] for node in tree) == 3000


# --- cycles ----------------------------------------------------------------------------------


def test_100k_entry_parent_cycle_is_reported_compactly(tmp_path: Path) -> None:
    count = 100_000
    ids = _ids(count)
    lines = [_message_line(entry_id, ids[i - 1]) for i, entry_id in enumerate(ids)]
    lines[0] = _message_line(ids[0], ids[-1])
    path = _write(tmp_path / "ring.jsonl", lines)
    code, out, err = _show(path)
    assert code == 0
    (warning,) = _warnings(err)
    assert len(warning) < 400, warning
    assert f"{path}:2: cycle: parent cycle of 100000 entries: 00000000 -> 0001869f" in warning
    assert "... 99988 more ..." in warning
    assert _tree_ids(out) == ids, "cut at its first line, then the chain of its children"
    assert "↺ cycle of 100000" in out
    tree = json.loads(_show(path, "--json")[1])["tree"]
    assert tree[0]["cycle"] == count and tree[0]["parentId"] is None
    assert [node["id"] for node in tree] == ids


def test_many_small_cycles_give_a_few_warnings_and_a_count(tmp_path: Path) -> None:
    lines = []
    for index in range(1000):
        a, b = f"a{index:07x}", f"b{index:07x}"
        lines += [_message_line(a, b), _message_line(b, a)]
    path = _write(tmp_path / "rings.jsonl", lines)
    code, out, err = _show(path)
    assert code == 0 and len(_tree_ids(out)) == 2000
    warnings = _warnings(err)
    assert len(warnings) == 6
    assert (
        warnings[-1]
        == f"warning: {path}: cycle: 995 more like this (lines 12, 14, 16, 18, 20, … 990 more)"
    )


def test_hostile_session_through_the_real_cli_prints_no_traceback(tmp_path: Path) -> None:
    ids = _ids(300)
    chain = _chain(ids)
    ring = [_message_line("c0000000", "c0000001"), _message_line("c0000001", "c0000000")]
    path = _write(tmp_path / "mixed.jsonl", chain + chain + ring + ["{oops\n", "[1]\n"])
    for flags in ([], ["--json"]):
        result = subprocess.run(
            [sys.executable, "-m", "pi_context", "session", "show", str(path), *flags],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0
        assert "Traceback" not in result.stderr
        kinds = [line.split(": ")[2] for line in result.stderr.splitlines()]
        assert kinds == ["invalid-json", "duplicate-id", "not-an-object", "cycle"], kinds


# --- property: random small entry graphs -----------------------------------------------------

IDS = [f"e{index}" for index in range(6)]
PARENTS = st.sampled_from([*IDS, *IDS, None, "gone0000", "", 3])  # mostly known ids: cycles
STAMPS = st.sampled_from(
    ["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "not a date", None]
)


@st.composite
def entry_graphs(draw: st.DrawFn) -> list[dict[str, Any]]:
    entries = []
    for _ in range(draw(st.integers(0, 12))):
        entry_id = draw(st.sampled_from(IDS))
        entry: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": draw(PARENTS)}
        stamp = draw(STAMPS)
        if stamp is not None:
            entry["timestamp"] = stamp
        if draw(st.booleans()):
            entry["message"] = {"role": "user", "content": entry_id, "timestamp": 1}
        else:
            entry = {**entry, "type": "label", "targetId": draw(st.sampled_from(IDS))}
            entry["label"] = draw(st.sampled_from(["x", "", None]))
        entries.append(entry)
    ring = draw(st.lists(st.sampled_from(IDS), max_size=4, unique=True))  # a parent cycle
    for index, entry_id in enumerate(ring):
        parent = ring[(index + 1) % len(ring)]
        entries.append({"type": "custom", "id": entry_id, "parentId": parent, "customType": "r"})
    return list(draw(st.permutations(entries)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries=entry_graphs())
def test_random_entry_graphs_show_every_id_exactly_once(
    tmp_path_factory: Any, entries: list[dict[str, Any]]
) -> None:
    path = tmp_path_factory.mktemp("graph") / "s.jsonl"
    path.write_text(HEADER + "".join(encode(e) + "\n" for e in entries))
    session = Session.open(path, readonly=True)
    distinct = list(dict.fromkeys(e["id"] for e in session.entries))
    code, out, err = _show(path)
    assert code == 0 and "Traceback" not in err
    text_ids = _tree_ids(out)
    assert Counter(text_ids) == Counter(distinct)
    code, out, _ = _show(path, "--json")
    assert code == 0
    tree = json.loads(out)["tree"]
    assert [node["id"] for node in tree] == text_ids
    nested = nested_tree(tree)  # depth-first, parents and depths consistent
    cut = any("cycle" in node for node in tree)
    event(f"cut cycles: {cut}; duplicates: {len(distinct) < len(session.entries)}")
    # Before the first cut cycle, the list is Pi's own tree (repeated ids as their later entry).
    first_cut = next((i for i, node in enumerate(tree) if "cycle" in node), len(tree))
    assert all("cycle" not in node or node["parentId"] is None for node in tree)
    pi_tree = encode(tree_view(session.tree()))
    assert encode(nested[: len(tree_view(session.tree()))]) == pi_tree
    assert len(_flatten_ids(tree_view(session.tree()))) == first_cut


def _flatten_ids(nodes: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node["id"])
        stack.extend(reversed(node["children"]))
    return out


# --- terminal escapes ------------------------------------------------------------------------


def test_terminal_escape_injection_through_ids_labels_and_content_is_escaped(
    tmp_path: Path,
) -> None:
    evil = "b\x1b[31m\nX\u202e"
    lines = [
        _message_line("aaaa0001", None),
        encode(
            {
                "type": "message",
                "id": evil,
                "parentId": "aaaa0001",
                "timestamp": "x",
                "message": {"role": "user", "content": "hi\x1b[2J"},
            }
        )
        + "\n",
        encode(
            {
                "type": "label",
                "id": "cccc0003",
                "parentId": evil,
                "targetId": "aaaa0001",
                "label": "\x1b]0;title\x07",
            }
        )
        + "\n",
        encode(
            {
                "type": "message",
                "id": evil,
                "parentId": "cccc0003",
                "timestamp": "x",
                "message": {"role": "user", "content": "again"},
            }
        )
        + "\n",
    ]
    path = _write(tmp_path / "escapes.jsonl", lines)
    code, out, err = _show(path)
    assert code == 0
    for text in (out, err):
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", text), text
    assert "b\\x1b[31m\\x0aX\\u202e" in out and "[\\x1b]0;title\\x07]" in out
    assert "b\\x1b[31m\\x0aX\\u202e (lines 3, 5)" in err
    code, out, _ = _show(path, "--json")
    ids = [node["id"] for node in json.loads(out)["tree"]]
    assert ids == ["aaaa0001", "cccc0003", evil]
