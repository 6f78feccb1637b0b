"""The MCP Inspector (the reference MCP client's CLI), npm-installed at a pinned version into
the git-ignored ``.cache/`` once, as the real Pi is."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_CACHE = REPO / ".cache" / "mcp-inspector"
INSPECTOR = INSPECTOR_CACHE / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="session")
def mcp_inspector() -> Path:
    """The pinned ``mcp-inspector`` executable (installing it on first use)."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node/npm not installed: cannot run the MCP Inspector")
    version = INSPECTOR_CACHE / ".installed"
    if not (INSPECTOR.exists() and version.is_file() and version.read_text() == INSPECTOR_PACKAGE):
        INSPECTOR_CACHE.mkdir(parents=True, exist_ok=True)
        manifest = INSPECTOR_CACHE / "package.json"
        if not manifest.exists():
            manifest.write_text('{"name": "mcp-inspector-cache", "private": true}\n')
        print(f"installing {INSPECTOR_PACKAGE} into {INSPECTOR_CACHE} ...", file=sys.stderr)
        result = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
             INSPECTOR_PACKAGE],
            cwd=INSPECTOR_CACHE, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if result.returncode != 0 or not INSPECTOR.exists():
            pytest.fail(
                f"npm install {INSPECTOR_PACKAGE} failed:\n{result.stdout}\n{result.stderr}"
            )
        version.write_text(INSPECTOR_PACKAGE)
    return INSPECTOR
