from __future__ import annotations

import pytest

from pi_context.spec.model import Spec
from pi_context.statemachine.registry import Generated, committed_specs, generated


@pytest.fixture(scope="session")
def specs() -> dict[str, Spec]:
    return {spec.id: spec for spec in committed_specs()}


@pytest.fixture(scope="session")
def gens(specs: dict[str, Spec]) -> dict[str, Generated]:
    return {spec_id: generated(spec) for spec_id, spec in specs.items()}
