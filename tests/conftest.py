"""The whole suite runs with caches and homes of its own, never the user's.

Set before any test module is imported, and inherited by every subprocess a test starts:
pi-context's cache (history indexes, notes caches, hypothesis files of the commands), the XDG
folders, Pi's agent folder and the notes root (defaults for tests that do not choose their
own), npm's cache and logs (the real Pi and the pinned toolchains are installed into the
git-ignored ``.cache/`` of the checkout, their downloads cached there too) and the MCP
Inspector's catalog. ``HOME=$(mktemp -d) pytest`` therefore leaves that home empty (CI checks
it); the temporary folder is removed when the run ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRATCH = Path(tempfile.mkdtemp(prefix="pi-context-tests-"))

ISOLATED: dict[str, str] = {
    "PI_CONTEXT_CACHE_DIR": str(SCRATCH / "cache"),
    "XDG_CACHE_HOME": str(SCRATCH / "xdg" / "cache"),
    "XDG_CONFIG_HOME": str(SCRATCH / "xdg" / "config"),
    "XDG_DATA_HOME": str(SCRATCH / "xdg" / "data"),
    "XDG_STATE_HOME": str(SCRATCH / "xdg" / "state"),
    "PI_CODING_AGENT_DIR": str(SCRATCH / "pi-agent"),
    "PI_NOTES_HOME": str(SCRATCH / "notes"),
    "npm_config_cache": str(REPO / ".cache" / "npm"),
    "npm_config_update_notifier": "false",
    "MCP_CATALOG_PATH": str(SCRATCH / "mcp-inspector" / "mcp.json"),
}
os.environ.update(ISOLATED)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
