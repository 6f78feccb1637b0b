"""The one handle a host imports (``reset_control``) and its one discovery rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_context.codegen import fresh
from pi_context.spec import interpret, spec_path
from pi_context.spec.abstraction import all_events, all_states
from pi_context.spec.errors import SpecError
from pi_context.statemachine import reset_control as handle
from pi_context.statemachine.reset_control import (
    COMMITTED,
    FRESH,
    NotGenerated,
    reset_control,
    spec_ids,
)


def test_a_committed_id_is_found_without_parsing_its_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that names a committed spec pays a file hash, not a YAML parse: the spec is
    loaded only when something asks for it."""
    loads: list[object] = []

    def counting_load(path: object, **_: object) -> object:
        loads.append(path)
        raise SpecError([])

    monkeypatch.setattr(handle, "_cache", {})
    monkeypatch.setattr(handle, "load", counting_load)
    core = reset_control("reset-control@0.26")
    assert core.origin == COMMITTED and core.id == "reset-control@0.26" and loads == []
    core.step(core.initial_state(), core.event("clear"))
    assert loads == []
    with pytest.raises(SpecError):
        _ = core.spec
    assert loads == [spec_path("reset-control@0.26")]


def test_the_same_spec_gives_the_same_handle(tmp_path: Path) -> None:
    by_id = reset_control("reset-control@0.27")
    copy = tmp_path / "copy.yaml"
    copy.write_bytes(spec_path("reset-control@0.27").read_bytes())
    assert reset_control(copy) is by_id
    assert reset_control(by_id.spec) is by_id


def test_an_edited_spec_never_runs_stale_code(tmp_path: Path) -> None:
    """Same id, other bytes: the committed package is not used. The handle says there is no
    code for these bytes (it generates nothing); the generator's ``fresh.reset_control``
    generates code for this process, which decides what the edited spec says."""
    text = spec_path("reset-control@0.26").read_text(encoding="utf-8")
    old = "    effect: recover-overflow\n    cause: overflow recovery\n"
    assert text.count(old) == 1
    edited = tmp_path / "reset-control@0.26.yaml"
    # a row that commits nothing states no cause: both lines go
    edited.write_text(text.replace(old, "    effect: none\n"), encoding="utf-8")
    with pytest.raises(NotGenerated, match=r"'reset-control@0\.26'.*pi-context generate"):
        reset_control(edited)
    core = fresh.reset_control(edited)
    assert core.id == "reset-control@0.26" and core.origin == FRESH
    assert fresh.reset_control(edited) is core  # the same bytes, the same code
    assert fresh.reset_control("reset-control@0.26") is reset_control("reset-control@0.26")
    assert core.sha256 != reset_control("reset-control@0.26").sha256
    spec = core.spec
    for wire_state in all_states(spec):
        for wire_event in all_events(spec):
            want = interpret.step(spec, wire_state, wire_event)
            got = core.step(core.state_from_wire(wire_state), core.event_from_wire(wire_event))
            assert (core.state_to_wire(got[0]), got[1], got[2]) == (
                want.state,
                want.effect,
                want.row,
            )
    assert "recover-overflow" not in {
        interpret.step(spec, s, e).effect for s in all_states(spec) for e in all_events(spec)
    }


def test_events_by_name_and_host_actions() -> None:
    core = reset_control("reset-control@0.27")
    assert core.accepts("close_out") and not core.accepts("request")
    event = core.event("close_out", window_id="w1", source="manual")
    assert core.event_to_wire(event) == {"type": "close_out", "windowId": "w1", "source": "manual"}
    with pytest.raises(ValueError, match=r"reset-control@0\.27 has no event 'request'"):
        core.event("request")
    assert core.host("commit-boundary-stop") == "commit-stop"
    assert core.undeclared_hosts() == []
    assert core.lazy_order["turn_end"] == ("queued", "automaticResetEnabled", "hardReserveDue")
    state, effect, _row = core.step(core.initial_state(), event)
    assert effect == "close-out-armed" and core.request_wire(state)["windowId"] == "w1"


def test_an_undeclared_host_action_is_named() -> None:
    core = reset_control("handoff@0.6")
    assert "read-source" in core.undeclared_hosts()
    with pytest.raises(ValueError, match="handoff@0.6 declares no host action for effect"):
        core.host("read-source")


def test_spec_ids_are_the_committed_reset_control_specs() -> None:
    ids = spec_ids()
    assert "reset-control@0.27" in ids and "handoff@0.6" not in ids
    assert [reset_control(i).id for i in ids] == ids
    assert all(reset_control(i).origin == COMMITTED for i in ids)
