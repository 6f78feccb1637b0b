"""The spec's answers to its exhaustive set, worked out once per spec and kept.

The exhaustive set is every (state, event) of a spec's finite abstraction, tens of thousands
of cases. Working out the spec's answer to each (the interpreter) and judging each reply
(parse, type checks, comparison) is most of what a conformance run costs, and both give the
same result every time for the same spec. But a reply in the reference encoding (compact
JSON, keys ``ok``, ``state``, ``effect``, ``consulted`` in that order, the state's keys in the
spec's order) that conforms is byte for byte the encoding of the spec's answer. So this
module keeps, per spec, the distinct expected reply lines with the row each one answers for,
and per case which of them it is. A reply equal to its case's expected line conforms (the
judge would find nothing to say: ``tests/conformance/test_answers.py`` pins it); any other
reply is judged in full by the runner, as before.

The answers are kept in the cache (kind ``conformance``, one ``.bin`` file per spec file,
recorded against it and pruned once it is gone). An entry is used only when its header names
the digest of everything the answers depend on — the spec's own digest (``Spec.sha256``, the
bytes it was loaded from), the events enumerated (a reducer-only view has fewer) and the
source of the code that works them out (the spec package, the protocol's encoding, this
module) — and its body matches the checksum in the header, and its shape fits the spec. Any
other entry is worked out again and replaced; a cache that cannot be used (refused, read-only)
only costs the work.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from array import array
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pi_context.checks.conformance.protocol import encode_step_reply
from pi_context.spec import interpret
from pi_context.spec.interpret import Step, Wire
from pi_context.spec.model import Spec

FORMAT = b"pi-context conformance answers 2\n"
KIND = "conformance"


@dataclass(frozen=True)
class Answers:
    """The spec's answers to the cases ``states × events`` (in that order): ``replies[k]``
    is an expected reply line (without its newline) and ``rows[k]`` the row that answers;
    ``index[i]`` is the ``k`` of case ``i``."""

    replies: list[bytes]
    rows: list[str]
    index: array[int]

    def expected(self) -> list[bytes]:
        """The expected reply line of every case, in case order."""
        replies = self.replies
        return [replies[k] for k in self.index]


def reply_line(want: Step) -> bytes:
    """The reference encoding of a conforming reply to a step whose answer is ``want``
    (what ``pi-context serve`` writes), without the newline."""
    return encode_step_reply(want.state, want.effect, list(want.consulted), dict(want.carried))[:-1]


def work_out(spec: Spec, states: list[Wire], events: list[Wire]) -> Answers:
    """The answers, from the interpreter (the reference semantics)."""
    table: dict[tuple[bytes, str], int] = {}
    index = array("I")
    for state in states:
        for event in events:
            want = interpret.step(spec, state, event)
            key = (reply_line(want), want.row)
            k = table.get(key)
            if k is None:
                k = table[key] = len(table)
            index.append(k)
    return Answers([line for line, _ in table], [row for _, row in table], index)


def answers(spec: Spec, states: list[Wire], events: list[Wire]) -> Answers:
    """The answers to ``states × events`` of ``spec``: from the cache when it holds them for
    this very spec and code, else worked out (and kept, when the cache can take them)."""
    digest = _digest(spec, events)
    entry = _entry(spec)
    if entry is not None:
        found = _read(entry, digest, len(states) * len(events))
        if found is not None:
            return found
    worked = work_out(spec, states, events)
    if entry is not None:
        _write(entry, spec, digest, worked)
    return worked


# --- the cache entry ------------------------------------------------------------------------


@cache
def _code_digest() -> str:
    """A digest of the source that decides the answers: the spec package (loader,
    interpreter, abstraction), the protocol's encoding and this module."""
    import pi_context.checks.conformance.protocol as protocol
    import pi_context.spec as spec_package
    import pi_context.support.surrogates as surrogates

    files = sorted(Path(spec_package.__file__).parent.glob("*.py"))
    files += [Path(protocol.__file__), Path(surrogates.__file__), Path(__file__)]
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _digest(spec: Spec, events: list[Wire]) -> str:
    h = hashlib.sha256(FORMAT)
    h.update(spec.sha256.encode() + b"\0")
    h.update(",".join(e.name for e in spec.events).encode() + b"\0")
    h.update(str(len(events)).encode() + b"\0" + _code_digest().encode())
    return h.hexdigest()


def _entry(spec: Spec) -> Path | None:
    """The cache file for ``spec``'s file (and the events it enumerates), or None when the
    spec has no file or the cache cannot be used."""
    path = Path(spec.path) if spec.path else None
    if path is None or not path.is_file():
        return None
    try:
        from pi_context.support.cache import key_of, kind_dir

        names = ",".join(e.name for e in spec.events)
        key = key_of(str(path.resolve()) + "\0" + names)
        return kind_dir(KIND) / f"{key}.bin"
    except (OSError, ValueError):
        return None


def _read(entry: Path, digest: str, cases: int) -> Answers | None:
    """The answers ``entry`` holds, if it holds them for ``digest`` and is whole."""
    try:
        with open(entry, "rb") as file:
            data = file.read()
    except OSError:
        return None
    try:
        if not data.startswith(FORMAT):
            return None
        end = data.index(b"\n", len(FORMAT))
        head = json.loads(data[len(FORMAT) : end])
        body = memoryview(data)[end + 1 :]
        if head["digest"] != digest or head["cases"] != cases:
            return None
        if hashlib.sha256(body).hexdigest() != head["body"]:
            return None
        rows = head["rows"]
        split = head["replies"]
        replies = bytes(body[:split]).split(b"\n")[:-1]
        index = array("I")
        index.frombytes(body[split:])
        if sys.byteorder != "little":
            index.byteswap()
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    if not isinstance(rows, list) or len(rows) != len(replies) or len(index) != cases:
        return None
    if index and max(index) >= len(replies):
        return None
    return Answers(replies, [str(r) for r in rows], index)


def _write(entry: Path, spec: Spec, digest: str, found: Answers) -> None:
    """Keep ``found`` in ``entry`` (recorded against the spec file first); never raises."""
    from pi_context.support.cache import record, source_of, write_private

    index = array("I", found.index)
    if sys.byteorder != "little":
        index.byteswap()
    replies = b"".join(line + b"\n" for line in found.replies)
    body = replies + index.tobytes()
    head = {
        "digest": digest,
        "cases": len(found.index),
        "rows": found.rows,
        "replies": len(replies),
        "body": hashlib.sha256(body).hexdigest(),
    }
    text = json.dumps(head, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    with contextlib.suppress(OSError, ValueError):
        record(KIND, entry, [source_of(Path(spec.path))])
        write_private(entry, FORMAT, text, b"\n", body)
