"""Hostile input on both sides of the conformance protocol.

``pi-context serve`` gets lines no runner sends (100,000 levels deep, lone surrogates echoed
back, NaN and numbers past a double, invalid UTF-8, a line over the size limit, blank lines,
JSON that is not an object) and answers every one with one valid JSON line, in order, and
keeps answering. The runner gets replies no implementation should send and reports each as
the failure of the case it answered, then writes every report and the bundle.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_context.checks.conformance.protocol import (
    MAX_LINE,
    LineBuffer,
    ProtocolError,
    decode,
    encode,
)
from pi_context.checks.conformance.server import Server
from pi_context.spec import load, spec_paths

from .conftest import SERVE

HELLO = b'{"op":"hello"}\n'
STEP = '{"op":"step","spec":"reset-control@0.26","state":%s,"event":%s}\n'


def _strict(line: bytes) -> Any:
    """JSON as a strict reader takes it: UTF-8, no NaN or Infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    value = json.loads(line.decode("utf-8"), parse_constant=refuse)
    json.dumps(value, allow_nan=False)
    return value


HOSTILE_REQUESTS: list[tuple[bytes, str]] = [
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "nests deeper than 512 levels"),
    (b'{"op":"' + b"{" * 600 + b'"}\n', "unknown op"),  # brackets in a string do not nest
    ((STEP % ('"\\ud800"', '{"type":"\\udc80"}')).encode(), "reset-control@0.26:"),
    (b'{"op":"step","spec":"\\ud800","state":1,"event":2}\n', "unknown spec"),
    ((STEP % ('{"overflow":1e400}', "{}")).encode(), "outside the range of a double"),
    ((STEP % ("NaN", "{}")).encode(), "NaN is not JSON"),
    (b'{"op":"hello","x":"\xff\xfe"}\n', "not UTF-8"),
    (b"\n", "empty line"),
    (b'"just a string"\n', "must be a JSON object"),
    (b"x" * (MAX_LINE + 1) + b"\n", f"longer than {MAX_LINE} bytes"),
    (b'{"op":"step"}\n', "has no 'spec'"),
]


def test_serve_answers_every_hostile_line_and_keeps_going() -> None:
    stream = b"".join([HELLO, *(line for line, _ in HOSTILE_REQUESTS), HELLO])
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "serve"],
        input=stream,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"", "no traceback, no warning"
    replies = [_strict(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(HOSTILE_REQUESTS) + 2, "one reply per line, none lost"
    assert replies[0]["ok"] and replies[-1]["ok"], "it still answers after all of them"
    for reply, (_, says) in zip(replies[1:-1], HOSTILE_REQUESTS, strict=True):
        assert reply["ok"] is False
        assert says in reply["error"], reply["error"]


def test_an_unterminated_hostile_last_line_is_answered_too() -> None:
    server = Server([load(path, analyse=False) for path in spec_paths()])
    for line, says in HOSTILE_REQUESTS:
        if not line.strip():
            continue
        reply = _strict(server.reply(line.rstrip(b"\n")))
        assert not reply["ok"] and says in reply["error"]


def test_replies_are_valid_json_or_refused() -> None:
    assert _strict(encode({"error": "half an emoji \ud83d"})) == {"error": "half an emoji \ud83d"}
    for value in (math.nan, math.inf, -math.inf):
        try:
            encode({"x": value})
        except ValueError:
            continue
        raise AssertionError("a non-finite number must not be written")


@given(st.lists(st.binary(max_size=40), max_size=12), st.randoms())
def test_line_buffer_splits_any_stream_like_split(pieces: list[bytes], rnd: random.Random) -> None:
    data = b"\n".join(pieces)
    limit = 25
    buffer = LineBuffer(limit)
    got: list[bytes | None] = []
    at = 0
    while at < len(data):
        size = rnd.randint(1, 30)
        got += buffer.feed(data[at : at + size])
        at += size
    got += buffer.finish()
    lines = data.split(b"\n")
    if not lines[-1].strip():
        lines.pop()  # a blank unterminated tail is no line
    assert got == [line if len(line) <= limit else None for line in lines]


def test_decoding_a_reply_never_raises_anything_but_a_protocol_error() -> None:
    for line, _ in HOSTILE_REQUESTS:
        with contextlib.suppress(ProtocolError):
            decode(line, "step reply")


# --- the runner against a hostile implementation -----------------------------------------


def _run(
    broken_cmd: Callable[[str], str], mode: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "conformance",
            "--impl",
            broken_cmd(mode),
            "--spec",
            "reset-control@0.26",
            "--examples",
            "3",
            "--quiet",
            "--json",
            str(tmp_path / "report.json"),
            "--junit",
            str(tmp_path / "report.xml"),
            "--bundle",
            str(tmp_path / "bundle"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )


def _problems(report: dict[str, Any]) -> list[str]:
    spec = report["specs"][0]
    return [
        f"{p['kind']}: {p['message']}"
        for steps in spec["failures"].values()
        for step in steps
        for p in step["problems"]
    ]


def test_every_hostile_reply_is_that_cases_named_failure(
    broken_cmd: Callable[[str], str], tmp_path: Path
) -> None:
    done = _run(broken_cmd, "hostile", tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "DOES NOT CONFORM (reset-control@0.26)" in done.stdout
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    spec = report["specs"][0]
    assert spec["exhaustive"]["checked"] == spec["exhaustive"]["cases"], "the run went on"
    assert sum(row["failed"] for row in spec["rows"].values()) == 10, "one failure per reply"
    problems = "\n".join(_problems(report))
    for says in (
        "nests deeper than 512 levels",
        "NaN is not JSON",
        "outside the range of a double",
        "is not UTF-8",
        "returned an unknown effect",
        "expected an object, got [[[]]]",
        "without an 'error' string",
        'must be a JSON object, got "\\ud800"',
        "is an empty line",
    ):
        assert says in problems, says
    import xml.dom.minidom

    xml.dom.minidom.parse(str(tmp_path / "report.xml"))  # well-formed XML
    bundle = sorted(p.name for p in (tmp_path / "bundle").iterdir())
    assert len(bundle) == 2 * len(spec["failures"]), "a trace per failing row, ITF + Mermaid"
    for name in bundle:
        (tmp_path / "bundle" / name).read_text(encoding="utf-8")


def test_a_reply_over_the_size_limit_fails_its_case_and_the_run_goes_on(
    broken_cmd: Callable[[str], str], tmp_path: Path
) -> None:
    done = _run(broken_cmd, "huge", tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    spec = report["specs"][0]
    assert spec["exhaustive"]["checked"] == spec["exhaustive"]["cases"]
    assert any(f"longer than {MAX_LINE} bytes" in p for p in _problems(report))
    assert (tmp_path / "bundle").is_dir()


def test_the_reference_server_is_unaffected(tmp_path: Path) -> None:
    done = subprocess.run(
        [*SERVE.split(), *()],
        input=HELLO,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert _strict(done.stdout)["ok"]


# --- the TypeScript adapter takes the same lines (issue 31, finding 10) ------------------------


def test_the_typescript_adapter_answers_every_hostile_line_and_keeps_going(
    ts_adapter: str,
) -> None:
    deep = '{"a":' * 20_000 + "1" + "}" * 20_000
    lines = [line for line, _ in HOSTILE_REQUESTS] + [
        (STEP % (deep, '{"type":"clear"}')).encode(),  # frozen without recursion
        (STEP % ('{"request":{"phase":"none"}}', deep)).encode(),
        b'{"op":"hello"}\r{"op":"hello"}\n',  # a bare CR is inside the line, as in serve
    ]
    stream = b"".join([HELLO, *lines, HELLO, b'{"op":"hello"}'])  # the last one unterminated
    done = subprocess.run(
        ts_adapter.split(), input=stream, capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"", "no stack trace, no warning"
    replies = [_strict(line) for line in done.stdout.split(b"\n")[:-1]]
    assert len(replies) == len(lines) + 3, "one reply per line, none lost, none doubled"
    assert replies[0]["ok"] and replies[-2]["ok"] and replies[-1]["ok"], "it still answers"
    for reply, line in zip(replies[1:-2], lines, strict=True):
        assert reply["ok"] is False, (line[:80], reply)
        assert isinstance(reply["error"], str) and reply["error"]
    said = {line: reply["error"] for line, reply in zip(lines, replies[1:-2], strict=True)}
    assert "not UTF-8" in said[HOSTILE_REQUESTS[6][0]]
    assert f"longer than {MAX_LINE} bytes" in said[HOSTILE_REQUESTS[9][0]]
    assert "not JSON" in said[lines[-1]]
