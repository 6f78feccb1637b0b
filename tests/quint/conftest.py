"""Fixtures of the Quint tests: the committed specs, and the pinned Quint CLI (installed into
the git-ignored .cache/quint; the tests that need it skip only where Node or npm is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_context.checks import quintcheck
from pi_context.codegen.tsbuild import ToolchainUnavailable, missing_tools
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs


@pytest.fixture(scope="session")
def specs() -> dict[str, Spec]:
    return {spec.id: spec for spec in committed_specs()}


@pytest.fixture(scope="session")
def quint_cli() -> Path:
    """The pinned Quint CLI script; skips only when node or npm is not installed."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"the Quint CLI needs {' and '.join(missing)}, not installed here")
    try:
        return quintcheck.install()
    except ToolchainUnavailable as err:
        pytest.fail(f"Quint CLI: {err}")
