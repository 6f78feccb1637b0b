"""The handoff runtime against the spec: the stateful conformance check, and its mutants."""

from __future__ import annotations

import pytest

from pi_context.conformance.handoff_runtime import MUTANTS, run_conformance


def test_the_runtime_conforms_to_the_spec() -> None:
    run_conformance(examples=80, steps=16)


@pytest.mark.parametrize("mutant", MUTANTS(), ids=lambda m: m.name)
def test_the_check_kills_each_runtime_mutant(mutant: object) -> None:
    with mutant.apply(), pytest.raises(Exception):  # type: ignore[attr-defined]  # noqa: B017
        run_conformance(examples=80, steps=16)
