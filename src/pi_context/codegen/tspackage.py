"""The TypeScript binding as a user gets it: ``npm pack`` the package, install the tarball into
an empty project (with the pinned TypeScript and the real Pi), type-check the Pi extension
example of ``docs/typescript.md`` against both, and run it under Node by package name.

``python -m pi_context.codegen.tspackage`` does it in a temporary directory (CI
runs it); the test suite calls :func:`package_check`.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from pi_context.codegen import tsbuild
from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.codegen.typescript_package import PACKAGE_NAME, TYPESCRIPT

PI_PACKAGE = "@earendil-works/pi-coding-agent@1.6.0"
DOC = SOURCE_ROOT / "docs" / "typescript.md"
EXAMPLE_HEADING = "## From a Pi extension"

# A stand-in for Pi's extension host: it registers the example's handlers and fires turn ends,
# as Pi does, then checks what the extension returned. Also imports the index by name.
_RUNNER = r"""
import assert from "node:assert/strict";
import resetControl from "./dist/extension.js";
import { SPEC_IDS, resetControl0_34 } from "PACKAGE";
import { reduceResetControl, initialResetControl } from "PACKAGE/reset-control@0.34";

const handlers = new Map();
const pi = { on(name, handler) { handlers.set(name, handler); return () => {}; } };
let hardReserve = false;
const drafts = [{ type: "custom", customType: "example/marker", data: {} }];
resetControl(pi, { hardReserveDue: () => hardReserve, resetDrafts: () => drafts });
const ctx = { hasPendingMessages: () => false, sessionManager: { getSessionId: () => "s1" } };
const turn = { type: "turn_end", entries: [], outcome: "completed" };
const results = [];
results.push(await handlers.get("turn_end")(turn, ctx));
hardReserve = true;
results.push(await handlers.get("turn_end")(turn, ctx));
assert.equal(results[0], undefined);
assert.deepEqual(results[1], { entries: drafts, continue: true });
assert.ok(SPEC_IDS.includes("reset-control@0.34"));
assert.equal(resetControl0_34.SPEC_ID, "reset-control@0.34");
assert.throws(
  () => reduceResetControl(initialResetControl(), { type: "turn_end" }),
  (err) => err.name === "ResetControlInputError" && err.path === "event.facts",
);
console.log(JSON.stringify({ ok: true, results, specs: SPEC_IDS }));
"""


def example_source(doc: Path = DOC) -> str:
    """The ```ts block under the Pi extension heading of docs/typescript.md."""
    text = doc.read_text(encoding="utf-8")
    start = text.index(EXAMPLE_HEADING)
    match = re.compile(r"```ts\n(.*?)```", re.S).search(text, start)
    if match is None:
        raise tsbuild.ToolchainUnavailable(f"{doc}: no ```ts block under {EXAMPLE_HEADING!r}")
    return match.group(1)


def package_check(work: Path) -> dict[str, object]:
    """Pack, install into ``work``/project, type-check and run the example; its report."""
    tsbuild.build()
    npm = shutil.which("npm") or "npm"
    node = shutil.which("node") or "node"
    cache = ["--cache", str(tsbuild.NPM_CACHE), "--no-audit", "--no-fund", "--loglevel=error"]
    packed = tsbuild.run_output(
        [npm, "pack", "--silent", "--pack-destination", str(work), *cache[:2]],
        "npm pack",
        cwd=tsbuild.BINDINGS,
    )
    tarball = work / packed.strip().splitlines()[-1]
    project = work / "project"
    project.mkdir(exist_ok=True)
    (project / "package.json").write_text('{"private": true, "type": "module"}\n')
    tsbuild.run_output(
        [npm, "install", "--ignore-scripts", *cache, str(tarball), f"typescript@{TYPESCRIPT}"]
        + [PI_PACKAGE],
        "npm install (the tarball, TypeScript and Pi into an empty project)",
        cwd=project,
        timeout=600,
    )
    (project / "extension.ts").write_text(example_source(), encoding="utf-8")
    (project / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2022",
                    "module": "NodeNext",
                    "moduleResolution": "NodeNext",
                    "strict": True,
                    "skipLibCheck": True,
                    "types": [],
                    "outDir": "dist",
                },
                "files": ["extension.ts"],
            }
        )
    )
    tsc = project / "node_modules" / "typescript" / "bin" / "tsc"
    tsbuild.run_output(
        [node, str(tsc), "-p", "tsconfig.json"], "tsc (the example against the package)", project
    )
    (project / "run.mjs").write_text(_RUNNER.replace("PACKAGE", PACKAGE_NAME), encoding="utf-8")
    out = tsbuild.run_output([node, "run.mjs"], "node run.mjs (the example)", project)
    report: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    report["tarball"] = tarball.name
    return report


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="pi-context-npm-") as tmp:
        try:
            report = package_check(Path(tmp))
        except tsbuild.ToolchainUnavailable as err:
            print(f"TypeScript package: {err}", file=sys.stderr)
            return 1
    print(
        f"TypeScript package: {report['tarball']} installs into an empty project, imports as "
        f"{PACKAGE_NAME} and runs the docs/typescript.md example under Node "
        f"({len(report['specs'])} specs)"  # type: ignore[arg-type]
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
