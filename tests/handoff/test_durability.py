"""Persisted-write verification for every memory payload kind: absent or different on disk is
``storage_failed``; identical passes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.handoff.durability import verify_persisted_memory
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.notes import BACKGROUND_EVENT, NOTE_EVENT, STATE_EVENT
from pi_context.bindings.handoff.relay import HANDOFF_IN, HANDOFF_OUT, RELAY_MESSAGE
from pi_context.bindings.session import Session

from .conftest import new_session, user

Writer = Callable[[Session], str]
PAYLOADS: list[tuple[str, Writer]] = [
    *[
        (kind, lambda s, kind=kind: s.append_custom(kind, {"version": 2, "notes": [], "k": kind}))
        for kind in (NOTE_EVENT, STATE_EVENT, BACKGROUND_EVENT, HANDOFF_IN, HANDOFF_OUT)
    ],
    ("relay message", lambda s: s.append_custom_message(RELAY_MESSAGE, "relay body", True)),
    (
        "compaction details",
        lambda s: s.append_compaction(
            "sum", None, 5, details={"piContextMemory": {"version": 2, "notes": []}}
        ),
    ),
]


def _persisted(tmp_path: Path, write: Writer) -> tuple[Session, str, Path]:
    s = new_session(tmp_path)
    s.append_message(user("hello"))
    entry_id = write(s)
    s.append_message(user("after"))
    assert s.path is not None
    return s, entry_id, s.path


def _edit(path: Path, entry_id: str, change: Callable[[dict[str, Any]], Any]) -> None:
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        value = json.loads(line)
        if value.get("id") == entry_id:
            value = change(value)
            if value is None:
                continue
        out.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    path.write_text("\n".join(out) + "\n")


@pytest.mark.parametrize(("name", "write"), PAYLOADS, ids=[p[0] for p in PAYLOADS])
def test_each_payload_kind(tmp_path: Path, name: str, write: Writer) -> None:
    s, entry_id, path = _persisted(tmp_path, write)
    verify_persisted_memory(s.branch(), path)
    original = path.read_bytes()

    _edit(path, entry_id, lambda v: None)  # lacks the entry
    with pytest.raises(HandoffError) as err:
        verify_persisted_memory(s.branch(), path)
    assert err.value.code == "storage_failed"

    path.write_bytes(original)

    def differ(v: dict[str, Any]) -> dict[str, Any]:
        if "data" in v:
            v["data"]["k"] = "changed"
        elif "content" in v:
            v["content"] = "changed"
        else:
            v["details"]["piContextMemory"]["notes"] = [1]
        return v

    _edit(path, entry_id, differ)
    with pytest.raises(HandoffError, match="storage_failed"):
        verify_persisted_memory(s.branch(), path)

    path.write_bytes(original)
    _edit(
        path,
        entry_id,
        lambda v: (
            {k: x for k, x in v.items() if k not in ("data", "content")}
            if v["type"] != "compaction"
            else {**v, "details": {}}
        ),
    )
    with pytest.raises(HandoffError, match="storage_failed"):
        verify_persisted_memory(s.branch(), path)


def test_unreadable_or_missing_file(tmp_path: Path) -> None:
    s, _, path = _persisted(tmp_path, PAYLOADS[0][1])
    path.write_bytes(path.read_bytes() + b"{torn\n")
    with pytest.raises(HandoffError, match="storage_failed"):
        verify_persisted_memory(s.branch(), path)
    path.unlink()
    with pytest.raises(HandoffError, match="storage_failed"):
        verify_persisted_memory(s.branch(), path)


def test_nothing_to_verify(tmp_path: Path) -> None:
    s = new_session(tmp_path)
    s.append_message(user("hello"))
    verify_persisted_memory(s.branch(), tmp_path / "missing.jsonl")  # no payloads: nothing to do
    s.append_custom(NOTE_EVENT, {"x": 1})
    verify_persisted_memory(s.branch(), None)  # an in-memory session has no file to check


def test_memory_only_entry_after_failed_write(tmp_path: Path) -> None:
    """An entry that reached memory but not the disk (simulated: appended to an in-memory copy
    of the branch) is caught."""
    s, _, path = _persisted(tmp_path, PAYLOADS[0][1])
    ghost = {"type": "custom", "customType": STATE_EVENT, "data": {"v": 1}, "id": "ghost"}
    with pytest.raises(HandoffError, match="storage_failed"):
        verify_persisted_memory([*s.branch(), ghost], path)
