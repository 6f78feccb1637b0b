"""The runtime's facts come from the specs: ``statemachine/host_facts.py`` is generated from
every committed reset-control spec's fact declarations, and the type checker names the place
that must change when a spec and the runtime disagree.

* each spec's facts are read by the generated classes under the spec's own names, from the
  host fact the spec declares (``host:``, as 0.25's ``thresholdDue`` reads
  ``hard_reserve_due``), and the runtime records the lazy reads by those host names;
* ``mypy --strict`` over the runtime, with the generated module regenerated from specs that
  gained a fact, fails at the runtime call that does not supply it (naming the fact);
  with a generated fact renamed or removed, it fails naming the fact and the spec whose
  reducer reads it;
* two specs that read one host fact with different types stop the generator with the spec's
  ``file:line``.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pi_context.codegen.host_facts import PATH, host_class, host_facts_module
from pi_context.spec import SpecError, load, spec_paths
from pi_context.spec.expr import snake
from pi_context.spec.model import BOOL, Field, IdType, Spec
from pi_context.statemachine import host_facts

from .conftest import run_mypy

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / "src/pi_context/bindings/runtime/runtime.py"
GENERATED = REPO / PATH


TURN_END: dict[str, Any] = {
    "window_id": "w1",
    "aborted": False,
    "overflow": False,
    "failed": False,
    "enabled": True,
    "queued": False,
    "automatic_reset_enabled": True,
    "hard_reserve_due": False,
}


def _specs() -> list[Spec]:
    return [load(p) for p in spec_paths()]


def _reset_control() -> list[Spec]:
    return [s for s in _specs() if s.name == "reset-control"]


def test_each_spec_reads_its_facts_from_the_host_facts_it_declares() -> None:
    for spec in _reset_control():
        for event in spec.events:
            if not event.facts:
                continue
            cls = host_facts.EVENT_FACTS[event.name]  # type: ignore[index]
            assert cls.__name__ == host_class(event.name)
            parameters = list(inspect.signature(cls).parameters.values())
            assert all(p.kind is p.KEYWORD_ONLY and p.default is p.empty for p in parameters)
            # distinct values, so a fact read from the wrong host fact shows
            values = {p.name: f"value of {p.name}" for p in parameters}
            facts = cls(**values)
            facts.watch(host_facts.LAZY[spec.id].get(event.name, ()))  # type: ignore[call-overload]
            for f in event.facts:
                assert f.host_fact in values, (spec.id, event.name, f.name)
                assert getattr(facts, snake(f.name)) == values[f.host_fact], (spec.id, f.name)
            lazy = {f.name: f.host_fact for f in event.facts if f.lazy}
            assert sorted(facts.consulted) == sorted(lazy.values()), (spec.id, event.name)


def test_0_25_reads_hard_reserve_due_as_threshold_due() -> None:
    facts = host_facts.TurnEndHostFacts(**{**TURN_END, "hard_reserve_due": lambda: True})
    facts.watch(host_facts.LAZY["reset-control@0.25"]["turn_end"])
    assert facts.threshold_due is True
    assert facts.hard_reserve_due is True
    assert facts.consulted == ["hard_reserve_due"], "read once, recorded by its host name"


def test_a_lazy_fact_is_computed_once_and_only_when_read() -> None:
    calls: list[str] = []

    def queued() -> bool:
        calls.append("queued")
        return True

    facts = host_facts.TurnEndHostFacts(**{**TURN_END, "queued": queued})
    assert calls == []
    assert facts.queued and facts.queued
    assert calls == ["queued"]


# --- the type checker names the place that must change ---------------------------------------


def _with_fact(spec: Spec, event_name: str, fact: Field) -> Spec:
    """``spec`` whose event ``event_name`` declares one more fact."""
    events = tuple(
        replace(
            e,
            facts=(*e.facts, fact),
            lazy_order=(*e.lazy_order, fact.name) if fact.lazy else e.lazy_order,
        )
        if e.name == event_name
        else e
        for e in spec.events
    )
    return replace(spec, events=events)


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy_with(generated: str, tmp_path: Path, cache: Path) -> str:
    """``mypy --strict`` over the runtime and the generated module, the generated module's
    text replaced by ``generated`` (the committed files stay as they are)."""
    shadow = tmp_path / "host_facts.py"
    shadow.write_text(generated, encoding="utf-8")
    options = ("--shadow-file", str(GENERATED), str(shadow))
    done = run_mypy(RUNTIME, cache, GENERATED, options=options)
    return done.stdout + done.stderr


def test_the_committed_module_type_checks(tmp_path: Path, mypy_cache: Path) -> None:
    assert _mypy_with(GENERATED.read_text(encoding="utf-8"), tmp_path, mypy_cache) == ""


def test_a_fact_a_spec_gains_is_named_at_the_runtime_call(tmp_path: Path, mypy_cache: Path) -> None:
    specs = _specs()
    newest = max(range(len(specs)), key=lambda i: specs[i].id == "reset-control@a508f68")
    fact = Field("followUpDue", BOOL, "A follow-up prompt waits.", lazy=True)
    specs[newest] = _with_fact(specs[newest], "turn_end", fact)
    out = _mypy_with(host_facts_module(specs), tmp_path, mypy_cache)
    assert "runtime.py:" in out, out  # the runtime call that must change
    assert 'Missing named argument "follow_up_due" for "TurnEndHostFacts"' in out, out


def test_a_fact_renamed_in_the_generated_module_is_named(tmp_path: Path, mypy_cache: Path) -> None:
    text = GENERATED.read_text(encoding="utf-8")
    renamed = text.replace("    threshold_due = Fact[bool](", "    threshold_dew = Fact[bool](", 1)
    assert renamed != text
    out = _mypy_with(renamed, tmp_path, mypy_cache)
    assert '"TurnEndHostFacts" is missing following "TurnEndFactsView" protocol member' in out
    assert "threshold_due" in out.split("protocol member", 1)[1], out
    assert "reset_control_0_25.TurnEndFactsView" in text  # the check that names the spec


def test_a_host_fact_dropped_from_the_generated_module_is_named(
    tmp_path: Path, mypy_cache: Path
) -> None:
    text = GENERATED.read_text(encoding="utf-8")
    dropped = text.replace("        committed: bool | Lazy,\n", "", 1)
    assert dropped != text
    out = _mypy_with(dropped, tmp_path, mypy_cache)
    assert "runtime.py:" in out, out  # the runtime call that must change
    assert 'Unexpected keyword argument "committed" for "ProviderContextHostFacts"' in out, out


def test_two_types_for_one_host_fact_stop_the_generator() -> None:
    specs = _reset_control()
    first = specs[0]
    window = next(t for t in specs[-1].types if isinstance(t, IdType))
    clash = Field("waiting", window, "A window waits.", host="queued")
    with pytest.raises(SpecError) as info:
        host_facts_module([first, _with_fact(specs[-1], "turn_end", replace(clash, lazy=False))])
    message = str(info.value)
    assert "turn_end.waiting reads the host fact 'queued' as str" in message
    assert f"which {first.id} reads as bool" in message
