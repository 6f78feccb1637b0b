"""The MCP Inspector (the reference MCP client's CLI), npm-installed at a pinned version into
the git-ignored ``.cache/`` once, as the real Pi is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_CACHE = REPO / ".cache" / "mcp-inspector"
INSPECTOR = INSPECTOR_CACHE / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="session")
def mcp_inspector(npm_install: Callable[[str, Path, Path], Path]) -> Path:
    """The pinned ``mcp-inspector`` executable (installing it on first use)."""
    return npm_install(INSPECTOR_PACKAGE, INSPECTOR_CACHE, INSPECTOR)
