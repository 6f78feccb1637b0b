"""Build the generated TypeScript binding with the pinned toolchain.

``npm ci`` installs the version pinned by ``bindings-ts/package-lock.json`` into
``.cache/bindings-ts`` (git-ignored; reinstalled only when the lock changes), then ``tsc``
type-checks ``bindings-ts/generated`` under the strict ``bindings-ts/tsconfig.json`` and emits
``bindings-ts/dist`` for the Node adapter. From a shell:
``python -m pi_context.codegen.tsbuild``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from pi_context.codegen.outputs import SOURCE_ROOT

BINDINGS = SOURCE_ROOT / "bindings-ts"
CACHE = SOURCE_ROOT / ".cache" / "bindings-ts"
NPM_CACHE = SOURCE_ROOT / ".cache" / "npm"
ADAPTER_COMMAND = f"node {BINDINGS / 'adapter.mjs'}"


class ToolchainUnavailable(Exception):
    """Node or npm is not installed, or the install/type-check failed; says which."""


def missing_tools() -> list[str]:
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def run_output(args: list[str], what: str, cwd: Path, timeout: float = 300) -> str:
    """Run ``args`` in ``cwd``; its standard output, or ToolchainUnavailable saying why not."""
    try:
        done = subprocess.run(
            args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise ToolchainUnavailable(f"{what} took longer than {timeout:g}s") from None
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()
        raise ToolchainUnavailable(f"{what} failed (status {done.returncode}):\n{output}")
    return done.stdout


def npm_install(pins: Path, cache: Path, entry: str, what: str) -> Path:
    """``cache / entry`` of the npm packages ``pins/package-lock.json`` pins, installed with
    ``npm ci`` into ``cache`` when the pins changed since the last install (a stamp in
    ``cache`` records their SHA-256)."""
    missing = missing_tools()
    if missing:
        raise ToolchainUnavailable(f"not installed: {', '.join(missing)}")
    package, lock = (pins / "package.json").read_bytes(), (pins / "package-lock.json").read_bytes()
    digest = hashlib.sha256(package + lock).hexdigest()
    stamp = cache / ".lock-sha256"
    found = cache / entry
    if not (found.is_file() and stamp.is_file() and stamp.read_text() == digest):
        cache.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(pins / name, cache / name)
        npm = shutil.which("npm") or "npm"
        run_output(
            [npm, "ci", "--prefix", str(cache), "--cache", str(NPM_CACHE)]
            + ["--no-audit", "--no-fund", "--loglevel=error"],
            f"npm ci ({what})",
            cwd=cache,
            timeout=300,
        )
        stamp.write_text(digest)
    return found


def install() -> Path:
    """The pinned ``tsc`` (installing it if the lock changed)."""
    return npm_install(
        BINDINGS, CACHE, "node_modules/typescript/bin/tsc", "pinned TypeScript toolchain"
    )


def build() -> str:
    """Type-check and compile the generated modules; the adapter command to run."""
    tsc = install()
    node = shutil.which("node") or "node"
    run_output(
        [node, str(tsc), "-p", str(BINDINGS / "tsconfig.json")],
        "tsc (type-check of bindings-ts/generated)",
        cwd=BINDINGS,
        timeout=300,
    )
    return ADAPTER_COMMAND


def main() -> int:
    try:
        command = build()
    except ToolchainUnavailable as err:
        print(f"TypeScript binding: {err}", file=sys.stderr)
        return 1
    print(f"TypeScript binding type-checked and built; adapter: {command}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
