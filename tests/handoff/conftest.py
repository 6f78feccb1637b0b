"""Fixtures for the handoff tests: real sessions (in memory or as Pi-compatible files)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Session, seeded_uuids

_SESSION_CONFTEST = Path(__file__).resolve().parents[1] / "session" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_session_conftest_for_handoff", _SESSION_CONFTEST)
assert _spec is not None and _spec.loader is not None
_session_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session_conftest)

pi_session_manager = _session_conftest.pi_session_manager


def clock() -> Any:
    ticks = itertools.count(1_780_000_000_000, 1_000)
    return lambda: next(ticks)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": f"c{i}", **c} for i, c in enumerate(calls)]
    return {
        "role": "assistant",
        "content": content,
        "provider": "scripted",
        "model": "scripted-1",
        "stopReason": "stop",
        "timestamp": 2,
    }


def new_session(directory: Path | None = None, seed: int = 7) -> Session:
    if directory is None:
        return Session.in_memory(Path("/work/project"), now=clock(), uuids=seeded_uuids(seed))
    return Session.create(Path("/work/project"), directory, now=clock(), uuids=seeded_uuids(seed))


@pytest.fixture
def conversation() -> Session:
    """A small branch: user goal, assistant with tool calls, tool result, compaction, bash."""
    s = new_session()
    s.append_message(user("Port the parser to Rust. Never touch the public API."))
    s.append_message(
        assistant(
            "Reading the parser.",
            {"name": "read", "arguments": {"path": "src/parser.py"}},
        )
    )
    s.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c0",
            "toolName": "read",
            "content": [{"type": "text", "text": "def parse(): ..."}],
            "isError": False,
            "timestamp": 3,
        }
    )
    s.append_compaction("Earlier: the user wants a Rust port.", None, 1000)
    s.append_message(
        {
            "role": "bashExecution",
            "command": "cargo build",
            "output": "error[E0425]: cannot find value",
            "exitCode": 101,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        }
    )
    s.append_custom_message("some-extension", "a textual extension message", False)
    return s


PI_BRANCH = Path(__file__).with_name("pi_branch.mjs")


@pytest.fixture(scope="session")
def pi_branch(pi_session_manager: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Ask the real Pi for the branch digest of session files (one Node process per batch)."""
    import json
    import subprocess

    work = tmp_path_factory.mktemp("pi-branch")
    counter = [0]

    def run(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counter[0] += 1
        jobs_file, out_file = work / f"jobs-{counter[0]}.json", work / f"out-{counter[0]}.json"
        jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
        result = subprocess.run(
            ["node", str(PI_BRANCH), str(pi_session_manager), str(jobs_file), str(out_file)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-4000:]
        answers: list[dict[str, Any]] = json.loads(out_file.read_text(encoding="utf-8"))
        return answers

    return run


def source_file(directory: Path, seed: int = 7) -> Session:
    """A persisted source session with a small conversation."""
    s = new_session(directory, seed)
    s.append_message(user("Port the parser to Rust. Never touch the public API."))
    s.append_message(assistant("Reading.", {"name": "read", "arguments": {"path": "a.py"}}))
    s.append_message(user("Also keep the tests green. Ünïcödé 😀 \u2028 ok"))
    return s


def bound_pair(directory: Path, seed: int = 7) -> tuple[Session, Session, dict[str, Any], str]:
    """A source with a verified offer and a destination holding the matching receipt."""
    from pi_context.bindings.handoff.destination import append_offer, create_destination
    from pi_context.bindings.handoff.history import extract_records
    from pi_context.bindings.handoff.notes import NoteState, apply_updates
    from pi_context.bindings.handoff.relay import branch_digest, make_packet

    source = source_file(directory / "src", seed)
    branch = source.branch()
    records = extract_records(branch)
    state = apply_updates(
        NoteState(),
        [
            {
                "key": "goal",
                "kind": "goal",
                "text": "Port the parser",
                "sourceIds": [records[0].id],
                "inference": False,
                "status": "active",
            },
            {
                "key": "api",
                "kind": "constraint",
                "text": "Never touch the public API",
                "sourceIds": [records[0].id],
                "inference": False,
                "status": "active",
            },
        ],
        records,
        12_000,
    )
    assert source.path is not None and source.leaf_id is not None
    packet = make_packet(
        packet_id="00000000-0000-4000-8000-000000000001",
        created_at="2026-06-01T00:00:00.000Z",
        file=str(source.path),
        session_id=source.session_id,
        leaf_id=source.leaf_id,
        digest=branch_digest(branch),
        state=state.to_json(),
        cwd="/work/project",
        git="## main",
        files=["a.py"],
    )
    offer = append_offer(source, packet)
    dest = create_destination(
        source_file=source.path,
        cwd=Path("/work/project"),
        session_dir=directory / "dst",
        packet=packet,
        offer=source.get(offer) or {},
        body="Relay packet (historical).",
        notes_budget=12_000,
        now=clock(),
        uuids=seeded_uuids(seed + 1000),
    )
    return source, dest, packet, offer
