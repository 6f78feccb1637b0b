"""The automatic-handoff state as the seed writes it (``context-memory-auto-handoff``:
``{enabled, paused, attempts, failure?}``), replayed exactly — the last valid record wins, a
malformed one is skipped and counted, a torn last line is no record — and the policy's
documented defaults. Every transition of the automatic lifecycle is checked against the spec
by the runtime conformance (test_runtime_conformance.py); these pin the bytes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff import automatic as auto
from pi_context.bindings.handoff.panel import session_panel
from pi_context.bindings.runtime import Runtime, RuntimeConfig
from pi_context.bindings.session import Session

from .test_runtime_handoff import World, make_world

T0 = 1_800_000_000_000
POLICY = auto.AutoHandoffPolicy(pressure_percent=0.001, cooldown_ms=60_000)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = make_world(tmp_path, monkeypatch)
    w.runtime.handoffs.clock = lambda: T0
    w.runtime.handoffs.configure(w.options(), POLICY, tmp_path / "logs")
    return w


def _records(path: Path) -> list[bytes]:
    """The raw ``data`` bytes of every automatic-handoff record, as written."""
    out = []
    for line in path.read_bytes().splitlines():
        try:
            json.loads(line)
        except ValueError:
            continue  # a torn line is no record
        if b'"customType":"context-memory-auto-handoff"' in line:
            start = line.index(b'"data":') + len(b'"data":')
            out.append(line[start : line.index(b"}", start) + 1])
    return out


def test_commands_write_the_seed_record(world: World) -> None:
    assert asyncio.run(world.runtime.auto_handoff_command("pause")).endswith("paused.")
    assert asyncio.run(world.runtime.auto_handoff_command("resume")).endswith("(armed).")
    assert asyncio.run(world.runtime.auto_handoff_command("off")).endswith("off.")
    assert _records(world.source_path) == [
        b'{"enabled":true,"paused":true,"attempts":[]}',
        b'{"enabled":true,"paused":false,"attempts":[]}',
        b'{"enabled":false,"paused":false,"attempts":[]}',
    ]
    usage = asyncio.run(world.runtime.auto_handoff_command("sideways"))
    assert usage == "Usage: /handoff auto on|off|pause|resume|status"


def test_a_verified_destination_records_the_stamp(world: World) -> None:
    result = asyncio.run(world.runtime.auto_handoff())
    assert result is not None and result.ok, result and result.message
    assert result.destination is not None
    # created with the state as it stands (the attempt taken), then stamped once verified:
    # paused false, no failure (JSON.stringify drops an undefined failure), the cooldown starts
    assert _records(result.destination) == [
        f'{{"enabled":true,"paused":false,"attempts":[{T0}]}}'.encode(),
        f'{{"enabled":true,"paused":false,"attempts":[{T0}]}}'.encode(),
    ]
    assert _records(world.source_path) == []  # a success writes nothing on the source
    status = asyncio.run(world.runtime.auto_handoff_command("status"))
    assert status == "Automatic handoff: cooling down until 2027-01-15T08:01:00Z."


def test_a_failed_continuation_pauses_in_the_destination(world: World) -> None:
    def send(dest: Session, text: str) -> None:
        raise RuntimeError("the provider is down")

    world.runtime.handoffs.configure(world.options(send=send))
    result = asyncio.run(world.runtime.auto_handoff())
    assert result is not None and result.code == "continuation_failed"
    assert result.destination is not None and world.runtime.session.path == result.destination
    assert (
        _records(result.destination)[-1]
        == (
            f'{{"enabled":true,"paused":true,"attempts":[{T0}],"failure":"continuation_failed"}}'
        ).encode()
    )
    assert asyncio.run(world.runtime.auto_handoff()) is None  # paused: pressure starts nothing


def test_a_failed_attempt_is_recorded_on_the_source(world: World) -> None:
    def generator(request: Any) -> list[Any]:
        return []  # no notes: empty_checkpoint

    world.runtime.handoffs.configure(world.options(generator=generator))
    result = asyncio.run(world.runtime.auto_handoff())
    assert result is not None and result.code == "empty_checkpoint"
    assert _records(world.source_path) == [
        f'{{"enabled":true,"paused":false,"attempts":[{T0}],"failure":"empty_checkpoint"}}'.encode()
    ]


def _reopen(world: World) -> Runtime:
    world.runtime.shutdown()
    runtime = Runtime(
        Session.open(world.source_path),
        RuntimeConfig(
            notes_home=world.root / "notes", cwd=world.cwd, agent_dir=world.root / "agent"
        ),
    )
    runtime.handoffs.clock = lambda: T0
    runtime.handoffs.configure(world.options(), POLICY, world.root / "logs")
    return runtime


def _append_raw(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_replay_takes_the_last_valid_record_and_counts_the_bad_ones(world: World) -> None:
    asyncio.run(world.runtime.auto_handoff_command("pause"))
    leaf = world.runtime.session.leaf_id
    bad = {"type": "custom", "customType": auto.AUTO_HANDOFF_EVENT, "id": "bad00001",
           "parentId": leaf, "timestamp": "2027-01-15T08:00:00.000Z",
           "data": {"enabled": "yes", "paused": False, "attempts": []}}  # fmt: skip
    _append_raw(world.source_path, json.dumps(bad).encode() + b"\n")
    runtime = _reopen(world)
    assert asyncio.run(runtime.auto_handoff_command("status")) == "Automatic handoff: paused."
    assert runtime.handoffs.replayed.invalid == ["bad00001"]
    panel = session_panel(world.source_path, log_dir=world.root / "logs", now=T0)
    assert panel["auto_handoff"]["status"] == "paused"
    assert panel["auto_handoff"]["invalid_records"] == 1


def test_a_torn_record_is_no_record(world: World) -> None:
    """The host died while writing a record that would have switched automatic handoff off:
    the torn last line is skipped (as Pi skips it) and the record before it holds."""
    asyncio.run(world.runtime.auto_handoff_command("pause"))
    torn = {"type": "custom", "customType": auto.AUTO_HANDOFF_EVENT, "id": "torn0001",
            "parentId": world.runtime.session.leaf_id,
            "data": {"enabled": False, "paused": False, "attempts": []}}  # fmt: skip
    line = json.dumps(torn, separators=(",", ":")).encode()
    _append_raw(world.source_path, line[: len(line) - 12])
    runtime = _reopen(world)
    assert asyncio.run(runtime.auto_handoff_command("status")) == "Automatic handoff: paused."
    assert asyncio.run(runtime.auto_handoff_command("resume")).endswith("(armed).")
    # the next record starts on a fresh line: the torn one stays alone, still no record
    assert _records(world.source_path)[-1] == b'{"enabled":true,"paused":false,"attempts":[]}'
    assert Session.open(world.source_path).branch()[-1]["data"]["paused"] is False
    runtime.shutdown()


def test_replay_of_attempts_cooldown_and_limit() -> None:
    policy = auto.AutoHandoffPolicy(cooldown_ms=60_000, max_attempts=2, attempt_window_ms=600_000)
    stamped = auto.AutoRecord(True, False, (T0,))
    failed = auto.AutoRecord(True, False, (T0,), "handoff_budget")
    two = auto.AutoRecord(True, False, (T0 - 1, T0), "stale_scope")
    assert auto.restore_facts(None, policy, T0) == auto.RestoreFacts(True, False, False, True)
    assert auto.restore_facts(stamped, policy, T0 + 59_999).cooling
    assert not auto.restore_facts(stamped, policy, T0 + 60_000).cooling
    assert not auto.restore_facts(failed, policy, T0 + 1).cooling  # only a verified stamp cools
    assert not auto.restore_facts(two, policy, T0 + 1).attempts_left
    assert auto.restore_facts(two, policy, T0 + 600_000).attempts_left  # aged out of the window
    assert auto.parse_record({"enabled": True, "paused": False, "attempts": [1.5e12]}) is not None
    base = {"enabled": True, "paused": False, "attempts": []}
    bad: list[Any] = [
        {"enabled": True, "paused": False},
        {**base, "enabled": 1},
        {**base, "attempts": [True]},
        {**base, "failure": 3},
        [],
        None,
    ]
    for value in bad:
        assert auto.parse_record(value) is None, value


def test_the_policy_defaults_are_documented_and_checked() -> None:
    policy = auto.AutoHandoffPolicy()
    assert (policy.enabled, policy.pressure_percent, policy.max_attempts) == (True, 80.0, 3)
    assert (policy.cooldown_ms, policy.attempt_window_ms) == (15 * 60_000, 60 * 60_000)
    assert (policy.max_requests, policy.generation_timeout_ms) == (4, 120_000)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "handoff.md").read_text()
    for figure in ("80", "15 min", "3 attempts", "60 min", "maxRequests: 4", "120 s"):
        assert figure in docs, figure
    with pytest.raises(ValueError, match="pressure_percent, max_attempts"):
        auto.AutoHandoffPolicy(pressure_percent=0, max_attempts=0)
