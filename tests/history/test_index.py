"""The history index answers exactly as the unindexed tools do, and can never be stale.

Every comparison runs the same call twice on the same file: through the index and with the
index switched off (``PI_CONTEXT_HISTORY_INDEX=0``, which projects the file afresh). Between
calls the file is appended to, truncated, rewritten, migrated, branched, or the cache is
deleted or corrupted; the answers must stay identical.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import zlib
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_context.bindings.history.columns import MAX_PARTS
from pi_context.bindings.history.index import (
    HistoryIndex,
    Unindexable,
    cache_dir_for,
)
from pi_context.bindings.history.items import ROLES
from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.tools import ToolContext, ToolError

from .conftest import TOOLS_BY_NAME
from .test_history_properties import op, write_session
from .test_pi_fixtures import FIXTURES

Call = tuple[str, dict[str, Any]]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(cache))
    monkeypatch.delenv("PI_CONTEXT_HISTORY_INDEX", raising=False)
    return cache


def run(path: Path, name: str, args: dict[str, Any], leaf: str | None, indexed: bool) -> Any:
    old = os.environ.get("PI_CONTEXT_HISTORY_INDEX")
    os.environ["PI_CONTEXT_HISTORY_INDEX"] = "1" if indexed else "0"
    try:
        result = TOOLS_BY_NAME[name].run(ToolContext(session_path=path, leaf_id=leaf), args)
    except ToolError as exc:  # a named error is an answer too, and must match
        return ("ToolError", str(exc), True)
    finally:
        if old is None:
            del os.environ["PI_CONTEXT_HISTORY_INDEX"]
        else:
            os.environ["PI_CONTEXT_HISTORY_INDEX"] = old
    return (result.text, json.dumps(result.details, sort_keys=True), result.is_error)


def same(path: Path, calls: list[Call], leaf: str | None = None) -> None:
    for name, args in calls:
        indexed = run(path, name, args, leaf, True)
        plain = run(path, name, args, leaf, False)
        assert indexed == plain, f"{name} {args} leaf={leaf}"


def assert_indexable(path: Path, leaf: str | None = None) -> None:
    """The index really answers (not the fallback) for this file."""
    with HistoryIndex(path) as index:
        index.open_view(leaf)


def battery(path: Path, leaf: str | None = None) -> list[Call]:
    """Calls covering every operation, filter, order and error the tools have."""
    listed = json.loads(run(path, "history_list", {"limit": 1000}, leaf, False)[0])
    windows = json.loads(run(path, "history_windows", {}, leaf, False)[0])["windows"]
    items = listed["items"]
    calls: list[Call] = [
        ("history_windows", {}),
        ("history_windows", {"recent_first": False, "limit": 2}),
        ("history_list", {}),
        ("history_list", {"recent_first": False, "max_chars_per_item": 7}),
        ("history_list", {"cursor": 3, "limit": 2}),
        ("history_list", {"window_id": "pcw:nope"}),
        ("history_list", {"role": "user", "tool_name": "bash"}),
        ("history_search", {"query": "zzz-never-there"}),
        ("history_read", {"item_id": "nope"}),
        ("history_read", {"item_id": "nope", "window_id": "pcw:nope"}),
    ]
    calls += [("history_list", {"role": role}) for role in ROLES]
    calls += [("history_list", {"window_id": w["window_id"]}) for w in windows]
    names = {i["tool_name"] for i in items if i["tool_name"]}
    calls += [("history_list", {"tool_name": n}) for n in sorted(names)]
    calls += [("history_list", {"tool_namespace": n.split("_")[0]}) for n in sorted(names)]
    for item in items[:12]:
        text = item["truncated_content"]
        if text:
            query = text[: max(1, len(text) // 3)]
            # Newest-first pages with a limit, asked first: the scan that stops early.
            calls.append(("history_search", {"query": query, "limit": 1}))
            calls.append(("history_search", {"query": query, "limit": 2, "role": "user"}))
            calls.append(("history_search", {"query": query[:1], "limit": 1, "cursor": 2}))
            calls.append(("history_search", {"query": query}))
            calls.append(("history_search", {"query": [text[-2:], "e"], "recent_first": False}))
        calls.append(("history_read", {"item_id": item["item_id"]}))
        calls.append(("history_read", {"item_id": item["item_id"], "offset_chars": -3}))
        other = windows[0]["window_id"]
        calls.append(("history_read", {"item_id": item["item_id"], "window_id": other}))
    return calls


# --- equality on Pi's own sessions ----------------------------------------------------------------

FIXTURE_FILES = sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []


@pytest.mark.skipif(not FIXTURE_FILES, reason="the Pi session fixtures are not present")
@pytest.mark.parametrize("name", [p.name for p in FIXTURE_FILES])
def test_indexed_answers_equal_unindexed_on_every_fixture_and_leaf(name: str) -> None:
    path = FIXTURES / name
    expected = path.with_name(name.replace(".jsonl", ".expected.json"))
    leaves: list[str | None] = [None]
    if expected.exists():
        views = json.loads(expected.read_text()).get("views", [])
        leaves += [view["leafId"] for view in views if view.get("leafId")]
    assert_indexable(path)
    for leaf in leaves:
        same(path, battery(path, leaf), leaf)


# --- equality on hostile files: duplicate ids, cycles, dangling parents, junk lines -------------

_IDS = ["a", "b", "c", "d", "e", "a#0"]
_entry = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["user", "assistant", "compaction", "marker", "boot", "label"]),
        "id": st.sampled_from(_IDS),
        "parent": st.none() | st.sampled_from(_IDS),
        "text": st.text(st.characters(exclude_categories=("Cs",)), max_size=6),
    }
)
_junk = st.sampled_from([b"", b"   ", b"not json", b"[1,2]", b"0", b'"\\ud800"', b"\xff\xfe{}"])


def _line(spec: dict[str, Any]) -> bytes:
    base = {"id": spec["id"], "parentId": spec["parent"], "timestamp": "2026-01-01T00:00:00Z"}
    kind, text = spec["kind"], spec["text"]
    if kind == "user":
        value = {"type": "message", **base, "message": {"role": "user", "content": text}}
    elif kind == "assistant":
        calls = [{"type": "toolCall", "id": "c", "name": "notes_read", "arguments": {"q": text}}]
        message = {"role": "assistant", "content": [{"type": "text", "text": text}, *calls]}
        value = {"type": "message", **base, "message": message}
    elif kind == "compaction":
        value = {"type": "compaction", **base, "summary": text, "firstKeptEntryId": spec["id"]}
    elif kind == "marker":
        data = {"windowId": f"pcw:w:{text or 'x'}"}
        value = {"type": "custom", **base, "customType": "pi-context/reset-marker", "data": data}
    elif kind == "boot":
        value = {"type": "custom_message", **base, "customType": "pi-context/boot",
                 "content": text, "display": False}  # fmt: skip
    else:
        value = {"type": "label", **base, "targetId": "a", "label": text}
    return encode_line(value)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    first=st.lists(_entry | _junk, max_size=12),
    more=st.lists(_entry | _junk, max_size=8),
    leaf=st.none() | st.sampled_from(_IDS),
)
def test_indexed_answers_equal_unindexed_on_hostile_files(
    first: list[Any], more: list[Any], leaf: str | None
) -> None:
    header = encode_line(
        {"type": "session", "version": 3, "id": "0192ffff-0000-7000-8000-000000000002",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    )  # fmt: skip

    def render(parts: list[Any]) -> bytes:
        return b"".join(p + b"\n" if isinstance(p, bytes) else _line(p) for p in parts)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile.jsonl"
        path.write_bytes(header + render(first))
        calls = [*battery(path, None), ("history_list", {"role": "developer"})]
        same(path, calls)
        same(path, calls, leaf)
        with path.open("ab") as handle:
            handle.write(render(more))
        same(path, battery(path, None))
        same(path, calls, leaf)


# --- equality on random sessions, before and after appends ----------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(first=st.lists(op, max_size=10), more=st.lists(op, max_size=6))
def test_indexed_answers_equal_unindexed_on_random_sessions(
    first: list[tuple[Any, ...]], more: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_session(Path(tmp), first)
        assert_indexable(path)
        same(path, battery(path))
        # Append through a second writer: the index catches up incrementally.
        extra = write_session(Path(tmp) / "more", more)
        lines = extra.read_bytes().split(b"\n")[1:]  # entries only, no header
        with path.open("ab") as handle:
            handle.write(b"\n".join(lines))
        same(path, battery(path))


# --- never stale -------------------------------------------------------------------------------


def _session(tmp: Path, texts: list[str]) -> tuple[Session, Path]:
    session = Session.create(Path("/tmp/idx"), session_dir=tmp)
    for text in texts:
        session.append_message({"role": "user", "content": text, "timestamp": 1})
    assert session.path is not None
    return session, Path(session.path)


def _search(path: Path, query: str, leaf: str | None = None) -> list[str]:
    text = run(path, "history_search", {"query": query}, leaf, True)[0]
    return [item["item_id"] for item in json.loads(text)["items"]]


def test_an_append_is_seen_by_the_next_call(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["alpha", "beta"])
    assert _search(path, "gamma") == []
    new = session.append_message({"role": "user", "content": "gamma", "timestamp": 2})
    assert _search(path, "gamma") == [new]
    same(path, battery(path))


def test_many_small_appends_merge_column_parts_and_stay_exact(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["alpha"])
    fork = session.leaf_id
    assert fork is not None
    for k in range(2 * MAX_PARTS + 3):
        if k == MAX_PARTS:  # a branch switch in the middle: the view is rebuilt, not extended
            session.move_leaf(fork)
        new = session.append_message({"role": "user", "content": f"step {k} ∆", "timestamp": k})
        assert _search(path, f"step {k} ") == [new]
    directory = cache_dir_for(Path(os.path.realpath(path)))
    with sqlite3.connect(directory / "index.sqlite") as con:
        most = con.execute("SELECT max(n) FROM (SELECT count(*) n FROM parts GROUP BY name)")
        assert most.fetchone()[0] <= MAX_PARTS
    assert_indexable(path)
    same(path, battery(path))
    same(path, battery(path, fork), fork)


_ID = st.sampled_from(["a", "b", "c", "x\ny", "é", "dangling", "a\n", "\nz"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(batches=[[("a", None), ("b", "a")], [("a", "b")]])  # a repeat closes a cycle
@example(batches=[[("x\ny", None), ("b", "x\ny")], [("x\ny", "b")]])
@example(batches=[[("b", "dangling")], [("dangling", "b"), ("c", "dangling")]])
@example(batches=[[("c", None)], [("\nz", "c")], [("\nz", "\nz")]])  # an id after a newline
@given(
    batches=st.lists(st.lists(st.tuples(_ID, st.one_of(st.none(), _ID)), max_size=4), max_size=5)
)
def test_appends_that_repeat_ids_or_resolve_dangling_parents_stay_exact(
    tmp_path: Path, batches: list[list[tuple[str, str | None]]]
) -> None:
    """Appended raw entries whose ids repeat earlier ids, or that an earlier entry already
    named as its parent, or that hold newlines: every call after every batch is exact."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        path = Path(tmp) / "s.jsonl"
        header = {"type": "session", "version": 3, "id": "s-1", "timestamp": "t", "cwd": "/"}
        path.write_bytes(encode_line(header))
        counter = 0
        for batch in batches:
            lines = []
            for entry_id, parent in batch:
                counter += 1
                message = {"role": "user", "content": f"m{counter} {entry_id}", "timestamp": 1}
                entry = {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": message,
                }
                lines.append(encode_line(entry))
            with path.open("ab") as handle:
                handle.write(b"".join(lines))
            assert_indexable(path)
            same(path, [("history_list", {}), ("history_search", {"query": "m"})])
        leaves = {entry_id for batch in batches for entry_id, _ in batch}
        for leaf in sorted(leaves):
            same(path, [("history_list", {}), ("history_windows", {})], leaf)


def test_parallel_first_calls_share_one_build_and_agree(tmp_path: Path) -> None:
    """Calls racing on a cold cache (one builds under the lock, the others wait and reuse it)
    all answer exactly, and the index is usable afterwards."""
    session, path = _session(tmp_path, [f"word{i} needle{i}" for i in range(300)])
    expected = run(path, "history_search", {"query": "needle1"}, None, False)
    answers: list[Any] = []

    def call() -> None:
        answers.append(
            TOOLS_BY_NAME["history_search"]
            .run(ToolContext(session_path=path), {"query": "needle1"})
            .text
        )

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert answers == [expected[0]] * 6
    assert_indexable(path)


def test_a_truncated_file_is_reindexed(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["alpha", "beta", "gamma"])
    assert len(_search(path, "a")) == 3
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # drop the last line
    assert _search(path, "gamma") == []
    same(path, battery(path))


def test_a_rewritten_file_is_reindexed_even_at_the_same_size(tmp_path: Path) -> None:
    _, path = _session(tmp_path, ["alpha " * 50, "needle-one", "omega " * 50])
    assert len(_search(path, "needle-one")) == 1
    data = path.read_bytes()
    os.utime(path, ns=(1, 1))
    path.write_bytes(data.replace(b"needle-one", b"needle-two"))  # same size, same inode
    assert _search(path, "needle-one") == []
    assert len(_search(path, "needle-two")) == 1
    same(path, battery(path))


def test_a_replaced_file_is_reindexed(tmp_path: Path) -> None:
    _, path = _session(tmp_path, ["alpha"])
    assert _search(path, "alpha")
    _, other = _session(tmp_path / "b", ["bravo"])
    os.replace(other, path)  # a new inode under the same name, as an atomic rewrite leaves it
    assert _search(path, "alpha") == []
    assert _search(path, "bravo")
    same(path, battery(path))


def test_a_migrated_file_is_answered_and_then_reindexed(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    lines = [
        {"type": "session", "version": 2, "id": "0192aaaa-0000-7000-8000-000000000001",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "old words", "timestamp": 1}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
         "message": {"role": "hookMessage", "customType": "x", "content": "hook", "timestamp": 2}},
    ]  # fmt: skip
    path.write_bytes(b"".join(encode_line(v) for v in lines))
    with pytest.raises(Unindexable):
        assert_indexable(path)  # a file that needs migration is answered by the loader
    same(path, battery(path))
    session = Session.open(path)
    session.append_message({"role": "user", "content": "new words", "timestamp": 3})
    assert session.backup_path is not None  # the first write migrated the file on disk
    assert_indexable(path)
    assert len(_search(path, "words")) == 2
    same(path, battery(path))


def test_a_torn_last_line_is_treated_as_the_loader_treats_it(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["alpha"])
    line = encode_line(
        {"type": "message", "id": "t1", "parentId": session.leaf_id, "timestamp": "x",
         "message": {"role": "user", "content": "torn words", "timestamp": 1}}
    )  # fmt: skip
    with path.open("ab") as handle:
        handle.write(line[:20])  # a writer caught mid-line: skipped
    assert _search(path, "torn") == []
    same(path, battery(path))
    with path.open("ab") as handle:
        handle.write(line[20:-1])  # complete JSON without its newline: the loader keeps it
    assert _search(path, "torn") == ["t1"]
    same(path, battery(path))
    with path.open("ab") as handle:
        handle.write(b"\n")
    assert _search(path, "torn") == ["t1"]
    assert_indexable(path)
    same(path, battery(path))


def test_a_deleted_cache_is_rebuilt(tmp_path: Path, _cache: Path) -> None:
    session, path = _session(tmp_path, ["alpha", "beta"])
    assert _search(path, "beta")
    import shutil

    shutil.rmtree(_cache / "history")
    session.append_message({"role": "user", "content": "gamma", "timestamp": 2})
    assert _search(path, "gamma")
    same(path, battery(path))


def _corruptions(directory: Path) -> list[tuple[str, Any]]:
    def garbage_db() -> None:
        (directory / "index.sqlite").write_bytes(os.urandom(8192))
        for extra in directory.glob("index.sqlite-*"):
            extra.unlink()

    def flip_db_middle() -> None:
        db = directory / "index.sqlite"
        with sqlite3.connect(db) as con:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        data = bytearray(db.read_bytes())
        for at in range(len(data) // 3, len(data), 997):
            data[at] ^= 0xFF
        db.write_bytes(bytes(data))

    def tamper_values() -> None:
        with sqlite3.connect(directory / "index.sqlite") as con:
            con.execute("UPDATE parts SET data = zeroblob(length(data)) WHERE name = 'i_role'")
            con.execute("UPDATE parts SET data = zeroblob(length(data)) WHERE name = 'i_tool'")

    def forge_rows() -> None:
        # Offsets shifted, checksums recomputed: only the re-read from the session file notices.
        with sqlite3.connect(directory / "index.sqlite") as con:
            (data,) = con.execute("SELECT data FROM parts WHERE name = 'e_off'").fetchone()
            forged = array("q", [value + 3 for value in array("q", data)]).tobytes()
            con.execute(
                "UPDATE parts SET data = ?, crc = ? WHERE name = 'e_off'",
                (forged, zlib.crc32(forged)),
            )

    def forge_item_entries() -> None:
        # Each item points at the next entry, checksums recomputed: the re-read notices.
        with sqlite3.connect(directory / "index.sqlite") as con:
            (data,) = con.execute("SELECT data FROM parts WHERE name = 'i_seq'").fetchone()
            forged = array("q", [value + 1 for value in array("q", data)]).tobytes()
            con.execute(
                "UPDATE parts SET data = ?, crc = ? WHERE name = 'i_seq'",
                (forged, zlib.crc32(forged)),
            )

    def drop_part() -> None:
        with sqlite3.connect(directory / "index.sqlite") as con:
            con.execute("DELETE FROM parts WHERE name = 'e_id.d'")

    def invalid_utf8() -> None:
        # Item ids are read in place (their part's CRC unchecked): bytes that are not UTF-8
        # must read as a corrupt index, never escape as a decoding error.
        with sqlite3.connect(directory / "index.sqlite") as con:
            for part, data in con.execute("SELECT part, data FROM parts WHERE name = 'i_id.d'"):
                broken = bytes(b if b == 0x0A else 0xFF for b in data)
                con.execute(
                    "UPDATE parts SET data = ?, crc = ? WHERE name = 'i_id.d' AND part = ?",
                    (broken, zlib.crc32(broken), part),
                )

    def scramble_content() -> None:
        for content in directory.glob("content-*.bin"):
            data = content.read_bytes()
            content.write_bytes(data[::-1])

    def drop_content() -> None:
        for content in directory.glob("content-*.bin"):
            content.unlink()

    return [
        ("garbage database", garbage_db),
        ("flipped database bytes", flip_db_middle),
        ("tampered values", tamper_values),
        ("forged offsets", forge_rows),
        ("scrambled content", scramble_content),
        ("missing content", drop_content),
        ("missing column part", drop_part),
        ("forged item entries", forge_item_entries),
        ("invalid UTF-8 in a string column", invalid_utf8),
    ]


@pytest.mark.parametrize("which", range(9))
def test_a_corrupted_cache_is_never_trusted(tmp_path: Path, which: int) -> None:
    session, path = _session(tmp_path, [f"word{i} needle{i}" for i in range(40)])
    calls = battery(path)
    same(path, calls)  # builds the index
    directory = cache_dir_for(Path(os.path.realpath(path)))
    assert (directory / "index.sqlite").exists()
    _name, corrupt = _corruptions(directory)[which]
    corrupt()
    same(path, calls)
    same(path, [("history_search", {"query": "needle3"}), ("history_search", {"query": "word"})])
    assert_indexable(path)  # and the index was rebuilt, not abandoned


def test_two_branches_never_leak_into_each_other(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["trunk"])
    fork = session.leaf_id
    assert fork is not None
    left = session.append_message({"role": "user", "content": "left only", "timestamp": 2})
    session.move_leaf(fork)
    right = session.append_message({"role": "user", "content": "right only", "timestamp": 3})
    assert _search(path, "only") == [right]  # the file's leaf is on the right branch
    assert _search(path, "only", leaf=left) == [left]
    assert _search(path, "only", leaf=right) == [right]
    for leaf in (None, left, right, fork):
        same(path, battery(path, leaf), leaf)
    session.move_leaf(left)  # Pi switches back and appends there
    again = session.append_message({"role": "user", "content": "left again", "timestamp": 4})
    assert _search(path, "only") == [left]
    assert _search(path, "again") == [again]
    same(path, battery(path))


def test_an_append_during_calls_never_yields_a_stale_or_torn_answer(tmp_path: Path) -> None:
    session, path = _session(tmp_path, ["seed"])
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pi_context.bindings.session import Session\n"
        "s = Session.open(Path(sys.argv[1]))\n"
        "for i in range(300):\n"
        "    s.append_message({'role': 'user', 'content': f'line {i}', 'timestamp': i})\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script, str(path)])
    answers: list[list[str]] = []
    stop = threading.Event()
    try:
        while writer.poll() is None and not stop.is_set():
            text, _, is_error = run(path, "history_list", {"limit": 5}, None, True)
            assert not is_error, text
            answers.append([item["item_id"] for item in json.loads(text)["items"]])
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    final = Session.open(path).branch()
    ids = [entry["id"] for entry in final]
    for answer in answers:  # each answer is the newest items of some prefix of the file
        assert answer, "never empty"
        end = ids.index(answer[0]) + 1
        assert answer == ids[:end][::-1][: len(answer)]
    same(path, battery(path))


def _forge_part(directory: Path, name: str, change: Any) -> None:
    """Rewrite every part of column ``name`` with ``change(data)``, its CRC made to match (a
    forger, or damage the checksum cannot see)."""
    with sqlite3.connect(directory / "index.sqlite") as con:
        rows = con.execute("SELECT part, data FROM parts WHERE name = ?", (name,)).fetchall()
        for part, data in rows:
            forged = change(bytes(data))
            con.execute(
                "UPDATE parts SET data = ?, crc = ? WHERE name = ? AND part = ?",
                (forged, zlib.crc32(forged), name, part),
            )


def _not_utf8(data: bytes) -> bytes:
    return bytes(b if b == 0x0A else 0xFF for b in data)


FORGERIES: list[tuple[str, Any]] = [
    ("meta value not JSON", lambda d: _set_meta(d, "sizes", "{")),
    ("meta value of the wrong type", lambda d: _set_meta(d, "parts", "[1, 2]")),
    ("meta end not a number", lambda d: _set_meta(d, "end", '"x"')),
    ("view head not JSON", lambda d: _forge_part(d, "view", lambda b: b[:8] + b"{" * (len(b) - 8))),
    ("view head of the wrong shape", lambda d: _forge_part(d, "view", _view_of_wrong_shape)),
    ("entry ids not UTF-8", lambda d: _forge_part(d, "e_id.d", _not_utf8)),
    ("tool names not UTF-8", lambda d: _forge_part(d, "t_name.d", _not_utf8)),
    ("entry stamps not UTF-8", lambda d: _forge_part(d, "e_stamp.d", _not_utf8)),
    ("markers not UTF-8", lambda d: _forge_part(d, "e_marker.d", _not_utf8)),
]


def _set_meta(directory: Path, key: str, value: str) -> None:
    with sqlite3.connect(directory / "index.sqlite") as con:
        con.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))


def _view_of_wrong_shape(blob: bytes) -> bytes:
    head = b'{"leaf": 1}'
    return len(head).to_bytes(8, "little") + head + blob[8 + int.from_bytes(blob[:8], "little") :]


@pytest.mark.parametrize("which", range(len(FORGERIES)), ids=[name for name, _ in FORGERIES])
def test_forged_index_data_with_matching_checksums_is_never_trusted(
    tmp_path: Path, which: int
) -> None:
    """Checksums catch damage, not a forger (or damage that rewrote them): whatever the
    stored metadata, view or string tables hold, a call answers exactly as the file does."""
    session, path = _session(tmp_path, [f"word{i} needle{i}" for i in range(40)])
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "notes_read", "arguments": {}}],
            "timestamp": 9,
        }
    )
    calls = battery(path)
    same(path, calls)  # builds the index
    directory = cache_dir_for(Path(os.path.realpath(path)))
    _name, forge = FORGERIES[which]
    forge(directory)
    same(path, calls)
    same(path, [("history_search", {"query": "needle3"}), ("history_search", {"query": "word"})])


def test_the_root_follows_the_sessions_own_window_naming_as_it_is_appended(
    tmp_path: Path,
) -> None:
    # No window entry yet: the extension's root. Then the session's own whole-id boot (the
    # fork-safe naming) renames the root; then an own id in the extension's form decides for
    # that form. Each step is an append the index extends its view by, and it agrees.
    session, path = _session(tmp_path, ["alpha"])
    sid = session.session_id
    fork = session.leaf_id
    assert fork is not None

    def windows() -> list[str]:
        text = run(path, "history_windows", {"recent_first": False}, None, True)[0]
        return [w["window_id"] for w in json.loads(text)["windows"]]

    assert windows() == [f"pcw:{sid[:8]}:root"]
    session.append_custom_message(
        "pi-context/boot", "root boot", False, {"windowId": f"pcw:{sid}:root"}
    )
    assert windows() == [f"pcw:{sid}:root"]
    same(path, battery(path))
    session.append_custom("pi-context/reset-marker", {"windowId": f"pcw:{sid[:8]}:0badcafe"})
    assert windows() == [f"pcw:{sid[:8]}:root", f"pcw:{sid[:8]}:0badcafe"]
    same(path, battery(path))
    same(path, battery(path, fork), fork)


# --- newest-first search pages that stop once the page and its cursor are found -----------------


@pytest.mark.skipif(not FIXTURE_FILES, reason="the Pi session fixtures are not present")
@pytest.mark.parametrize("name", [p.name for p in FIXTURE_FILES[:6]])
def test_newest_first_search_pages_followed_by_cursor_equal_unindexed(name: str) -> None:
    """Every page of a newest-first walk, each asked of an index that holds no hits yet (the
    scan stops once the page and its cursor are found), is the unindexed tool's page."""
    from pi_context.bindings.history.resident import close_all

    path = FIXTURES / name
    assert_indexable(path)
    listed = json.loads(run(path, "history_list", {"limit": 40}, None, False)[0])["items"]
    queries = sorted({i["truncated_content"][:2] for i in listed if i["truncated_content"]})[:6]
    for query in [*queries, "e", " "]:
        for extra in ({}, {"role": "assistant"}, {"role": "tool"}):
            args: dict[str, Any] = {"query": query, "limit": 2, **extra}
            for _page in range(6):
                close_all()  # nothing held: the early-stopping scan answers
                indexed = run(path, "history_search", args, None, True)
                plain = run(path, "history_search", args, None, False)
                assert indexed == plain, f"{name} {args}"
                cursor = json.loads(plain[0]).get("next_cursor")
                if cursor is None:
                    break
                args = {**args, "cursor": cursor}
