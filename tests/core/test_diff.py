"""``pi-context diff``: grouped differences between specs, with shortest traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.spec import SPECS_DIR, interpret, load
from pi_context.spec.abstraction import case_count
from pi_context.spec.diff import DiffError, diff_specs, render_markdown, to_json

V26 = SPECS_DIR / "reset-control@0.26.yaml"


def variant(tmp_path: Path, old: str, new: str, name: str = "variant.yaml") -> Path:
    text = V26.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_a_spec_agrees_with_itself_and_with_a_reworded_copy(tmp_path: Path) -> None:
    base = load(V26)
    copy = load(
        variant(
            tmp_path,
            "why: Repeated wipe_memory calls in one window deduplicate.",
            "why: Said differently; same decision.",
        )
    )
    for other in (base, copy):
        d = diff_specs(base, other)
        assert d.same and d.differing == 0 and d.cases == case_count(base) == 9212
        assert "agree on all 9212 cases" in render_markdown(d)


def test_one_changed_cell_is_one_group_with_its_shortest_trace(tmp_path: Path) -> None:
    # the close-out/tool-request duplicate row now reports 'close-out-armed'
    old = (
        "    when: request.phase == 'tool-requested' and request.windowId == event.windowId\n"
        "    effect: already-pending\n"
        "    why: The window's own wipe_memory"
    )
    new = old.replace("effect: already-pending", "effect: close-out-armed")
    base, changed = load(V26), load(variant(tmp_path, old, new))
    d = diff_specs(base, changed)
    assert [(g.row_a, g.row_b) for g in d.groups] == [
        ("close_out.duplicate-tool", "close_out.duplicate-tool")
    ]
    (group,) = d.groups
    # tool-requested(w, ·) × close_out(w, source) for both ids, both sources, 4 overflows
    assert group.count == d.differing == 2 * 2 * 4
    assert group.differs_in == {"effect"}
    assert group.trace is not None and len(group.trace) == 2
    assert [e["type"] for e in group.trace] == ["tool_request", "close_out"]
    # replaying the trace reaches the example case, and only its last step differs
    state = interpret.initial_state(base)
    for event in group.trace[:-1]:
        a, b = interpret.step(base, state, event), interpret.step(changed, state, event)
        assert (a.state, a.effect) == (b.state, b.effect)
        state = a.state
    assert group.example is not None and group.example.state == state
    assert interpret.step(base, state, group.trace[-1]).effect == "already-pending"
    assert interpret.step(changed, state, group.trace[-1]).effect == "close-out-armed"
    report = to_json(d)
    assert report["differing"] == 16 and report["groups"][0]["differs_in"] == ["effect"]
    assert report["groups"][0]["example"]["b"]["effect"] == "close-out-armed"


def test_a_changed_consultation_alone_is_a_difference(tmp_path: Path) -> None:
    tail = " and facts.automaticResetEnabled\n"
    old = "    when: facts.overflow and not facts.queued and facts.enabled" + tail
    new = "    when: facts.overflow and facts.enabled and not facts.queued" + tail
    d = diff_specs(load(V26), load(variant(tmp_path, old, new)))
    assert d.groups and all(g.differs_in == {"consulted"} for g in d.groups)
    assert {g.row_a for g in d.groups} <= {"turn_end.overflow-arm", "turn_end.overflow-disarm"}


def test_the_newest_generation_needs_its_projection() -> None:
    v26, v27 = load(V26), load(SPECS_DIR / "reset-control@0.27.yaml")
    d = diff_specs(v26, v27)
    assert "dropping request.tool-requested.source" in d.projection
    assert d.enumerated is v27 and d.cases == case_count(v27)
    assert {(g.row_a, g.row_b): g.differs_in for g in d.groups} == {
        ("turn_end.tool-commit", "turn_end.tool-commit-stop"): {"effect"},
        ("before_settle.fallback", "before_settle.fallback-stop"): {"effect"},
    }
    fallback = d.groups[1]
    assert fallback.trace is not None and [e["type"] for e in fallback.trace] == [
        "close_out",
        "before_settle",
    ]
    # the same comparison the other way round
    back = diff_specs(v27, v26)
    assert back.differing == d.differing


def test_specs_without_a_shared_abstraction_are_refused(tmp_path: Path) -> None:
    v25 = load(SPECS_DIR / "reset-control@0.25.yaml")
    text26 = V26.read_text(encoding="utf-8")
    unrelated = tmp_path / "unrelated.yaml"
    unrelated.write_text(
        text26[: text26.index("refines:")] + text26[text26.index("\ntypes:") + 1 :],
        encoding="utf-8",
    )
    with pytest.raises(DiffError, match="different events"):
        diff_specs(v25, load(unrelated))
    v26 = load(V26)
    text = (SPECS_DIR / "reset-control@0.27.yaml").read_text(encoding="utf-8")
    start = text.index("refines:")
    end = text.index("\ntypes:")
    orphan = tmp_path / "orphan.yaml"
    orphan.write_text(text[:start] + text[end + 1 :], encoding="utf-8")
    with pytest.raises(DiffError, match="neither declares that it refines"):
        diff_specs(v26, load(orphan))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "diff", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_markdown_json_and_exit_status() -> None:
    same = cli("reset-control@0.26", "reset-control@0.26")
    assert same.returncode == 0 and "agree on all" in same.stdout
    differ = cli("reset-control@0.26", "reset-control@0.26-proposal")
    assert differ.returncode == 1
    assert "# Differences: reset-control@0.26 → reset-control@0.26-proposal" in differ.stdout
    assert "shortest trace from the initial state" in differ.stdout
    as_json = cli("reset-control@0.26", "reset-control@0.27", "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert report["differing"] == sum(g["count"] for g in report["groups"]) > 0
    refused = cli("reset-control@0.25", "handoff@0.6")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "different events" in refused.stderr
    embedded = cli("reset-control@0.25", "reset-control@0.26")
    assert embedded.returncode == 1 and "whose cases it reads" in embedded.stdout
    unknown = cli("reset-control@9", "reset-control@0.26")
    assert unknown.returncode == 2 and "unknown spec" in unknown.stderr


def test_the_generated_docs_carry_the_diff_against_published_026() -> None:
    docs = SPECS_DIR.parents[2].parent / "docs" / "reset-control"
    for version, heading in (
        ("0.26-proposal", "## Differences: reset-control@0.26 → reset-control@0.26-proposal"),
        ("0.27", "## Differences: reset-control@0.26 → reset-control@0.27"),
    ):
        text = (docs / f"{version}.md").read_text(encoding="utf-8")
        assert heading in text


def test_the_proposal_documents_the_invariants_it_restores() -> None:
    from pi_context.codegen.docs import restored_invariants

    v26 = load(V26)
    proposal = load(SPECS_DIR / "reset-control@0.26-proposal.yaml")
    text = restored_invariants(v26, proposal)
    for invariant in ("manual-fallback-ignores-automatic", "settle-keeps-spent"):
        assert f"### `{invariant}`" in text
    # the lost manual close-out: published 0.26 keeps it armed but commits nothing at settle
    section = text.split("### `manual-fallback-ignores-automatic`")[1].split("###")[0]
    assert "before_settle.disarm-keeps-request; effect none" in section
    assert restored_invariants(v26, v26) == ""  # no refinement declared
    assert restored_invariants(v26, load(SPECS_DIR / "reset-control@0.27.yaml")) == ""


def test_a_spec_with_other_events_is_compared_through_its_embedding() -> None:
    """0.26 reads 0.25's cases as its embed says: the explicit request as a tool request of
    w1, the threshold as the hard reserve, its /wipe-memory (committed at once) as w1's manual
    close-out (armed); what differs is where 0.25 keeps its request at settle and 0.26 drops an
    uncommitted tool request, and that 0.26 arms the close-out 0.25 commits."""
    v25, v26 = load(SPECS_DIR / "reset-control@0.25.yaml"), load(V26)
    d = diff_specs(v25, v26)
    assert d.enumerated is v25 and d.cases == 1192 and "embed" in d.projection
    rows = {(g.row_a, g.row_b) for g in d.groups}
    assert ("settled.end-chain", "settled.clear") in rows
    assert ("manual_reset.commit", "close_out.arm") in rows
    assert not any(g.row_a.startswith(("turn_end", "request")) for g in d.groups)
    settled = next(g for g in d.groups if g.row_b == "settled.clear")
    assert settled.example is not None
    assert settled.example.a.state == {
        "request": {"phase": "tool-requested", "windowId": "w1"},
        "overflow": "idle",
    }
    assert settled.example.b.state == {"request": {"phase": "none"}, "overflow": "idle"}
    assert settled.trace is not None and [e["type"] for e in settled.trace] == [
        "request",
        "settled",
    ]
    back = diff_specs(v26, v25)
    assert back.differing == d.differing
