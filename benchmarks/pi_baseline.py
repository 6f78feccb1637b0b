"""The real Pi as a benchmark baseline: installed on demand, timed in a fresh Node process.

``pi_open(path)`` runs ``SessionManager.open`` + ``getBranch`` + ``buildSessionContext`` once in
a new ``node`` process and returns its own timing (ms, process start excluded), the process's
peak RSS (MiB) and the sizes it computed, so both sides can be checked to agree.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PI_CACHE = REPO / ".cache" / "pi-npm"
PI_PACKAGE = "@earendil-works/pi-coding-agent@1.6.0"
SESSION_MANAGER = (
    PI_CACHE / "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
)

NODE_SCRIPT = r"""
const { SessionManager } = await import(process.argv[2]);
const file = process.argv[3];
const t0 = performance.now();
const sm = SessionManager.open(file);
const branch = sm.getBranch();
const ctx = sm.buildSessionContext();
const ms = performance.now() - t0;
console.log(JSON.stringify({ ms, branch: branch.length, messages: ctx.messages.length,
  rss_mb: process.resourceUsage().maxRSS / 1024 }));
"""


def ensure_pi() -> Path | None:
    """Pi's session-manager.js, npm-installing Pi into ``.cache/pi-npm`` the first time."""
    if SESSION_MANAGER.exists():
        return SESSION_MANAGER
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    print(f"installing {PI_PACKAGE} into {PI_CACHE} ...", file=sys.stderr, flush=True)
    PI_CACHE.mkdir(parents=True, exist_ok=True)
    if not (PI_CACHE / "package.json").exists():
        (PI_CACHE / "package.json").write_text('{"name": "pi-npm-cache", "private": true}\n')
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", PI_PACKAGE],
        cwd=PI_CACHE,
        check=True,
    )
    return SESSION_MANAGER


def pi_open(path: Path, module: Path) -> dict[str, Any]:
    """One fresh-process run of Pi's open + branch + context on ``path``."""
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as handle:
        handle.write(NODE_SCRIPT)
        script = handle.name
    try:
        done = subprocess.run(
            ["node", "--max-old-space-size=16384", script, module.as_uri(), str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        Path(script).unlink()
    data: dict[str, Any] = json.loads(done.stdout)
    return data
