"""Damaged files: clear reports, nothing recoverable dropped, never a hang or a traceback."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.session import Durability, Session, SessionError, seeded_uuids
from pi_context.bindings.session.jsonl import encode
from pi_context.testing.synth import apply_ops, random_ops, stepping_clock

CWD = Path("/tmp/pi-context-corruption")
USER = {"op": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}


def _valid_session(directory: Path, seed: int = 3, ops: int = 14) -> Session:
    rng = random.Random(seed)
    session = Session.create(
        CWD,
        directory,
        now=stepping_clock(rng),
        uuids=seeded_uuids(seed),
        durability=Durability.NONE,
    )
    apply_ops(session, random_ops(rng, ops, opening=USER))
    return session


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _line(entry: dict[str, Any]) -> bytes:
    return (encode(entry) + "\n").encode()


def _header(sid: str = "0123abcd-0000-7000-8000-000000000000") -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }


def _msg(
    entry_id: str, parent: str | None, text: str = "x", ts: str = "2026-01-01T00:00:01.000Z"
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def _compact_session(directory: Path) -> Session:
    """Every entry type, short texts (so every byte offset can be tried quickly)."""
    session = Session.create(CWD, directory, uuids=seeded_uuids(5), durability=Durability.NONE)
    session.append_model_change("anthropic", "m1")
    user = session.append_message({"role": "user", "content": "Café 🎉 进度", "timestamp": 1})
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "timestamp": 2}
    )
    session.append_custom("pi-context/reset-marker", {"windowId": "pcw:0123abcd:00ff00ff"})
    session.append_custom_message(
        "pi-context/boot", "boot", False, {"windowId": "pcw:0123abcd:00ff00ff"}
    )
    session.append_context_edit(user, {"content": "edited"})
    session.append_compaction("", None, 12)
    session.append_label(user, "here")
    session.append_session_info("name")
    session.branch_with_summary(user, "summary")
    session.append_thinking_level_change("high")
    return session


def test_truncation_at_every_byte_offset_loses_at_most_the_torn_entry(tmp_path: Path) -> None:
    source = _compact_session(tmp_path / "src")
    assert source.path is not None
    data = source.path.read_bytes()
    ids = [e["id"] for e in Session.open(source.path, readonly=True).entries]
    target = tmp_path / "cut.jsonl"
    for offset in range(len(data) + 1):
        prefix = data[:offset]
        target.write_bytes(prefix)
        session = Session.open(target, readonly=True)
        loaded = [e["id"] for e in session.entries]
        complete_entry_lines = max(0, prefix.count(b"\n") - 1)
        assert loaded == ids[: len(loaded)], offset
        assert complete_entry_lines <= len(loaded) <= complete_entry_lines + 1, offset
        assert {p.kind for p in session.problems} <= {"torn-tail"}, offset
        tail = prefix.rsplit(b"\n", 1)[-1]
        assert any(p.kind == "torn-tail" for p in session.problems) == (
            tail != b"" and not _parses(tail)
        ), offset


def test_appending_after_a_torn_tail_keeps_the_fragment_and_a_valid_file(tmp_path: Path) -> None:
    source = _valid_session(tmp_path / "src")
    assert source.path is not None
    data = source.path.read_bytes()
    lines = data.split(b"\n")
    cut = len(data) - len(lines[-2]) // 2 - 1  # half of the last entry line
    target = tmp_path / "torn.jsonl"
    target.write_bytes(data[:cut])
    session = Session.open(target)
    assert [p.kind for p in session.problems] == ["torn-tail"]
    before = [e["id"] for e in session.entries]
    new_id = session.append_custom("test/after", {"n": 1})
    raw = target.read_bytes()
    assert raw.startswith(data[:cut] + b"\n"), "the fragment is terminated, not overwritten"
    again = Session.open(target, readonly=True)
    assert [e["id"] for e in again.entries] == [*before, new_id]
    assert [p.kind for p in again.problems] == ["invalid-json"], (
        "the fragment is now a skipped line"
    )
    assert again.get(new_id)["parentId"] == before[-1]


def test_torn_header_only_file_becomes_a_fresh_session(tmp_path: Path) -> None:
    target = tmp_path / "torn-header.jsonl"
    target.write_bytes(_line(_header())[:30])
    session = Session.open(target)
    assert session.entries == [] and [p.kind for p in session.problems] == ["torn-tail"]
    entry_id = session.append_message({"role": "user", "content": "again", "timestamp": 1})
    reopened = Session.open(target, readonly=True)
    assert [e["id"] for e in reopened.entries] == [entry_id]
    assert reopened.session_id == session.session_id


def test_parent_cycles_are_reported_and_walks_terminate(tmp_path: Path) -> None:
    path = tmp_path / "cycle.jsonl"
    rows = [
        _header(),
        _msg("aaaa0001", None),
        _msg("bbbb0002", "cccc0003"),
        _msg("cccc0003", "bbbb0002"),
    ]
    rows.append(_msg("dddd0004", "dddd0004"))  # its own parent: Pi's getBranch spins on this too
    rows.append(_msg("eeee0005", "cccc0003"))
    path.write_bytes(b"".join(_line(r) for r in rows))
    session = Session.open(path, readonly=True)
    cycles = [p for p in session.problems if p.kind == "cycle"]
    assert len(cycles) == 2
    assert {c.line for c in cycles} == {3, 5}
    assert "bbbb0002 -> cccc0003 -> bbbb0002" in cycles[0].message
    assert [e["id"] for e in session.branch()] == ["bbbb0002", "cccc0003", "eeee0005"]
    assert [e["id"] for e in session.branch("dddd0004")] == ["dddd0004"]
    # As in Pi, the unreachable cycle is not in the tree; the self-parent is a root.
    assert [n.id for n in session.tree()] == ["aaaa0001", "dddd0004"]
    result = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "show", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert f"{path}:3: cycle: parent cycle" in result.stderr


def test_duplicate_ids_later_wins_and_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    rows = [
        _header(),
        _msg("aaaa0001", None, "first"),
        _msg("bbbb0002", "aaaa0001"),
        _msg("aaaa0001", "bbbb0002", "second"),
    ]
    path.write_bytes(b"".join(_line(r) for r in rows))
    session = Session.open(path, readonly=True)
    assert [(p.kind, p.line) for p in session.problems] == [("duplicate-id", 4), ("cycle", 4)]
    assert session.get("aaaa0001")["message"]["content"] == "second"
    assert len(session.entries) == 3, "both copies are kept in file order"


def test_missing_parent_makes_a_root(tmp_path: Path) -> None:
    path = tmp_path / "orphan.jsonl"
    rows = [
        _header(),
        _msg("aaaa0001", None),
        _msg("bbbb0002", "gone0000"),
        _msg("cccc0003", "bbbb0002"),
    ]
    path.write_bytes(b"".join(_line(r) for r in rows))
    session = Session.open(path, readonly=True)
    assert [e["id"] for e in session.branch()] == ["bbbb0002", "cccc0003"]
    assert [n.id for n in session.tree()] == ["aaaa0001", "bbbb0002"]


def test_bom_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + _line(_header()) + _line(_msg("aaaa0001", None)))
    with pytest.raises(SessionError) as info:
        Session.open(path)
    assert "byte-order mark" in str(info.value) and str(path) in str(info.value)
    # issue 31, finding 12: the mark is on line 1 (the first value parsed is on line 2)
    assert str(info.value).startswith(f"{path}:1: not a Pi session"), str(info.value)


def test_not_a_session_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_bytes(b"\n\n" + _line(_msg("aaaa0001", None)))
    with pytest.raises(SessionError) as info:
        Session.open(path)
    assert str(info.value).startswith(f"{path}:3: not a Pi session")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"  \n\n")
    with pytest.raises(SessionError, match="no line parses as JSON"):
        Session.open(blank)
    with pytest.raises(SessionError, match="no such session file"):
        Session.open(tmp_path / "missing.jsonl")
    with pytest.raises(SessionError, match="is a directory"):
        Session.open(tmp_path)


def test_invalid_utf8_non_objects_and_missing_ids_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    bad_utf8 = _line(_msg("aaaa0001", None, "caf\u00e9")).replace("é".encode(), b"\xe9")
    rows = [
        _line(_header()),
        bad_utf8,
        b"5\n",
        b"[1,2]\n",
        b"null\n",
        b'{"type":"message","message":{"role":"user","content":"no id"}}\n',
        b'{"type":"message","id":"cccc0003","parentId":"aaaa0001","timestamp":"x","message":"text"}\n',
        _line(_header("second-header")),
    ]
    path.write_bytes(b"".join(rows))
    session = Session.open(path, readonly=True)
    kinds = [(p.kind, p.line) for p in session.problems]
    assert kinds == [
        ("invalid-utf8", 2),
        ("not-an-object", 5),
        ("not-an-object", 3),
        ("not-an-object", 4),
        ("missing-id", 6),
        ("bad-message", 7),
        ("extra-header", 8),
    ]
    assert session.get("aaaa0001")["message"]["content"] == "caf\ufffd"
    assert session.leaf_id == "cccc0003", "junk values do not break the leaf (they do in Pi)"
    assert session.projection()["messages"] == [session.get("aaaa0001")["message"]]


def test_huge_line_loads(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    big = "y" * 30_000_000
    path.write_bytes(_line(_header()) + _line(_msg("aaaa0001", None, big)))
    session = Session.open(path, readonly=True)
    assert len(session.projection()["messages"][0]["content"]) == 30_000_000


def test_empty_file_is_a_new_session_written_on_first_append(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    session = Session.open(path)
    assert session.entries == [] and session.problems == []
    entry_id = session.append_custom("test/first")  # no conversation needed: Pi flushed already
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and b'"type":"session"' in lines[0] and entry_id.encode() in lines[1]


def test_exclusive_create_refuses_and_rolls_back(tmp_path: Path) -> None:
    session = Session.create(CWD, tmp_path, now=lambda: 1_800_000_000_000, session_id="fixed")
    assert session.path is not None
    session.path.write_bytes(b"someone else's file\n")
    model = session.append_model_change("p", "m")
    with pytest.raises(SessionError, match="already exists"):
        session.append_message({"role": "user", "content": "hi", "timestamp": 1})
    assert [e["id"] for e in session.entries] == [model]
    assert session.leaf_id == model
    assert session.path.read_bytes() == b"someone else's file\n"


def test_vanished_file_refuses_append_and_rolls_back(tmp_path: Path) -> None:
    session = _valid_session(tmp_path)
    assert session.path is not None
    leaf, count = session.leaf_id, len(session.entries)
    session.path.unlink()
    with pytest.raises(SessionError, match="disappeared"):
        session.append_custom("test/x")
    assert session.leaf_id == leaf and len(session.entries) == count
    assert not session.path.exists()


def test_readonly_refuses_writes(tmp_path: Path) -> None:
    session = _valid_session(tmp_path)
    assert session.path is not None
    before = session.path.read_bytes()
    readonly = Session.open(session.path, readonly=True)
    with pytest.raises(SessionError, match="read-only"):
        readonly.append_custom("test/x")
    assert session.path.read_bytes() == before


_SOURCES: dict[int, tuple[bytes, list[str]]] = {}


def _source(seed: int, directory: Path) -> tuple[bytes, list[str]]:
    if seed not in _SOURCES:
        session = _valid_session(directory / f"src-{seed}", seed=seed, ops=10)
        assert session.path is not None
        entry_ids = [e["id"] for e in Session.open(session.path, readonly=True).entries]
        _SOURCES[seed] = (session.path.read_bytes(), entry_ids)
    return _SOURCES[seed]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_garbled_lines_lose_only_themselves(tmp_path: Path, data: st.DataObject) -> None:
    source, entry_ids = _source(data.draw(st.integers(0, 7)), tmp_path)
    lines = source.split(b"\n")[:-1]
    damaged = data.draw(st.sets(st.integers(1, len(lines) - 1)))
    # A raw control byte is invalid JSON anywhere, so every damaged line stays unparseable.
    garbage = st.binary(max_size=40).map(lambda b: b"{" + b.replace(b"\n", b"?") + b"\x01")
    out = list(lines)
    for index in damaged:
        out[index] = data.draw(garbage)
    path = tmp_path / "garbled.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    session = Session.open(path, readonly=True)
    survivors = [eid for i, eid in enumerate(entry_ids, 1) if i not in damaged]
    assert [e["id"] for e in session.entries] == survivors
    assert {p.line for p in session.problems if p.kind == "invalid-json"} == {
        i + 1 for i in damaged
    }
