"""Round trips against the real Pi ``SessionManager`` (npm @earendil-works/pi-coding-agent@1.6.0).

Random scripts (``synth.random_ops``) are replayed on both sides; each side must read what the
other wrote exactly as the writer itself reads it: leaf, branch, context entries, projection,
session name and tree, compared as encoded JSON (so key order and number spelling count), plus the
file bytes themselves.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history.items import arguments_json
from pi_context.bindings.session import Durability, Session, seeded_uuids
from pi_context.bindings.session.jsonl import encode, parse
from pi_context.bindings.session.store import parse_raw
from pi_context.testing.synth import apply_ops, random_ops, stepping_clock

SESSIONS_EACH_WAY = 200
CWD = Path("/tmp/pi-context-interop-project")
USER_HELLO = {"op": "message", "message": {"role": "user", "content": "hello", "timestamp": 1}}


def _leaves(rng: random.Random, ids: list[str]) -> list[str | None]:
    return [None, *rng.sample(ids, min(3, len(ids)))]


def _our_views(path: Path, leaves: list[str | None]) -> list[str]:
    session = Session.open(path, readonly=True)
    assert [p for p in session.problems if p.kind != "extra-header"] == []
    return [encode(session.view(leaf)) for leaf in leaves]


def _build_here(index: int, directory: Path) -> tuple[Session, random.Random]:
    rng = random.Random(10_000 + index)
    ops = random_ops(rng, rng.randint(3, 60), opening=USER_HELLO)
    session = Session.create(
        CWD,
        directory,
        session_id=None if index % 5 else f"custom-id.{index}",
        now=stepping_clock(rng),
        uuids=seeded_uuids(index),
        durability=Durability.NONE,
    )
    apply_ops(session, ops)
    return session, rng


def test_sessions_written_here_read_identically_by_pi(run_pi: Any, tmp_path: Path) -> None:
    jobs, expected = [], []
    for index in range(SESSIONS_EACH_WAY):
        session, rng = _build_here(index, tmp_path)
        assert session.path is not None and session.path.exists()
        leaves = _leaves(rng, [e["id"] for e in session.entries])
        jobs.append({"kind": "inspect", "path": str(session.path), "leaves": leaves})
        # The leaf is not persisted: after reopening it is the file's last entry.
        reopened = _our_views(session.path, leaves)
        assert reopened[1:] == [encode(session.view(leaf)) for leaf in leaves[1:]]
        expected.append((session.path, reopened))
    answers = run_pi(jobs)
    for (path, views), answer in zip(expected, answers, strict=True):
        assert "error" not in answer, answer
        assert answer["views"] == views, path.name
        # Pi re-serialises every entry to exactly the bytes we wrote.
        assert answer["rewritten"].encode("utf-8") == path.read_bytes(), path.name


def test_sessions_written_by_pi_read_identically_here(run_pi: Any, tmp_path: Path) -> None:
    jobs, rngs = [], []
    for index in range(SESSIONS_EACH_WAY):
        rng = random.Random(20_000 + index)
        ops = random_ops(rng, rng.randint(3, 60), opening=USER_HELLO)
        leaf_refs = rng.sample(range(len(ops)), min(3, len(ops)))
        jobs.append(
            {
                "kind": "build",
                "dir": str(tmp_path),
                "cwd": str(CWD),
                "ops": ops,
                "leafRefs": leaf_refs,
            }
        )
        rngs.append(rng)
    answers = run_pi(jobs)
    checked = 0
    for job, answer in zip(jobs, answers, strict=True):
        assert "error" not in answer, answer
        path = Path(answer["path"])
        refs = answer["refs"]
        leaves = [None, *[refs[k] for k in job["leafRefs"] if k < len(refs)]]
        assert _our_views(path, leaves) == answer["views"], path.name
        session = Session.open(path, readonly=True)
        lines = [encode(session.header), *(encode(e) for e in session.entries)]
        assert ("\n".join(lines) + "\n").encode("utf-8") == path.read_bytes()
        checked += 1
    assert checked == SESSIONS_EACH_WAY


def test_alternating_writers_on_one_file(run_pi: Any, tmp_path: Path) -> None:
    """Pi writes, we append, Pi appends, we append: every reader agrees at every step."""
    count = 40
    builds = []
    for index in range(count):
        rng = random.Random(30_000 + index)
        ops = random_ops(rng, rng.randint(1, 25), opening=USER_HELLO)
        builds.append(
            {"kind": "build", "dir": str(tmp_path), "cwd": str(CWD), "ops": ops, "leafRefs": []}
        )
    built = run_pi(builds)
    appends = []
    for index, answer in enumerate(built):
        path = Path(answer["path"])
        rng = random.Random(40_000 + index)
        ours = Session.open(path, now=stepping_clock(rng), uuids=seeded_uuids(index))
        apply_ops(ours, random_ops(rng, rng.randint(1, 25)))
        expected_view = _our_views(path, [None])[0]
        appends.append(
            (
                {"kind": "append", "path": str(path), "ops": random_ops(rng, rng.randint(1, 25))},
                expected_view,
            )
        )
    # Pi first reads what we appended, then appends its own script and reports the result.
    check = run_pi([{"kind": "load", "path": job["path"], "leaves": [None]} for job, _ in appends])
    for (job, expected_view), answer in zip(appends, check, strict=True):
        assert answer["views"] == [expected_view], job["path"]
    after = run_pi([job for job, _ in appends])
    for (job, _), answer in zip(appends, after, strict=True):
        assert "error" not in answer, answer
        assert _our_views(Path(job["path"]), [None]) == answer["views"]


def test_deferred_creation_matches_pi(run_pi: Any, tmp_path: Path) -> None:
    """No file until a user or assistant message, on both sides."""
    setup_only = [
        {"op": "model", "provider": "anthropic", "modelId": "m1"},
        {"op": "custom", "customType": "pi-context/boot", "data": {"windowId": "pcw:x:root"}},
        {"op": "message", "message": {"role": "system", "content": "sys", "timestamp": 1}},
        {
            "op": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "t",
                "content": [],
                "isError": False,
                "timestamp": 2,
            },
        },
    ]
    answer = run_pi(
        [
            {
                "kind": "build",
                "dir": str(tmp_path / "pi"),
                "cwd": str(CWD),
                "ops": setup_only,
                "leafRefs": [],
            }
        ]
    )[0]
    assert answer["path"] is None
    session = Session.create(CWD, tmp_path / "here")
    apply_ops(session, setup_only)
    assert session.path is not None and not session.path.exists()
    session.append_message({"role": "assistant", "content": [], "timestamp": 3})
    assert session.path.exists()
    assert len(session.path.read_bytes().splitlines()) == 1 + len(setup_only) + 1


def _stringify_lines() -> list[str]:
    """Lines whose JS round trip is telling: numbers, key order, escapes, surrogates, junk."""
    rng = random.Random(7)
    lines = [
        '{"b":1,"a":2,"10":3,"2":4,"01":5,"4294967295":6,"4294967294":7}',
        '{"n":[1.0,-0.0,1e21,1e-7,1e-6,123456789012345678901234,5e-324,1.7976931348623157e308]}',
        '{"n":[0.1,100,1e2,2.5e-3,12345678901234567,9007199254740993,-9007199254740993]}',
        '{"s":"\\ud800 lone","t":"\\udc00\\ud83d\\ude00 pair",'
        '"u":"\\u2028\\u2029\\u0085\\u007f\\u0000"}',
        '{"big":1e400,"neg":-1e400}',
        "[NaN]",
        '{"x":Infinity}',
        '  {"spaced" : true }  ',
        '{"dup":1,"dup":2,"a":0,"dup":3}',
        '"just a string"',
        "5",
        "{bad json",
        '{"deep":' + "[" * 200 + "]" * 200 + "}",
    ]
    for _ in range(300):
        value = _random_json(rng, 0)
        lines.append(json.dumps(value, ensure_ascii=rng.random() < 0.5))
    return lines


def test_json_lines_reencode_as_javascript_does(run_pi: Any) -> None:
    """Numbers, key order, escapes and surrogates: ``encode(parse(line))`` == JS round trip."""
    lines = _stringify_lines()
    answer = run_pi([{"kind": "stringify", "lines": lines}])[0]
    ours: list[str | None] = []
    for line in lines:
        try:
            ours.append(encode(parse(line)))
        except ValueError:
            ours.append(None)
    assert ours == answer["out"]


def test_tool_call_contents_are_what_javascript_stringifies(run_pi: Any) -> None:
    """A tool call's history content is ``JSON.stringify`` of its arguments, as the published
    extension computes it: whatever numbers and keys the arguments hold."""
    lines = [line for line in _stringify_lines() if line.lstrip().startswith(("{", "["))]
    answer = run_pi([{"kind": "stringify", "lines": lines}])[0]
    for line, expected in zip(lines, answer["out"], strict=True):
        try:
            arguments = parse(line)
        except ValueError:
            assert expected is None
            continue
        assert arguments_json(arguments) == expected, line


def _random_json(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(
            [
                rng.random() * 10 ** rng.randint(-30, 30),
                rng.randint(-(2**60), 2**60),
                rng.randint(-1000, 1000),
                float(rng.randint(-5, 5)),
                "".join(
                    chr(
                        rng.choice(
                            [
                                rng.randint(0, 0x7F),
                                rng.randint(0x80, 0xFFFF),
                                rng.randint(0x10000, 0x10FFFF),
                            ]
                        )
                    )
                    for _ in range(rng.randint(0, 8))
                ),
                True,
                None,
            ]
        )
    if roll < 0.7:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(["a", "b", "0", "7", "12", "007", "-3", "1.5", "x y", "é"]): _random_json(
            rng, depth + 1
        )
        for _ in range(rng.randint(0, 5))
    }


def test_invalid_utf8_decodes_as_node_does(run_pi: Any) -> None:
    rng = random.Random(11)
    samples = [
        b"\xff\xfe ok",
        b"\xed\xa0\x80 surrogate",
        b"\xf0\x9f\x98 truncated emoji",
        b"\xc0\xaf overlong",
        b"\xf4\x90\x80\x80 beyond",
        b"a\x80b\xbfc",
        b"\xe2\x82",
        b"\xf0\x9f\x98\x80 fine",
    ]
    samples += [bytes(rng.randrange(256) for _ in range(rng.randint(1, 24))) for _ in range(200)]
    jobs = [{"kind": "decode", "base64": base64.b64encode(s).decode()} for s in samples]
    answers = run_pi(jobs)
    for sample, answer in zip(samples, answers, strict=True):
        ours = [[ord(c) for c in line] for line in sample.decode("utf-8", "replace").split("\n")]
        assert ours == answer["lines"], sample
        # The loader decodes line by line; splitting first must not change a single code point.
        per_line = [
            [ord(c) for c in chunk.decode("utf-8", "replace")] for chunk in sample.split(b"\n")
        ]
        assert per_line == ours


@pytest.mark.parametrize("version", [1, 2])
def test_migration_of_old_versions_matches_pi(run_pi: Any, tmp_path: Path, version: int) -> None:
    """Pi rewrites v1/v2 files on open; our in-memory migration gives the same tree (ids aside)."""
    header: dict[str, Any] = {
        "type": "session",
        "id": "old-session",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    if version == 2:
        header["version"] = 2
    rows: list[dict[str, Any]] = [
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "one", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "h",
                "content": "hook",
                "display": True,
                "timestamp": 2,
            },
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "two"}],
                "provider": "p",
                "model": "m",
                "timestamp": 3,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:04.000Z",
            "summary": "sum",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 9,
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:05.000Z",
            "message": {"role": "user", "content": "three", "timestamp": 5},
        },
    ]
    if version == 2:
        previous = None
        for i, row in enumerate(rows):
            row["id"], row["parentId"] = f"e{i}", previous
            previous = row["id"]
        rows[3]["firstKeptEntryId"] = "e1"
        del rows[3]["firstKeptEntryIndex"]
    text = "".join(encode(v) + "\n" for v in [header, *rows])
    ours_path, pi_path = tmp_path / "ours.jsonl", tmp_path / "pi.jsonl"
    ours_path.write_text(text)
    pi_path.write_text(text)
    answer = run_pi([{"kind": "load", "path": str(pi_path), "leaves": [None]}])[0]
    assert "error" not in answer, answer
    # Pi rewrote its copy; we did not touch ours on open, and migrate on our first write.
    assert ours_path.read_text() == text
    session = Session.open(ours_path)
    pi_session = Session.open(pi_path, readonly=True)
    assert pi_session.header["version"] == 3 and pi_session.problems == []
    ours_view, pi_view = session.view(), json.loads(answer["views"][0])
    # Ids are fresh random ones after v1; compare the shape with ids replaced by positions.
    assert _positional(ours_view, session) == _positional(pi_view, pi_session)
    session.append_message({"role": "user", "content": "after", "timestamp": 6})
    rewritten = Session.open(ours_path, readonly=True)
    assert rewritten.header["version"] == 3
    assert [p.kind for p in rewritten.problems] == []
    assert session.backup_path is not None and session.backup_path.read_text() == text


def _positional(view: dict[str, Any], session: Session) -> str:
    index = {e["id"]: i for i, e in enumerate(session.entries)}
    text = encode(view)
    for entry_id, position in index.items():
        text = text.replace(f'"{entry_id}"', f'"#{position}"')
    return text


def test_raw_parse_agrees_with_pi_on_malformed_lines(run_pi: Any, tmp_path: Path) -> None:
    """Malformed lines, blank lines, CRLF and an unterminated valid last line: same tree as Pi."""
    session = Session.create(CWD, tmp_path, durability=Durability.NONE)
    a = session.append_message({"role": "user", "content": "a", "timestamp": 1})
    session.append_message({"role": "assistant", "content": [], "timestamp": 2})
    assert session.path is not None
    good = session.path.read_bytes().splitlines()
    extra = (
        b'{"type":"message","id":"ffff0000","parentId":"'
        + a.encode()
        + b'","timestamp":"2026-01-01T00:00:00.000Z",'
        + b'"message":{"role":"user","content":"c","timestamp":3}}'
    )
    data = good[0] + b"\r\n\n   \n{oops\n" + b"\n".join(good[1:]) + b"\n[1,2\n" + extra
    session.path.write_bytes(data)
    raw = parse_raw(data)
    assert [p.kind for p in raw.problems] == ["invalid-json", "invalid-json"]
    assert raw.unterminated
    ours = Session.open(session.path, readonly=True)
    answer = run_pi([{"kind": "load", "path": str(session.path), "leaves": [None]}])[0]
    assert answer["views"] == [encode(ours.view())]
    assert ours.leaf_id == "ffff0000"


def test_clone_branch_matches_pis_create_branched_session(run_pi: Any, tmp_path: Path) -> None:
    """Pi's /fork copy of one path: same entries, same re-chaining past labels, same labels."""
    jobs, ours = [], []
    for index in range(60):
        session, rng = _build_here(index, tmp_path / "src")
        assert session.path is not None
        leaf = rng.choice(session.entries)["id"]
        reopened = Session.open(session.path, readonly=True)
        clone = reopened.clone_branch(leaf, tmp_path / "ours", session_id=f"clone-{index}")
        jobs.append(
            {"kind": "clone", "path": str(session.path), "dir": str(tmp_path / "pi"), "leaf": leaf}
        )
        ours.append(clone)
    answers = run_pi(jobs)
    with_labels = 0
    for clone, answer in zip(ours, answers, strict=True):
        assert "error" not in answer, answer
        with_labels += any(e["type"] == "label" for e in clone.entries)
        if answer["path"] is None:
            assert clone.path is not None and not clone.path.exists(), "both defer: no conversation"
            continue
        theirs = Session.open(Path(answer["path"]), readonly=True)
        mine = Session.open(clone.path, readonly=True)  # type: ignore[arg-type]
        assert mine.header["parentSession"] == theirs.header["parentSession"]
        # Label entries get fresh random ids on each side; everything else is identical.
        assert _positional(mine.view(), mine) == _positional(json.loads(answer["views"][0]), theirs)
        assert _positional(mine.entries, mine) == _positional(theirs.entries, theirs)
    assert with_labels >= 5, "the scripts must exercise label re-chaining"
