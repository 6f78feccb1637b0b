"""Fixtures for the interop suite: the pinned real Pi (from the session tests) and a fresh
layout of the extension's files per test (``extension_layout.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .extension_layout import Layout, lay_out

_SESSION_CONFTEST = Path(__file__).resolve().parents[1] / "session" / "conftest.py"
_spec = importlib.util.spec_from_file_location("_session_conftest_for_interop", _SESSION_CONFTEST)
assert _spec is not None and _spec.loader is not None
_session_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session_conftest)

# Re-exported fixtures: the npm install of the pinned Pi and its batch driver.
pi_session_manager = _session_conftest.pi_session_manager
run_pi = _session_conftest.run_pi


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No variable of the real host leaks in: the extension's identity is the default one."""
    monkeypatch.delenv("PI_NOTES_AGENT", raising=False)
    monkeypatch.setenv("PI_NOTES_HOME", str(tmp_path / "notes"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent").mkdir()
    return tmp_path


@pytest.fixture
def layout(isolated: Path, pi_session_manager: Path) -> Layout:
    """Sessions and a notes tree under a temp dir, written as the extension writes them."""
    return lay_out(isolated, pi_session_manager)
