"""The relay packet's digest (against the real Pi), the source re-read and the binding checks,
and tampering with any byte of the source branch, the offer, the receipt or the parent path."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.relay import (
    HANDOFF_IN,
    MAX_SOURCE_BYTES,
    branch_digest,
    inherited_records,
    read_source,
    receipt,
    source_branch,
)
from pi_context.bindings.session import Durability, Session, seeded_uuids
from pi_context.bindings.session.jsonl import encode
from pi_context.testing.synth import apply_ops, random_ops, stepping_clock

from .conftest import bound_pair, source_file, user

B, C = "handoff_binding", "handoff_source_changed"
FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pi-sessions"


def _code(fn: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(HandoffError) as err:
        fn(*args, **kw)
    return err.value.code


# ------------------------------------------------------------------- digest vs the real Pi


def _random_session(directory: Path, index: int) -> Session:
    rng = random.Random(4_000 + index)
    opening = {"op": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}
    s = Session.create(
        Path("/tmp/p"),
        directory,
        now=stepping_clock(rng),
        uuids=seeded_uuids(index),
        durability=Durability.NONE,
    )
    apply_ops(s, random_ops(rng, rng.randint(3, 40), opening=opening))
    return s


def test_digest_matches_real_pi(pi_branch: Any, tmp_path: Path) -> None:
    paths: list[Path] = []
    if FIXTURES.is_dir():
        paths += sorted(FIXTURES.rglob("*.jsonl"))
    paths += [s.path for s in (_random_session(tmp_path, i) for i in range(60)) if s.path]
    special = source_file(tmp_path / "special")
    special.append_custom(
        "odd", {"2": 1, "1": 2.5, "b": 1e21, "a": [0.1, -0.0, 2**60], "z": "\ud800"}
    )
    assert special.path is not None
    paths.append(special.path)
    answers = pi_branch([{"path": str(p)} for p in paths])
    checked = 0
    for path, answer in zip(paths, answers, strict=True):
        if "error" in answer:
            continue
        ours = Session.open(path, readonly=True)
        if ours.problems and any(p.kind == "cycle" for p in ours.problems):
            continue
        assert [e["id"] for e in ours.branch()] == answer["branchIds"], path
        assert branch_digest(ours.branch()) == answer["digest"], path
        checked += 1
    assert checked >= 60


# ------------------------------------------------------------------- re-reading the source


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(encode(v) + "\n" for v in lines), encoding="utf-8")
    return path


HEADER = {"type": "session", "version": 3, "id": "sid", "timestamp": "t", "cwd": "/"}


def _entry(i: str, parent: str | None) -> dict[str, Any]:
    return {"type": "custom", "customType": "x", "id": i, "parentId": parent, "timestamp": "t"}


@pytest.mark.parametrize(
    ("lines", "code"),
    [
        ([{"type": "session"}], C),
        ([_entry("a", None)], C),
        ([HEADER, _entry("a", None), _entry("a", None)], C),
        ([HEADER, {**_entry("a", None), "parentId": 5}], C),
        (
            [HEADER, {k: v for k, v in _entry("a", None).items() if k != "parentId"}],
            C,
        ),
        ([HEADER, {**_entry("a", None), "id": 7}], C),
        ([HEADER, 5], C),
        ([], C),
    ],
)
def test_read_source_checks(tmp_path: Path, lines: list[Any], code: str) -> None:
    assert _code(read_source, _write(tmp_path / "s.jsonl", lines)) == code


def test_read_source_unavailable_and_limit(tmp_path: Path) -> None:
    assert _code(read_source, tmp_path / "missing.jsonl") == "handoff_source_unavailable"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(encode(HEADER) + "\n{not json\n")
    assert _code(read_source, bad) == "handoff_source_unavailable"
    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:
        f.write((encode(HEADER) + "\n").encode())
        f.write(b" " * (MAX_SOURCE_BYTES - f.tell()))
    header, entries, last = read_source(big)  # exactly 32 MiB is allowed
    assert header["id"] == "sid" and not entries and last is None
    with big.open("ab") as f:
        f.write(b" ")
    assert _code(read_source, big) == "handoff_source_limit"


def test_source_branch_walk(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl", [HEADER, _entry("a", None), _entry("b", "a"), _entry("c", "c")]
    )
    branch = [_entry("a", None), _entry("b", "a")]
    good = {"file": str(path), "sessionId": "sid", "leafId": "b", "digest": branch_digest(branch)}
    assert [e["id"] for e in source_branch(good).branch] == ["a", "b"]
    assert _code(source_branch, {**good, "sessionId": "other"}) == "handoff_source_changed"
    assert _code(source_branch, {**good, "leafId": "zz"}) == "handoff_source_changed"
    assert _code(source_branch, {**good, "leafId": "c"}) == "handoff_source_changed"  # cycle
    assert _code(source_branch, {**good, "digest": "0" * 64}) == "handoff_source_changed"


# ------------------------------------------------------------------- the binding


def test_bound_pair_inherits_source_records(tmp_path: Path) -> None:
    source, dest, packet, offer = bound_pair(tmp_path)
    records = inherited_records(dest, require_latest_offer=True)
    assert [r.id for r in records] == [e["id"] for e in source.branch()[:-1]]
    assert receipt(dest)["offerId"] == offer
    assert dest.header["parentSession"] == str(source.path)


def test_offer_must_be_latest_only_when_required(tmp_path: Path) -> None:
    source, dest, _, _ = bound_pair(tmp_path)
    source.append_message(user("one more thing"))
    assert inherited_records(dest)
    assert _code(inherited_records, dest, require_latest_offer=True) == "handoff_binding"


def _rewrite_receipt(dest: Session, tmp_path: Path, change: Any, header: Any = None) -> Session:
    assert dest.path is not None
    lines = [json.loads(line) for line in dest.path.read_text().splitlines()]
    for line in lines:
        if line.get("customType") == "context-memory-handoff-in":
            change(line["data"])
    if header is not None:
        header(lines[0])
    return Session.open(_write(tmp_path / "changed.jsonl", lines), readonly=True)


@pytest.mark.parametrize(
    ("name", "change", "code"),
    [
        ("destination id", lambda d: d.update(destinationId="someone-else"), B),
        ("offer id type", lambda d: d.update(offerId=5), B),
        ("offer id", lambda d: d.update(offerId="ffffffff"), B),
        ("packet version", lambda d: d["packet"].update(version=2), B),
        ("packet id", lambda d: d["packet"].pop("id"), B),
        (
            "relative file",
            lambda d: d["packet"]["source"].update(file="rel.jsonl"),
            B,
        ),
        ("source missing", lambda d: d["packet"].pop("source"), B),
        ("leaf type", lambda d: d["packet"]["source"].update(leafId=1), B),
        (
            "oversized",
            lambda d: d["packet"]["workspace"].update(git="x" * 16_384),
            B,
        ),
        ("notes edited", lambda d: d["packet"]["state"]["notes"].pop(), B),
        (
            "digest",
            lambda d: d["packet"]["source"].update(digest="0" * 64),
            C,
        ),
        (
            "session id",
            lambda d: d["packet"]["source"].update(sessionId="x"),
            C,
        ),
        ("no packet", lambda d: d.pop("packet"), B),
        ("offer seal", lambda d: d.update(offerDigest="0" * 64), B),
        ("null offer seal", lambda d: d.update(offerDigest=None), B),
    ],
)
@pytest.mark.parametrize("form", ["ours", "typescript"])
def test_receipt_tampering(tmp_path: Path, name: str, change: Any, code: str, form: str) -> None:
    if form == "typescript" and "seal" in name:
        return  # the TypeScript receipt has no seal to tamper with
    _, dest, _, _ = bound_pair(tmp_path)

    def tamper(data: dict[str, Any]) -> None:
        if form == "typescript":  # pi-context-management 0.6 writes no offerDigest
            del data["offerDigest"]
        change(data)

    # the destination id check compares with the file's own header id
    assert _code(inherited_records, _rewrite_receipt(dest, tmp_path, tamper)) == code


def test_a_receipt_without_the_seal_is_verified_as_the_seed_verifies_it(tmp_path: Path) -> None:
    source, dest, packet, offer = bound_pair(tmp_path)
    unsealed = _rewrite_receipt(dest, tmp_path, lambda d: d.pop("offerDigest"))
    assert "offerDigest" not in receipt(unsealed)
    expected = [e["id"] for e in source.branch()[:-1]]
    assert [r.id for r in inherited_records(unsealed, require_latest_offer=True)] == expected
    # The seal is what tells an offer's envelope apart: restamp the offer entry in the source.
    assert source.path is not None
    raw = source.path.read_text(encoding="utf-8").split("\n")
    lines = [json.loads(line) for line in raw if line]
    for line in lines:
        if line.get("id") == offer:
            line["timestamp"] = "2000-01-01T00:00:00.000Z"
    _write(source.path, lines)
    assert _code(inherited_records, dest) == B, "our sealed receipt sees the envelope change"
    assert inherited_records(unsealed), "the seed compares the offer's data and parent only"


def test_parent_path_tampering(tmp_path: Path) -> None:
    source, dest, _, _ = bound_pair(tmp_path)
    assert source.path is not None
    for parent in (None, "", str(source.path) + ".x", "relative.jsonl", str(tmp_path)):

        def header(h: dict[str, Any], parent: Any = parent) -> None:
            if parent is None:
                h.pop("parentSession")
            else:
                h["parentSession"] = parent

        changed = _rewrite_receipt(dest, tmp_path, lambda d: None, header)
        assert _code(inherited_records, changed) == "handoff_binding", parent
    same = _rewrite_receipt(
        dest,
        tmp_path,
        lambda d: None,
        lambda h: h.update(parentSession=str(source.path.parent / "." / source.path.name)),
    )
    assert inherited_records(same)


def test_no_receipt(tmp_path: Path) -> None:
    source = source_file(tmp_path)
    assert _code(receipt, source) == "handoff_unavailable"


def _mutations(data: bytes, start: int, end: int, rng: random.Random, count: int) -> list[bytes]:
    """Same-class ASCII substitutions (letter for letter, digit for digit) inside [start, end),
    so the JSON stays well-formed and only the meaning changes."""
    spots = [i for i in range(start, end) if chr(data[i]).isalnum() and data[i] < 128]
    out = []
    for i in rng.sample(spots, min(count, len(spots))):
        c = chr(data[i])
        pool = "0123456789" if c.isdigit() else "abcdefghijklmnopqrstuvwxyz"
        pool = pool.upper() if c.isupper() else pool
        new = rng.choice([p for p in pool if p != c])
        out.append(data[:i] + new.encode() + data[i + 1 :])
    return out


def _parses(data: bytes) -> bool:
    try:
        [json.loads(line) for line in data.split(b"\n") if line.strip()]
    except ValueError:
        return False
    return True


def _expect(data: bytes, codes: set[str]) -> set[str]:
    """A mutation that breaks the JSON makes the file unreadable instead."""
    return codes if _parses(data) else {"handoff_source_unavailable"}


def _line_span(data: bytes, predicate: Any) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in data.split(b"\n"):
        if line and predicate(json.loads(line)):
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def test_any_byte_of_the_source_branch_is_refused(tmp_path: Path) -> None:
    source, dest, packet, _ = bound_pair(tmp_path)
    assert source.path is not None
    original = source.path.read_bytes()
    branch_ids = {e["id"] for e in source.branch()[:-1]}
    rng = random.Random(1)
    tried = 0
    for start, end in _line_span(original, lambda v: v.get("id") in branch_ids):
        for mutated in _mutations(original, start, end, rng, 25):
            source.path.write_bytes(mutated)
            code = _code(inherited_records, dest)
            assert code in _expect(mutated, {"handoff_source_changed", "handoff_binding"})
            tried += 1
    source.path.write_bytes(original)
    assert inherited_records(dest) and tried > 50


def test_any_byte_of_the_offer_is_refused(tmp_path: Path) -> None:
    source, dest, _, offer = bound_pair(tmp_path)
    assert source.path is not None
    original = source.path.read_bytes()
    rng = random.Random(2)
    [(start, end)] = _line_span(original, lambda v: v.get("id") == offer)
    mutations = _mutations(original, start, end, rng, 200)
    for mutated in mutations:
        source.path.write_bytes(mutated)
        code = _code(inherited_records, dest)
        assert code in _expect(mutated, {"handoff_binding", "handoff_source_changed"})
    assert len(mutations) == 200


def test_any_byte_of_the_receipt_is_refused(tmp_path: Path) -> None:
    _, dest, _, _ = bound_pair(tmp_path)
    assert dest.path is not None
    original = dest.path.read_bytes()
    rng = random.Random(3)
    spans = _line_span(original, lambda v: v.get("customType") == "context-memory-handoff-in")
    [(start, end)] = spans
    # The receipt proper is the entry's data; the envelope (timestamp) is Pi's bookkeeping.
    line = original[start:end]
    start, end = start + line.index(b'"data":'), start + line.rindex(b',"id":"')
    target = tmp_path / "tampered.jsonl"
    for mutated in _mutations(original, start, end, rng, 200):
        target.write_bytes(mutated)
        if not _parses(mutated):
            continue  # a torn receipt line is simply not a receipt (Pi skips it too)
        changed = Session.open(target, readonly=True)
        grant = next(
            (e["data"] for e in changed.branch() if e.get("customType") == HANDOFF_IN), None
        )
        if isinstance(grant, dict) and "offerDigest" not in grant:
            # Only the seal's key was renamed: what remains is a receipt in the TypeScript
            # form, verified as the seed verifies it (every byte it has still binds).
            assert inherited_records(changed)
            continue
        code = _code(inherited_records, changed)
        assert code in {"handoff_binding", "handoff_source_changed", "handoff_unavailable"}


def test_any_byte_of_the_parent_path_is_refused(tmp_path: Path) -> None:
    source, dest, _, _ = bound_pair(tmp_path)
    assert source.path is not None and dest.path is not None
    parent = str(source.path)
    rng = random.Random(4)
    spots = [i for i, c in enumerate(parent) if c.isalnum()]
    for i in rng.sample(spots, min(60, len(spots))):
        c = parent[i]
        pool = "0123456789" if c.isdigit() else "abcdefghijklmnopqrstuvwxyz"
        forged = parent[:i] + rng.choice([p for p in pool if p != c.lower()]) + parent[i + 1 :]
        changed = _rewrite_receipt(
            dest, tmp_path, lambda d: None, lambda h, f=forged: h.update(parentSession=f)
        )
        assert _code(inherited_records, changed) == "handoff_binding", forged


def test_source_that_is_not_a_regular_file(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    assert _code(read_source, fifo) == "handoff_source_unavailable"  # and no hang
    assert _code(read_source, tmp_path) == "handoff_source_unavailable"
