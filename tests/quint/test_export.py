"""The Quint export without Quint: committed and current, complete, total over the spec
model (a construct it does not know is refused by name), and exact about absent fields."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pi_context.codegen import quint_names
from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.codegen.quint import _Module, quint_module, quint_outputs
from pi_context.codegen.quint_names import ExportError, qname, set_name, type_name
from pi_context.spec import expr as ex
from pi_context.spec.model import FairEvent, ProgressProperty, Spec, StateInvariant


def test_the_committed_modules_are_current(specs: dict[str, Spec]) -> None:
    files = quint_outputs(list(specs.values()))
    assert len(files) == len(specs)
    for rel, content in files.items():
        path = SOURCE_ROOT / rel
        assert path.is_file(), f"{rel} is missing: run `pi-context generate`"
        assert path.read_text(encoding="utf-8") == content, f"{rel} is stale: run generate"


def _plain(text: str) -> str:
    """Comment lines joined back into one text, so a wrapped why can be found whole."""
    lines = [line.strip()[3:] for line in text.splitlines() if line.strip().startswith("// ")]
    return " ".join(" ".join(lines).split())


@pytest.mark.parametrize("spec_id", ["reset-control@0.34", "handoff@0.6", "reset-control@0.25"])
def test_each_module_carries_the_whole_spec(specs: dict[str, Spec], spec_id: str) -> None:
    spec = specs[spec_id]
    text = quint_module(spec)
    comments = _plain(text)
    assert text.startswith(f"// {spec.id}: ") and f"module {spec.module_name} {{" in text
    for axis in spec.axes:
        assert f"  var {qname(axis.name)}: {type_name(axis.name)}\n" in text
        assert " ".join(axis.why.split()) in comments
    for event in spec.events:
        assert f"  action on_{qname(event.name)} = {{" in text
        assert f"  pure def step_{qname(event.name)}(s: State, e: Event): Step =" in text
        for f in (*event.fields, *event.facts):
            assert re.search(rf"nondet (field|fact)_{qname(f.name)} = \S+\.oneOf\(\)", text)
    for row in spec.rows:
        assert f'row: "{row.id}" }}' in text, row.id
        assert " ".join(f"{row.id}: {row.why}".split()) in comments, row.id
    for inv in spec.state_invariants:
        assert f"  val {qname(inv.id)} = " in text and " ".join(inv.why.split()) in comments
    for tinv in spec.transition_invariants:
        events = ", ".join(f'"{e}"' for e in tinv.events)
        assert f"  val {qname(tinv.id)} =\n    (event.kind.in(Set({events}))" in text
        assert " ".join(tinv.why.split()) in comments
    for prop in spec.traces:
        assert f'  val trace_{qname(prop.id)} = monitor_{qname(prop.id)} != "violation"' in text
    for effect in spec.effects:
        assert f'effect: "{effect.name}"' in text or not any(
            r.effect == effect.name for r in spec.rows
        )
    assert quint_module(spec) == text  # deterministic


def test_names_become_quint_identifiers() -> None:
    assert qname("type") == "type_" and qname("val") == "val_"
    assert qname("pending-spent") == "pending_spent" and qname("3d") == "n_3d"
    assert type_name("toolSource") == "ToolSource" and set_name("toolSource") == "TOOL_SOURCE"


def test_a_name_collision_is_refused_by_name(specs: dict[str, Spec]) -> None:
    spec = specs["reset-control@0.34"]
    first = spec.state_invariants[0]
    clash = dataclasses.replace(first, id="post")  # the module's own name for the state
    broken = dataclasses.replace(spec, state_invariants=(clash,))
    with pytest.raises(ExportError, match="invariant post and the current state both become"):
        quint_module(broken)


def test_a_construct_the_export_does_not_know_is_refused(
    specs: dict[str, Spec], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spec-language field the export was not taught: here trace properties, forgotten.
    known = dict(quint_names._KNOWN)
    known[Spec] = known[Spec] - {"traces"}
    monkeypatch.setattr(quint_names, "_KNOWN", known)
    with pytest.raises(ExportError, match=r"handoff@0\.6 uses Spec\.traces, which the Quint"):
        quint_module(specs["handoff@0.6"])
    spec = specs["reset-control@0.25"]
    quint_module(dataclasses.replace(spec, traces=()))  # none in use: nothing unknown exported


def test_a_new_kind_of_spec_part_is_refused(specs: dict[str, Spec]) -> None:
    @dataclasses.dataclass(frozen=True)
    class Weighted(StateInvariant):  # a part of the language the export was not taught
        weight: int = 0

    spec = specs["reset-control@0.34"]
    inv = spec.state_invariants[0]
    odd = Weighted(inv.id, inv.expr, inv.text, inv.why, inv.loc, weight=3)
    with pytest.raises(ExportError, match=r"uses Weighted\.weight, which the Quint export"):
        quint_module(dataclasses.replace(spec, state_invariants=(odd,)))
    plain = Weighted(inv.id, inv.expr, inv.text, inv.why, inv.loc)  # the new field unused
    assert quint_module(dataclasses.replace(spec, state_invariants=(plain,)))


def progress_spec(spec: Spec) -> Spec:
    """``spec`` with one progress property: a stop intent leads to no request."""

    when = ex.Cmp("==", _ref("request", "phase"), ex.Lit("stop-pending", 0), 0)
    goal = ex.Cmp("==", _ref("request", "phase"), ex.Lit("none", 0), 0)
    prop = ProgressProperty(
        "stop-intent-ends", when, "request.phase == 'stop-pending'", goal,
        "request.phase == 'none'", (FairEvent("settled", None, ""),),
        "A settle ends every stop intent.", spec.rows[0].loc,
    )  # fmt: skip
    return dataclasses.replace(spec, progress=(prop,))


def _ref(axis: str, member: str | None = None) -> ex.Ref:
    return ex.Ref((axis,), 0, ex.Target("axis", "cur", axis, member))


def test_progress_properties_become_temporal_definitions(specs: dict[str, Spec]) -> None:
    text = quint_module(progress_spec(specs["reset-control@0.34"]))
    assert (
        '  temporal progress_stop_intent_ends = always((request.phase == "stop-pending") '
        'implies eventually(request.phase == "none"))'
    ) in text
    assert "  // assuming weak fairness on: settled" in text
    assert "  // progress property: A settle ends every stop intent." in text


def _cmp(op: str, left: ex.Target, right: ex.Target | str) -> ex.Cmp:
    rhs: ex.Expr = ex.Lit(right, 0) if isinstance(right, str) else ex.Ref((), 0, right)
    return ex.Cmp(op, ex.Ref((), 0, left), rhs, 0)  # type: ignore[arg-type]


def test_absent_fields_compare_as_the_spec_says(specs: dict[str, Spec]) -> None:
    """A field a variant lacks holds "" in Quint; "" never equals a value, so a comparison
    with one possibly-absent side is exact as is, and one of two is guarded by presence
    (absent == absent is false, absent != absent true, in the spec language)."""
    module = _Module(specs["reset-control@0.34"])
    compile_transition = module.compiler("transition")
    pre = ex.Target("axis", "pre", "request", "windowId")
    post = ex.Target("axis", "post", "request", "windowId")
    fact = ex.Target("fact", name="windowId")
    one = compile_transition(_cmp("==", pre, fact))
    assert one == "pre.request.windowId == event.facts.windowId"
    carriers = 'Set("stop-pending", "close-out", "tool-requested")'
    both_eq = compile_transition(_cmp("==", pre, post))
    assert both_eq == (
        f"pre.request.phase.in({carriers}) and request.phase.in({carriers}) and "
        "pre.request.windowId == request.windowId"
    )
    both_ne = compile_transition(_cmp("!=", pre, post))
    assert both_ne == (
        f"(not(pre.request.phase.in({carriers}) and request.phase.in({carriers})) or "
        "pre.request.windowId != request.windowId)"
    )
    assert compile_transition(_cmp("==", pre, "manual")) == 'pre.request.windowId == "manual"'


def test_an_events_trigger_is_a_comment(specs: dict[str, Spec]) -> None:
    """What a host calls the tool or command that raises an event (``Event.trigger``) is
    commentary: the module says it, and its code is the same without it."""
    spec = specs["reset-control@0.34"]
    triggers = ["/clear-memory", "clear_memory"] + [""] * (len(spec.events) - 2)
    events = tuple(
        dataclasses.replace(e, trigger=t) for e, t in zip(spec.events, triggers, strict=True)
    )
    text = quint_module(dataclasses.replace(spec, events=events))
    assert "(raised by the command /clear-memory)" in _plain(text)
    assert "(raised by the tool clear_memory)" in _plain(text)

    def code(module: str) -> list[str]:
        return [line for line in module.splitlines() if not line.strip().startswith("//")]

    bare = tuple(dataclasses.replace(e, trigger="") for e in spec.events)
    assert code(text) == code(quint_module(dataclasses.replace(spec, events=bare)))
