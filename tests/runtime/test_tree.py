"""Tree navigation on sessions the real Pi wrote: a reset marker on either branch suppresses
Pi's branch summary (empty summary, a notice, no summary entry); without one, Pi's native
summary is kept. The navigation itself, the boot of the destination window and the raw history
stay available."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.runtime.protocol import BOOT_TYPE, CONTINUATION_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.runtime.tree import SUPPRESSED_NOTICE, decide
from pi_context.bindings.session import Session, SessionError


def _msg(role: str, text: str) -> dict[str, Any]:
    if role == "user":
        return {"op": "message", "message": {"role": "user", "content": text, "timestamp": 1}}
    return {
        "op": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "x",
            "provider": "x",
            "model": "x",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "stopReason": "stop",
            "timestamp": 1,
        },
    }


def _reset_ops(window_id: str) -> list[dict[str, Any]]:
    return [
        {"op": "compaction", "summary": "", "firstKept": None, "tokensBefore": 0},
        {"op": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": window_id}},
        {
            "op": "custom_message",
            "customType": BOOT_TYPE,
            "content": f"boot of {window_id}",
            "display": False,
            "details": {"windowId": window_id},
        },
        {
            "op": "custom_message",
            "customType": CONTINUATION_TYPE,
            "content": "go on",
            "display": False,
        },
    ]


def _build(run_pi: Any, tmp_path: Path, source_marker: bool, destination_marker: bool):
    """Root exchange, then a destination branch (written first) and a source branch.

    Returns the file, the destination tip and the source tip (Pi's leaf after loading).
    """
    ops: list[dict[str, Any]] = [_msg("user", "shared question"), _msg("assistant", "shared")]
    fork = 1
    ops += [_msg("user", "destination work"), _msg("assistant", "destination answer")]
    if destination_marker:
        ops += _reset_ops("pcw:tree:destination")
        ops += [_msg("user", "destination after reset")]
    destination_tip = len(ops) - 1
    ops += [{"op": "branch", "target": fork}]
    ops += [_msg("user", "SECRET source work"), _msg("assistant", "SECRET source answer")]
    if source_marker:
        ops += _reset_ops("pcw:tree:source")
        ops += [_msg("user", "source after reset")]
    (built,) = run_pi(
        [
            {
                "kind": "build",
                "cwd": str(tmp_path / "project"),
                "dir": str(tmp_path / "sessions"),
                "ops": ops,
                "leafRefs": [],
            }
        ]
    )
    assert "error" not in built, built
    refs = built["refs"]
    # "branch" ops produce no ref: index refs by the ops that do.
    ref_of = {}
    position = 0
    for index, op in enumerate(ops):
        if op["op"] != "branch":
            ref_of[index] = refs[position]
            position += 1
    return Path(built["path"]), ref_of[destination_tip], refs[-1]


class Summarizer:
    """Stands in for Pi's LLM summarizer: deterministic text from the abandoned entries."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, entries: Any) -> str:
        texts = []
        for entry in entries:
            message = entry.get("message") or {}
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [b.get("text", "") for b in content if isinstance(b, dict)]
        self.calls.append([entry["id"] for entry in entries])
        return "Summary of the branch left: " + " / ".join(texts)


CASES = [
    pytest.param(False, False, "neither", id="neither"),
    pytest.param(True, False, "source", id="source-only"),
    pytest.param(False, True, "destination", id="destination-only"),
    pytest.param(True, True, "both", id="both"),
]


@pytest.mark.parametrize(("source_marker", "destination_marker", "side"), CASES)
def test_summary_is_suppressed_exactly_when_a_branch_has_a_marker(
    env, run_pi, tmp_path, source_marker, destination_marker, side
):
    path, destination, source = _build(run_pi, tmp_path, source_marker, destination_marker)
    session = Session.open(path)
    assert session.leaf_id == source
    rt = env.runtime(session)
    rt.session_start("resume")
    rt.drain_notices()
    before = rt.before_tree(destination)
    assert before.markers == side
    suppressed = side != "neither"
    assert before.suppress is suppressed
    assert before.hook_result == ({"summary": {"summary": ""}} if suppressed else None)
    notices = [n.text for n in rt.drain_notices()]
    assert notices == ([SUPPRESSED_NOTICE] if suppressed else [])

    summarize = Summarizer()
    nav = rt.navigate_tree(destination, summarize)
    assert nav.decision.markers == side
    assert rt.branch()[-1]["id"] != source
    if suppressed:
        assert summarize.calls == [], "Pi's summarizer is never run across a reset"
        assert nav.summary_entry_id is None
        assert not any(e["type"] == "branch_summary" for e in Session.open(path).entries)
    else:
        assert len(summarize.calls) == 1 and nav.summary_entry_id is not None
    provider = json.dumps(rt.context().messages)
    assert ("SECRET" in provider) is (not suppressed), "only a native summary carries it"
    assert not rt.context().abort, "the destination window has its boot"

    # The real Pi reads the result: its own projection of the file agrees.
    (answer,) = run_pi([{"kind": "inspect", "path": str(path), "leaves": [rt.session.leaf_id]}])
    assert "error" not in answer, answer
    assert answer["rewritten"] == path.read_text(encoding="utf-8")
    view = json.loads(answer["views"][0])
    roles = [m["role"] for m in view["projection"]["messages"]]
    assert ("branchSummary" in roles) is (not suppressed)
    if destination_marker:
        assert "SECRET" not in json.dumps(view["projection"]["messages"])


def test_a_marker_shared_by_both_branches_counts_for_both(env, run_pi, tmp_path):
    ops = [_msg("user", "before"), *_reset_ops("pcw:tree:shared"), _msg("user", "fork point")]
    ops += [_msg("assistant", "left"), {"op": "branch", "target": 5}, _msg("assistant", "right")]
    (built,) = run_pi(
        [
            {
                "kind": "build",
                "cwd": str(tmp_path),
                "dir": str(tmp_path / "s"),
                "ops": ops,
                "leafRefs": [],
            }
        ]
    )
    session = Session.open(Path(built["path"]))
    left, right = built["refs"][6], built["refs"][7]
    rt = env.runtime(session)
    decision = rt.before_tree(left, right)
    assert (decision.markers, decision.suppress) == ("both", True)


def test_no_summary_requested_needs_no_intervention(env, run_pi, tmp_path):
    path, destination, source = _build(run_pi, tmp_path, True, True)
    rt = env.runtime(Session.open(path))
    decision = rt.before_tree(destination, wants_summary=False)
    assert (decision.markers, decision.suppress, decision.hook_result) == ("both", False, None)
    assert rt.drain_notices() == []
    nav = rt.navigate_tree(destination)
    # The destination tip is a user message: Pi lands on its parent and offers its text.
    assert nav.summary_entry_id is None and nav.editor_text == "destination after reset"
    assert rt.session.leaf_id == rt.session.get(destination)["parentId"]
    assert rt.window_id == "pcw:tree:destination"


def test_navigation_to_a_user_message_lands_on_its_parent_with_its_text(env, run_pi, tmp_path):
    path, destination, source = _build(run_pi, tmp_path, True, False)
    session = Session.open(path)
    target = next(
        e for e in session.entries if e.get("message", {}).get("content") == "shared question"
    )
    rt = env.runtime(session)
    nav = rt.navigate_tree(target["id"], Summarizer())
    assert nav.editor_text == "shared question"
    assert nav.decision.suppress, "the source branch was reset"
    assert rt.session.leaf_id is not None, "the root boot of the empty branch was written"
    assert rt.branch()[0]["customType"] == BOOT_TYPE


def test_lifecycle_is_cleared_and_the_window_follows_the_destination(env, run_pi, tmp_path):
    path, destination, source = _build(run_pi, tmp_path, True, False)
    rt = env.runtime(Session.open(path))
    rt.session_start("resume")
    assert rt.window_id == "pcw:tree:source"
    assert json.loads(rt.call_tool("wipe_memory").text)["status"] == "rollover_requested"
    generation = rt.generation
    rt.navigate_tree(destination, Summarizer())
    assert rt.generation == generation + 1
    assert rt.window_id == f"pcw:{rt.session_id[:8]}:root"
    assert json.loads(rt.call_tool("wipe_memory").text)["status"] == "rollover_requested", (
        "the request of the window left behind was cleared"
    )


def test_unknown_entries_are_refused_by_name(env, run_pi, tmp_path):
    path, destination, source = _build(run_pi, tmp_path, False, False)
    rt = env.runtime(Session.open(path))
    with pytest.raises(SessionError, match="destination entry 'nope' is not in this session"):
        rt.before_tree("nope")
    with pytest.raises(SessionError, match="source entry 'gone' is not in this session"):
        rt.before_tree(destination, "gone")


def test_decide_is_pure_over_every_combination():
    marker = {"type": "custom", "customType": RESET_MARKER_TYPE, "data": {"windowId": "w"}}
    plain = {"type": "message", "message": {"role": "user", "content": "x"}}
    for source in ([], [plain], [plain, marker]):
        for destination in ([], [plain], [marker, plain]):
            for wants in (False, True):
                decision = decide(source, destination, wants)
                has = (marker in source, marker in destination)
                assert decision.suppress == (wants and any(has))
                assert (decision.notice is not None) == decision.suppress
