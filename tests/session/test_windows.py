"""Window identity over a branch: markers, ids, per-window lookups, boot selection, usage."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Session, seeded_uuids
from pi_context.bindings.session.usage import window_usage
from pi_context.bindings.session.windows import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    RESET_MARKER_TYPE,
    MissingBootError,
    current_reset,
    current_window_id,
    find_window_message,
    has_window_message,
    is_reset_marker,
    mint_window_id,
    needs_root_boot,
    previous_window_id,
    project_root_window,
    project_window,
    provider_projection,
    root_window_id,
    window_spans,
)

SID = "01a22bec-ef14-7562-9e00-232720c9be18"
W = f"pcw:{SID[:8]}:"
"""The window-id prefix of SID (its first 8 characters, as the extension names windows)."""
GUIDANCE = "pi-context/guidance"


def _session() -> Session:
    clock = iter(range(1_800_000_000_000, 1_900_000_000_000, 1000))
    return Session.in_memory(
        Path("/p"), session_id=SID, uuids=seeded_uuids(1), now=lambda: next(clock)
    )


def _reset(session: Session, window_id: str, boot: bool = True) -> None:
    session.append_compaction("", None, 0)
    session.append_custom(RESET_MARKER_TYPE, {"windowId": window_id})
    if boot:
        session.append_custom_message(
            BOOT_TYPE, f"boot {window_id}", False, {"windowId": window_id}
        )
        session.append_custom_message(CONTINUATION_TYPE, "continue", False)


def _user(session: Session, text: str) -> str:
    return session.append_message({"role": "user", "content": text, "timestamp": 1})


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": "pcw:a:1"}},
            True,
        ),
        ({"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": ""}}, False),
        ({"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": 7}}, False),
        ({"type": "custom", "customType": RESET_MARKER_TYPE, "data": None}, False),
        ({"type": "custom", "customType": RESET_MARKER_TYPE}, False),
        ({"type": "custom", "customType": "other", "data": {"windowId": "pcw:a:1"}}, False),
        (
            {
                "type": "custom_message",
                "customType": RESET_MARKER_TYPE,
                "details": {"windowId": "w"},
            },
            False,
        ),
        ("not an entry", False),
    ],
)
def test_marker_predicate(entry: Any, expected: bool) -> None:
    assert is_reset_marker(entry) is expected


def test_root_window_id_uses_the_first_eight_characters() -> None:
    assert root_window_id(SID) == W + "root"
    assert root_window_id("abc") == "pcw:abc:root"


def test_current_reset_is_the_last_marker_on_the_active_branch_only() -> None:
    session = _session()
    fork_point = _user(session, "start")
    _reset(session, W + "aaaaaaaa")
    _reset(session, W + "bbbbbbbb")
    assert current_window_id(session.branch(), SID) == W + "bbbbbbbb"
    marker = current_reset(session.branch())
    assert marker is not None and marker["data"] == {"windowId": W + "bbbbbbbb"}
    # A sibling branch cannot borrow the markers.
    session.move_leaf(fork_point)
    _user(session, "sibling")
    assert current_reset(session.branch()) is None
    assert current_window_id(session.branch(), SID) == W + "root"


def test_previous_window_id() -> None:
    session = _session()
    _user(session, "start")
    assert previous_window_id(session.branch(), SID) is None
    _reset(session, W + "aaaaaaaa")
    first_marker = current_reset(session.branch())
    assert previous_window_id(session.branch(), SID) == W + "root"
    _reset(session, W + "bbbbbbbb")
    assert previous_window_id(session.branch(), SID) == W + "aaaaaaaa"
    assert first_marker is not None
    assert previous_window_id(session.branch(), SID, first_marker["id"]) == W + "root"
    assert previous_window_id(session.branch(), SID, "not-on-branch") is None


class _Scripted(random.Random):
    """An rng whose first draws are forced, to prove minting skips taken ids."""

    def __init__(self, values: list[int]) -> None:
        super().__init__(0)
        self.values = values

    def getrandbits(self, k: int) -> int:
        return self.values.pop(0) if self.values else super().getrandbits(k)


def test_minting_never_reuses_an_id_on_the_branch() -> None:
    session = _session()
    _user(session, "start")
    _reset(session, W + "0000000a")
    session.append_custom_message(BOOT_TYPE, "boot", False, {"windowId": W + "0000000b"})
    minted = mint_window_id(session.branch(), SID, _Scripted([0xA, 0xB, 0xC]))
    assert minted == W + "0000000c"
    for seed in range(50):
        fresh = mint_window_id(session.branch(), SID, random.Random(seed))
        assert fresh.startswith(W) and len(fresh.split(":")[2]) == 8
        assert int(fresh.split(":")[2], 16) >= 0


def test_window_spans_partition_the_branch_at_markers() -> None:
    session = _session()
    _user(session, "one")
    _reset(session, W + "aaaaaaaa")
    _user(session, "two")
    _reset(session, W + "bbbbbbbb")
    branch = session.branch()
    spans = window_spans(branch, SID)
    assert [s.window_id for s in spans] == [
        W + "root",
        W + "aaaaaaaa",
        W + "bbbbbbbb",
    ]
    assert [(s.start, s.end) for s in spans] == [(0, 2), (2, 7), (7, 10)]
    assert spans[0].marker_id is None
    assert all(is_reset_marker(branch[s.start]) for s in spans[1:])
    window_id, indices, marker = spans[1]
    assert window_id == W + "aaaaaaaa" and indices == range(2, 7) and marker == branch[2]["id"]


def test_reminder_lookup_is_window_local_and_branch_local() -> None:
    session = _session()
    start = _user(session, "start")
    session.append_custom_message(GUIDANCE, "low budget", False)
    assert has_window_message(session.branch(), GUIDANCE)
    _reset(session, W + "aaaaaaaa")
    assert not has_window_message(session.branch(), GUIDANCE), (
        "the old window's reminder is behind the marker"
    )
    reminder = session.append_custom_message(GUIDANCE, "low again", False)
    found = find_window_message(session.branch(), GUIDANCE)
    assert found is not None and found["id"] == reminder
    session.move_leaf(start)
    assert not has_window_message(session.branch(), GUIDANCE), "a sibling never received it"


def _messages(session: Session) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = session.projection()["messages"]
    return messages


def test_boot_selection_by_window_id_folds_only_the_system_prefix() -> None:
    session = _session()
    session.append_message(
        {"role": "system", "content": "base", "sections": {"a": "A"}, "timestamp": 5}
    )
    _user(session, "old window")
    _reset(session, W + "aaaaaaaa")
    session.append_message(
        {"role": "system", "content": "", "sections": {"a": None, "b": "B"}, "timestamp": 9}
    )
    _user(session, "new window")
    messages = _messages(session)
    projected = project_window(messages, W + "aaaaaaaa")
    # The checkpoint carries the prompt folded so far, stamped with its own time (as Pi does).
    checkpoint = next(e for e in session.branch() if e["type"] == "compaction")
    stamp = 1_800_000_000_000 + 1000 * session.entries.index(checkpoint) + 1000
    assert checkpoint["timestamp"] == "2027-01-15T08:00:03.000Z" and stamp == 1_800_000_003_000
    assert projected[0] == {
        "role": "system",
        "content": "base",
        "sections": {"a": "A"},
        "timestamp": stamp,
    }
    assert projected[1]["customType"] == BOOT_TYPE
    assert projected[1]["details"] == {"windowId": W + "aaaaaaaa"}
    # Later prompt patches and messages stay in place, in order.
    assert [m["role"] for m in projected[2:]] == ["custom", "system", "user"]
    assert projected[-1]["content"] == "new window"
    # The extension's projection keeps Pi's empty checkpoint summary; the option cuts as above.
    assert provider_projection(session.branch(), messages, SID, cut_at_boot=True) == projected
    kept = provider_projection(session.branch(), messages, SID)
    assert kept == messages and kept[1]["role"] == "compactionSummary"


def test_missing_boot_refuses_to_send_raw_history() -> None:
    session = _session()
    _user(session, "secret old history")
    _reset(session, W + "aaaaaaaa", boot=False)
    _user(session, "after")
    with pytest.raises(MissingBootError, match=W + "aaaaaaaa"):
        provider_projection(session.branch(), _messages(session), SID)
    # A boot of another window does not satisfy it either.
    session.append_custom_message(BOOT_TYPE, "wrong", False, {"windowId": W + "bbbbbbbb"})
    with pytest.raises(MissingBootError):
        provider_projection(session.branch(), _messages(session), SID)
    assert window_usage(session.branch(), _messages(session), SID) is None


def test_fork_refreshes_the_root_boot(tmp_path: Path) -> None:
    source = Session.create(
        Path("/p"), tmp_path / "a", session_id="aaaaaaaa-source", uuids=seeded_uuids(3)
    )
    source.append_custom_message(
        BOOT_TYPE, "source boot", False, {"windowId": root_window_id("aaaaaaaa-source")}
    )
    _user(source, "copied conversation")
    fork = source.fork(tmp_path / "b", session_id="bbbbbbbb-fork")
    assert fork.header["parentSession"] == str(source.path)
    copied = _messages(fork)
    assert needs_root_boot(fork.branch(), copied, fork.session_id), (
        "the copied boot names the source"
    )
    fork.append_custom_message(BOOT_TYPE, "fork boot", False, {"windowId": "pcw:bbbbbbbb:root"})
    messages = _messages(fork)
    assert not needs_root_boot(fork.branch(), messages, fork.session_id)
    projected = project_root_window(messages, "pcw:bbbbbbbb:root")
    assert [m.get("content") for m in projected] == ["fork boot", "copied conversation"]
    assert provider_projection(fork.branch(), messages, fork.session_id) == projected


def test_active_window_usage_ignores_usage_before_the_reset() -> None:
    session = _session()
    _user(session, "x" * 700)
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "big"}],
            "usage": {
                "input": 150_000,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 150_000,
            },
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    before = window_usage(session.branch(), _messages(session), SID)
    assert before == 150_000
    _reset(session, W + "aaaaaaaa")
    after = window_usage(session.branch(), _messages(session), SID)
    # Only the boot "boot pcw:<8 characters>:aaaaaaaa" (26 chars) and "continue" (8 chars)
    # remain in the provider window (the prefix before the boot folds to nothing: no system
    # messages), at Pi's 3.5 characters per token: ceil(26 / 3.5) + ceil(8 / 3.5).
    assert len(f"boot {W}aaaaaaaa") == 26
    assert after == 8 + 3
