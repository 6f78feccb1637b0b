"""The real Pi for the integration tests, from the session binding's fixtures (not duplicated)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SESSION_CONFTEST = Path(__file__).resolve().parents[1] / "session" / "conftest.py"
_spec = importlib.util.spec_from_file_location(
    "_session_conftest_for_integrations", _SESSION_CONFTEST
)
assert _spec is not None and _spec.loader is not None
_session_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_session_conftest)

pi_session_manager = _session_conftest.pi_session_manager
run_pi = _session_conftest.run_pi
