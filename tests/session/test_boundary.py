"""The reset boundary (0.26 order), its validation, on-disk verification and tail repair."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Durability, Session, SessionError, seeded_uuids
from pi_context.bindings.session.boundary import (
    BoundaryError,
    boot_draft,
    checkpoint_draft,
    commit_boundary,
    compose_turn_end,
    continuation_draft,
    marker_draft,
    plan_tail_repair,
    reset_drafts,
    reset_prompt_draft,
    validate_boundary,
    verify_persisted,
)
from pi_context.bindings.session.windows import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    RESET_MARKER_TYPE,
    current_window_id,
    previous_window_id,
    provider_projection,
    window_spans,
)

SID = "0123abcd-0000-7000-8000-000000000000"
WID = "pcw:0123abcd:0000beef"
GUIDANCE = "pi-context/guidance"
INCOMING = {
    "type": "custom_message",
    "customType": "foreign/boundary",
    "content": "incoming",
    "display": False,
}
BUDGET = {"type": "custom_message", "customType": GUIDANCE, "content": "budget", "display": False}


def _file_session(directory: Path) -> Session:
    session = Session.create(Path("/p"), directory, session_id=SID, uuids=seeded_uuids(9))
    session.append_message({"role": "system", "content": "prompt", "timestamp": 1})
    session.append_message({"role": "user", "content": "old work", "timestamp": 2})
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], "timestamp": 3}
    )
    return session


def _kinds(drafts: list[dict[str, Any]]) -> list[str]:
    return [d["customType"] if d["type"] != "compaction" else "native-compaction" for d in drafts]


def test_turn_end_orders_incoming_then_budget_then_checkpoint_marker_boot_continuation(
    tmp_path: Path,
) -> None:
    session = _file_session(tmp_path)
    reset = reset_drafts(session.branch(), SID, "boot text", "continue", window_id=WID)
    drafts = compose_turn_end([INCOMING], [BUDGET], reset)
    assert _kinds(drafts) == [
        "foreign/boundary",
        GUIDANCE,
        "native-compaction",
        RESET_MARKER_TYPE,
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    commit_boundary(session, drafts)
    reopened = Session.open(session.path, readonly=True)  # type: ignore[arg-type]
    branch = reopened.branch()
    markers = [e for e in branch if e["type"] == "custom" and e["customType"] == RESET_MARKER_TYPE]
    assert [m["data"] for m in markers] == [{"windowId": WID}]
    index = branch.index(markers[0])
    checkpoint = branch[index - 1]
    assert checkpoint["type"] == "compaction", "the checkpoint is directly before the marker"
    assert checkpoint["summary"] == ""
    assert checkpoint["firstKeptEntryId"] == checkpoint["id"], "null is stored as retain-none"
    assert checkpoint["fromHook"] is True
    assert [e.get("customType") for e in branch[index:]] == [
        RESET_MARKER_TYPE,
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    assert (
        branch[index + 1]["details"] == {"windowId": WID} and branch[index + 1]["display"] is False
    )
    assert current_window_id(branch, SID) == WID
    assert previous_window_id(branch, SID) == "pcw:0123abcd:root"
    # Canonical context starts over at the checkpoint; the raw history stays on the branch.
    context = [e["id"] for e in reopened.context_entries()]
    assert context[0] == checkpoint["id"] and len(context) == 4
    assert any(e.get("message", {}).get("content") == "old work" for e in branch)
    provider = provider_projection(branch, reopened.projection()["messages"], SID)
    # As the extension sends it: Pi's projection, the empty checkpoint summary before the boot.
    assert [m["role"] for m in provider] == ["system", "compactionSummary", "custom", "custom"]
    assert provider[0]["content"] == "prompt" and provider[1]["summary"] == ""
    assert [m["content"] for m in provider[2:]] == ["boot text", "continue"]
    cut = provider_projection(branch, reopened.projection()["messages"], SID, cut_at_boot=True)
    assert cut == [provider[0], *provider[2:]], "cut_at_boot folds the summary away"


def test_a_follow_up_prompt_ends_the_boundary_displayed(tmp_path: Path) -> None:
    """From 6bcd8b5 on a fifth draft, the user's follow-up prompt, may follow the continuation:
    displayed, non-empty, in the continuation's dialect; it is written and verified on disk."""
    session = _file_session(tmp_path)
    drafts = reset_drafts(session.branch(), SID, "boot", "go", window_id="pcw:0123abcd:00000001")
    ids = commit_boundary(session, [*drafts, reset_prompt_draft("next task")])
    written = [session.get(i) for i in ids]
    assert written[-1]["customType"] == "notesoup/reset-prompt"
    assert written[-1]["content"] == "next task" and written[-1]["display"] is True
    bad = [
        ({**reset_prompt_draft("x"), "display": False}, "displayed"),
        (reset_prompt_draft("   "), "non-empty"),
        (reset_prompt_draft("x", "pi-context"), "dialect"),
    ]
    for prompt, message in bad:
        with pytest.raises(BoundaryError, match=message):
            validate_boundary([*drafts, prompt])
    with pytest.raises(BoundaryError, match="follow the continuation"):
        validate_boundary([reset_prompt_draft("x")])  # no boundary before it
    with pytest.raises(BoundaryError):  # inside the boundary: misordered
        validate_boundary([*drafts[:-1], reset_prompt_draft("x"), drafts[-1]])


def test_two_resets_survive_a_reopen(tmp_path: Path) -> None:
    session = _file_session(tmp_path)
    commit_boundary(
        session,
        reset_drafts(session.branch(), SID, "boot 1", "go", window_id="pcw:0123abcd:00000001"),
    )
    session.append_message({"role": "user", "content": "second window work", "timestamp": 4})
    second = reset_drafts(session.branch(), SID, "boot 2", "go", rng=random.Random(4))
    commit_boundary(session, second)
    reopened = Session.open(session.path, readonly=True)  # type: ignore[arg-type]
    spans = window_spans(reopened.branch(), SID)
    assert [s.window_id for s in spans] == [
        "pcw:0123abcd:root",
        "pcw:0123abcd:00000001",
        second[1]["data"]["windowId"],
    ]
    assert previous_window_id(reopened.branch(), SID) == "pcw:0123abcd:00000001"
    contents = [m.get("content") for m in reopened.projection()["messages"]]
    assert "second window work" not in contents and "old work" not in contents
    assert contents[-2:] == ["boot 2", "go"]


@pytest.mark.parametrize(
    ("drafts", "message"),
    [
        ([marker_draft(WID), boot_draft(WID, "b"), continuation_draft("c")], "needs checkpoint"),
        (
            [INCOMING, marker_draft(WID), boot_draft(WID, "b"), continuation_draft("c")],
            "checkpoint",
        ),
        (
            [checkpoint_draft(), boot_draft(WID, "b"), marker_draft(WID), continuation_draft("c")],
            "out of order",
        ),
        (
            [
                checkpoint_draft(),
                marker_draft(WID),
                boot_draft("pcw:other:1", "b"),
                continuation_draft("c"),
            ],
            "details.windowId",
        ),
        (
            [checkpoint_draft(), marker_draft(""), boot_draft("", "b"), continuation_draft("c")],
            "non-empty",
        ),
        (
            [
                boot_draft(WID, "x"),
                checkpoint_draft(),
                marker_draft(WID),
                boot_draft(WID, "b"),
                continuation_draft("c"),
            ],
            "before the reset",
        ),
        (
            [
                checkpoint_draft(),
                checkpoint_draft(),
                marker_draft(WID),
                boot_draft(WID, "b"),
                continuation_draft("c"),
            ],
            "second retain-none",
        ),
        (
            [
                checkpoint_draft(),
                marker_draft(WID),
                {**boot_draft(WID, "b"), "display": True},
                continuation_draft("c"),
            ],
            "hidden",
        ),
        (
            [
                {"type": "compaction", "summary": "not empty", "firstKeptEntryId": None},
                marker_draft(WID),
                boot_draft(WID, "b"),
                continuation_draft("c"),
            ],
            "empty-summary",
        ),
    ],
)
def test_invalid_boundaries_are_rejected(drafts: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(BoundaryError, match=message):
        validate_boundary(drafts)


def test_ordinary_batches_need_no_reset_shape() -> None:
    validate_boundary([INCOMING, BUDGET])
    validate_boundary([])


def test_drafts_are_validated_together_before_any_write(tmp_path: Path) -> None:
    session = _file_session(tmp_path)
    before = session.path.read_bytes()  # type: ignore[union-attr]
    bad_edit = {"type": "context_edit", "targetId": "missing0", "replacement": None}
    with pytest.raises(SessionError, match="draft 1 .*missing0 not found"):
        session.append_drafts([INCOMING, bad_edit])
    assert session.path.read_bytes() == before  # type: ignore[union-attr]
    assert len(session.entries) == 3
    with pytest.raises(SessionError, match="unsupported draft type"):
        session.append_drafts([{"type": "branch_summary", "summary": "x"}])


def test_verification_detects_a_boundary_that_is_not_on_disk(tmp_path: Path) -> None:
    session = _file_session(tmp_path)
    ids = commit_boundary(session, reset_drafts(session.branch(), SID, "boot", "go", window_id=WID))
    verify_persisted(session, ids)
    assert session.path is not None
    text = session.path.read_text()
    session.path.write_text(text.replace('"boot"', '"tampered"'))
    with pytest.raises(BoundaryError, match=f"entry {ids[-2]} differs"):
        verify_persisted(session, ids)
    session.path.write_text(
        "".join(line + "\n" for line in text.splitlines() if ids[-1] not in line)
    )
    with pytest.raises(BoundaryError, match=f"entry {ids[-1]} is missing"):
        verify_persisted(session, ids)


def test_verification_refuses_a_checkpoint_held_only_in_memory(tmp_path: Path) -> None:
    deferred = Session.create(Path("/p"), tmp_path, session_id=SID)
    with pytest.raises(BoundaryError, match="only in memory"):
        commit_boundary(deferred, reset_drafts([], SID, "boot", "go", window_id=WID))
    memory = Session.in_memory(Path("/p"), session_id=SID)
    commit_boundary(memory, reset_drafts([], SID, "boot", "go", window_id=WID))


# ---------------------------------------------------------------------------------------------
# tail repair

_TAIL_ITEMS: dict[str, dict[str, Any]] = {
    "boot": boot_draft(WID, "boot"),
    "continuation": continuation_draft("go"),
    "foreign-boot": boot_draft("pcw:0123abcd:ffffffff", "other"),
    "user": {"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}},
    "foreign": {
        "type": "custom_message",
        "customType": "other/x",
        "content": "x",
        "display": False,
    },
    "label": {"type": "label", "targetId": None, "label": "l"},
    "model": {"type": "model_change", "provider": "p", "modelId": "m"},
    "custom": {"type": "custom", "customType": "other/state", "data": {"n": 1}},
    "compaction": {"type": "compaction", "summary": "s", "firstKeptEntryId": None},
    "bad-marker": {"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": ""}},
}
_METADATA = {"label", "model", "custom"}


def _with_tail(items: tuple[str, ...]) -> Session:
    session = Session.in_memory(Path("/p"), session_id=SID, uuids=seeded_uuids(2))
    first = session.append_message({"role": "user", "content": "start", "timestamp": 0})
    session.append_drafts([checkpoint_draft(), marker_draft(WID)])
    for item in items:
        draft = dict(_TAIL_ITEMS[item])
        if item == "label":
            draft["targetId"] = first
        session.append_draft(draft)
    return session


def _oracle(items: tuple[str, ...]) -> str:
    """The seeds' rule, stated over the item names directly."""
    artifacts = [i for i in items if i not in _METADATA]
    if artifacts[:2] == ["boot", "continuation"]:
        return "complete"
    if artifacts in ([], ["boot"]):
        return "repair"
    return "refused"


def test_tail_repair_over_every_short_tail() -> None:
    """Every tail of up to three items over the alphabet, against the oracle."""
    cases = [c for n in range(4) for c in itertools.product(sorted(_TAIL_ITEMS), repeat=n)]
    assert len(cases) == 1111
    for items in cases:
        session = _with_tail(items)
        plan = plan_tail_repair(session.branch())
        assert plan.status == _oracle(items), items
        assert plan.window_id == WID and plan.has_checkpoint
        if plan.status == "repair":
            drafts = plan.drafts("boot", "go")
            assert [d["customType"] for d in drafts] == [BOOT_TYPE, CONTINUATION_TYPE][
                2 - len(drafts) :
            ]
            session.append_drafts(drafts)
            assert plan_tail_repair(session.branch()).status == "complete", items
        else:
            assert plan.drafts("boot", "go") == []


def test_named_tail_repair_scenarios() -> None:
    assert plan_tail_repair(_with_tail(()).branch()).missing == ("boot", "continuation")
    assert plan_tail_repair(_with_tail(("boot",)).branch()).missing == ("continuation",)
    assert plan_tail_repair(_with_tail(("model", "label")).branch()).missing == (
        "boot",
        "continuation",
    )
    assert (
        plan_tail_repair(_with_tail(("boot", "continuation", "user")).branch()).status == "complete"
    )
    refusals = {
        ("user",): "real conversation follows the marker",
        ("foreign",): "a foreign message follows the marker",
        ("compaction",): "a compaction follows the marker",
        ("continuation",): "continuation without a boot",
        ("boot", "boot"): "boot after boot: misordered or duplicate",
        ("foreign-boot",): "a boot of another window follows the marker",
        ("bad-marker",): "a later (malformed) marker follows",
    }
    for items, reason in refusals.items():
        plan = plan_tail_repair(_with_tail(items).branch())
        assert (plan.status, plan.reason) == ("refused", reason)
    root = Session.in_memory(Path("/p"), session_id=SID)
    assert plan_tail_repair(root.branch()).status == "no-marker"


def test_repair_after_an_interrupted_reset_on_disk(tmp_path: Path) -> None:
    """Pi stopped between the marker and the boot: reopen, repair, verify."""
    session = _file_session(tmp_path)
    session.append_drafts([checkpoint_draft(), marker_draft(WID)])
    assert session.path is not None
    reopened = Session.open(session.path, durability=Durability.BOUNDARY)
    plan = plan_tail_repair(reopened.branch())
    assert plan.status == "repair" and plan.missing == ("boot", "continuation")
    ids = reopened.append_drafts(plan.drafts("boot", "go"))
    verify_persisted(reopened, ids)
    final = Session.open(session.path, readonly=True)
    assert plan_tail_repair(final.branch()).status == "complete"
    provider = provider_projection(final.branch(), final.projection()["messages"], SID)
    assert [m.get("content") for m in provider][-2:] == ["boot", "go"]
