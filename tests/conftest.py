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
import subprocess
import sys
import tempfile
from collections.abc import Callable
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


NpmInstall = Callable[[str, Path, Path], Path]


def _npm_install(package: str, folder: Path, wanted: Path) -> Path:
    """``package`` (``name@version``) npm-installed into ``folder`` once; ``wanted`` (a file
    the install provides) is returned. Skips where Node or npm is absent; a failed install
    fails. A stamp records the package, so a new pin reinstalls."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip(f"node/npm not installed: cannot run {package}")
    stamp = folder / ".installed"
    if wanted.exists() and (not stamp.exists() or stamp.read_text() == package):
        return wanted
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text(f'{{"name": "{folder.name}-cache", "private": true}}\n')
    print(f"installing {package} into {folder} ...", file=sys.stderr)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
         package],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0 or not wanted.exists():
        pytest.fail(f"npm install {package} failed:\n{done.stdout}\n{done.stderr}")
    stamp.write_text(package)
    return wanted


@pytest.fixture(scope="session")
def npm_install() -> NpmInstall:
    """``npm_install(package, folder, wanted)``: a pinned npm package in the git-ignored
    ``.cache/`` (the real Pi, the MCP Inspector)."""
    return _npm_install
