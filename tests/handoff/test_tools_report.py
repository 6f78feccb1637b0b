"""The model-facing context history tools (both scopes) and ``pi-context session report``."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.controller import HandoffResult
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext, ToolError

from .test_runtime_handoff import World, make_world


@pytest.fixture
def done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[World, HandoffResult]:
    w = make_world(tmp_path, monkeypatch)
    result = w.run()
    assert result.ok
    return w, result


def call(name: str, path: Path | None, **args: Any) -> tuple[bool, Any]:
    """Run a tool as a host does: a ToolError is a named error the model sees."""
    try:
        result = all_tools()[name].run(ToolContext(session_path=path), args)
    except ToolError as exc:
        return True, json.loads(str(exc))
    return result.is_error, json.loads(result.text)


def test_tools_are_registered() -> None:
    tools = all_tools()
    assert {"context_history_search", "context_history_read"} <= set(tools)
    schema = tools["context_history_search"].schema()
    assert schema["parameters"]["properties"]["scope"]["enum"] == ["session", "handoff"]


def test_handoff_scope_reads_the_source(done: tuple[World, HandoffResult]) -> None:
    w, result = done
    dest = result.destination
    error, page = call("context_history_search", dest, query="public API", scope="handoff")
    assert not error and page["items"] and page["hasMore"] is False
    hit = page["items"][0]
    assert hit["role"] == "user" and "Never touch the public API" in hit["text"]
    error, read = call("context_history_read", dest, id=hit["id"], scope="handoff")
    assert not error and read["text"].startswith("Port the parser")
    # the destination's own scope sees the relay message, not the source's user message
    error, own = call("context_history_search", dest, query="Never touch the public API")
    assert not error and [i["role"] for i in own["items"]] == ["custom"]


def test_handoff_scope_refuses_after_the_source_changes(done: tuple[World, HandoffResult]) -> None:
    w, result = done
    data = w.source_path.read_bytes()
    w.source_path.write_bytes(data.replace(b"Reading it.", b"Reading IT."))
    error, page = call("context_history_search", result.destination, query="x", scope="handoff")
    assert error and page["code"] == "handoff_source_changed"


def test_tool_errors(done: tuple[World, HandoffResult]) -> None:
    w, _ = done
    source = w.source_path
    cases = [
        ("context_history_search", {"query": ""}, "invalid_query"),
        ("context_history_search", {"query": "x", "limit": 21}, "invalid_query"),
        ("context_history_search", {"query": "x", "scope": "elsewhere"}, "invalid_query"),
        ("context_history_search", {"query": "x", "bogus": 1}, None),
        ("context_history_search", {"query": "x", "scope": "handoff"}, "handoff_unavailable"),
        ("context_history_read", {"id": "nope"}, "source_not_found"),
        ("context_history_read", {"id": w.source.branch()[-1]["id"], "offset": -1}, None),
    ]
    for name, args, code in cases:
        error, payload = call(name, source, **args)
        assert error, (name, args)
        if code:
            assert payload["code"] == code, (name, args, payload)
    # an unknown argument gets the toolkit's one wording, as every tool's does
    _, unknown = call("context_history_search", source, query="x", bogus=1)
    assert unknown["error"].startswith("context_history_search does not take 'bogus'")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "report", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_session_report_verifies_the_binding(done: tuple[World, HandoffResult]) -> None:
    w, result = done
    assert result.destination is not None
    out = _cli(str(result.destination), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["handoff"]["verdict"] == "verified"
    assert report["parentSession"] == str(w.source_path)
    assert report["parentId"] == w.source.session_id
    assert report["handoff"]["digest"] == result.packet["source"]["digest"]  # type: ignore[index]
    assert report["memory"]["savedNotes"] == 2
    q = report["quality"]
    assert (q["goals"], q["constraints"], q["invalidCitations"], q["sources"]) == (
        1,
        1,
        0,
        "verified",
    )
    assert (q["missingActive"], q["changedActive"]) == (0, 0)
    text = _cli(str(result.destination))
    assert text.returncode == 0 and "handoff: verified" in text.stdout
    # the source itself has no handoff; a tampered source makes the verdict a refusal
    src = _cli(str(w.source_path))
    assert src.returncode == 0 and "handoff: none" in src.stdout
    w.source_path.write_bytes(w.source_path.read_bytes().replace(b"Reading it.", b"Reading IT."))
    bad = _cli(str(result.destination), "--json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["handoff"]["verdict"] == "handoff_source_changed"


def test_session_report_errors(tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "missing.jsonl"))
    assert missing.returncode == 2 and "missing.jsonl: no such file" in missing.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("[1,2]\n")
    out = _cli(str(junk))
    assert out.returncode == 1 and "Traceback" not in out.stderr  # there, but not a session
    assert out.stderr.startswith("pi-context session report: ")


def test_report_on_a_consistent_but_malformed_packet(done: tuple[World, HandoffResult]) -> None:
    """A forged offer and receipt that agree with each other (seal included) but carry
    nonsense notes: the report names the problem instead of crashing."""
    from pi_context.bindings.handoff.relay import entry_digest

    w, result = done
    assert result.destination is not None
    forged_state = {"version": 2, "notes": "not a list"}

    def rewrite(path: Path, change: Any) -> list[dict[str, Any]]:
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        for line in lines:
            change(line)
        path.write_text(
            "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in lines)
        )
        return lines

    offers: list[dict[str, Any]] = []

    def forge_offer(line: dict[str, Any]) -> None:
        if line.get("customType") == "context-memory-handoff-out":
            line["data"]["state"] = forged_state
            offers.append(line)

    def forge_receipt(line: dict[str, Any]) -> None:
        if line.get("customType") == "context-memory-handoff-in":
            line["data"]["packet"]["state"] = forged_state
            line["data"]["offerDigest"] = entry_digest(offers[0])

    rewrite(w.source_path, forge_offer)
    rewrite(result.destination, forge_receipt)
    out = _cli(str(result.destination), "--json")
    assert "Traceback" not in out.stderr
    assert json.loads(out.stdout)["handoff"]["verdict"] == "invalid_checkpoint"
    assert out.returncode == 1


def test_report_and_tools_never_crash_on_corrupted_files(
    done: tuple[World, HandoffResult],
) -> None:
    """Any byte of the source or the destination replaced by any byte: the report and the
    handoff-scope tools answer (or name the problem); nothing raises."""
    import random

    from pi_context.bindings.handoff.report import session_report
    from pi_context.bindings.session import SessionError

    w, result = done
    assert result.destination is not None
    rng = random.Random(5)
    originals = {p: p.read_bytes() for p in (w.source_path, result.destination)}
    for _ in range(150):
        path = rng.choice(list(originals))
        data = bytearray(originals[path])
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        with contextlib.suppress(SessionError):
            session_report(result.destination)
        error, payload = call(
            "context_history_search", result.destination, query="API", scope="handoff"
        )
        assert isinstance(payload, dict)
        path.write_bytes(originals[path])
    assert session_report(result.destination)["handoff"]["verdict"] == "verified"
