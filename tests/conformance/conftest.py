"""Fixtures for the conformance tests: implementation commands and the TypeScript build."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_context.codegen import tsbuild
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import resolve_spec

HERE = Path(__file__).parent
PYTHON = shlex.quote(sys.executable)
SERVE = f"{PYTHON} -m pi_context serve"


def broken(mode: str) -> str:
    """The command of one deliberately broken implementation (tests/conformance/fixtures)."""
    return f"{PYTHON} {shlex.quote(str(HERE / 'fixtures' / 'impl.py'))} {mode}"


@pytest.fixture(scope="session")
def serve_cmd() -> str:
    """The reference server, started with this interpreter."""
    return SERVE


@pytest.fixture(scope="session")
def broken_cmd() -> Callable[[str], str]:
    """``broken_cmd(mode)``: the command of a deliberately broken implementation."""
    return broken


@pytest.fixture(scope="session")
def spec25() -> Spec:
    return resolve_spec("reset-control@0.25")


@pytest.fixture(scope="session")
def spec26() -> Spec:
    return resolve_spec("reset-control@0.26")


@pytest.fixture(scope="session")
def ts_adapter() -> str:
    """Install the pinned TypeScript, type-check and build the binding; the adapter command.

    Skips only when node or npm is not installed; a failing install or type-check fails.
    """
    missing = tsbuild.missing_tools()
    if missing:
        pytest.skip(f"the TypeScript binding needs {' and '.join(missing)}, not installed here")
    try:
        return tsbuild.build()
    except tsbuild.ToolchainUnavailable as err:
        pytest.fail(f"TypeScript binding: {err}")
