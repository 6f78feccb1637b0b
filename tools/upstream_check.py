"""Check a spec against the published reducer it reproduces, outside this repository.

Upstream code is never committed here. A reviewer saves the published files themselves (the
exact steps are in docs/reset-control/upstream.md), then:

    python tools/upstream_check.py adapter --source lifecycle.ts --spec reset-control@0.34 \\
        --out /tmp/upstream-249d30eb
    python tools/upstream_check.py tests --source reset-lifecycle.test.ts \\
        --spec reset-control@0.34 --out /tmp/upstream-tests-249d30eb

``adapter`` cuts the pure reducer (its types, ``initialResetControl`` and
``reduceResetControl``; the Pi wiring after it needs Pi) out of the saved ``lifecycle.ts``,
type-checks it strictly and transpiles it with the TypeScript pinned by
``bindings-ts/package-lock.json`` (installed from npm into ``--out``), then runs
``pi-context conformance`` against this repository's adapter serving it.

``tests`` cuts upstream's pure reducer tests (every ``test("reset-control: ...")`` and the
fact helpers they use) out of the saved test file, points their import at the packed binding
of this repository (``npm pack``, installed into ``--out``), type-checks them with upstream's
type names and runs them under ``node --test``.

The only network use is npm installing packages by name. Nothing is written inside the
repository; ``--out`` must lie outside it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDINGS = ROOT / "bindings-ts"
# The pure part opens at the first exported Reset* type (``ResetRequestPhase`` in 0.25.1,
# ``ResetRequestSource`` from 0.26.0 on) and ends before the doc comment of the Pi wiring.
PURE_START = re.compile(r"^export (?:type|interface) Reset[A-Za-z]*\b", re.M)
PURE_END = "export function registerResetLifecycle"
TSBUILD = "pi_context.codegen.tsbuild"


class CheckError(Exception):
    """Something the reviewer must fix (a wrong file, a missing tool); the message says what."""


def _pinned_typescript() -> str:
    lock = json.loads((BINDINGS / "package-lock.json").read_text(encoding="utf-8"))
    return str(lock["packages"]["node_modules/typescript"]["version"])


def _outside(out: Path) -> Path:
    out = out.resolve()
    if out == ROOT or ROOT in out.parents:
        raise CheckError(f"--out {out} is inside the repository; upstream code stays outside it")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _run(args: list[str], cwd: Path, what: str) -> str:
    print(f"$ {' '.join(args)}", file=sys.stderr)
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CheckError(f"{what} failed (status {done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def _npm_install(out: Path, packages: list[str]) -> None:
    if not (out / "package.json").is_file():
        (out / "package.json").write_text('{"private": true, "type": "module"}\n')
    npm = shutil.which("npm") or "npm"
    _run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *packages], out, "npm")


def pure_reducer(source: str) -> str:
    """The pure part of a published ``lifecycle.ts``: from its first exported type up to the
    comment that opens ``registerResetLifecycle``."""
    found = PURE_START.search(source)
    end = source.find(PURE_END)
    if found is None or end < 0 or end < found.start():
        raise CheckError(
            f"the source has no 'export type Reset…' … {PURE_END!r} section; "
            "is it src/pi/reset/lifecycle.ts (or src/context/reset-lifecycle.ts)?"
        )
    start = found.start()
    if "export function reduceResetControl" not in source[start:end]:
        raise CheckError("the cut section holds no 'export function reduceResetControl'")
    doc = source.rfind("/**", start, end)
    return source[start : doc if doc > 0 else end].rstrip() + "\n"


def pure_tests(source: str, module: str) -> tuple[str, int]:
    """Upstream's pure reducer tests and their fact helpers, importing from ``module``."""
    helpers = [
        _block(source, f"function {name}(") for name in ("turnEndFacts", "beforeSettleFacts")
    ]
    tests = [
        _block(source, "", at=m.start())
        for m in re.finditer(r'^test\("reset-control:', source, re.M)
    ]
    if not tests:
        raise CheckError('the test file has no test("reset-control: ...") blocks')
    names = sorted(
        set(
            re.findall(
                r"\b(Reset[A-Za-z]+|initialResetControl|reduceResetControl)\b",
                "\n".join(helpers + tests),
            )
        )
    )
    types = [n for n in names if n.startswith("Reset")]
    values = [n for n in names if not n.startswith("Reset")]
    imports = ", ".join(values + [f"type {t}" for t in types])
    head = (
        'import assert from "node:assert/strict";\n'
        'import test from "node:test";\n'
        f'import {{ {imports} }} from "{module}";\n\n'
    )
    return head + "\n\n".join(helpers + tests) + "\n", len(tests)


def _block(source: str, opener: str, at: int | None = None) -> str:
    """A top-level block: from its opening line to the first line that is ``}`` or ``});``."""
    start = source.find("\n" + opener) + 1 if at is None else at
    if start <= 0 and at is None:
        raise CheckError(f"the test file has no {opener.strip()!r}")
    end = re.compile(r"^\}\)?;?$", re.M).search(source, start)
    if end is None:
        raise CheckError(f"unterminated block at offset {start}")
    return source[start : end.end()]


def cmd_adapter(args: argparse.Namespace) -> int:
    out = _outside(Path(args.out))
    try:
        text = Path(args.source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CheckError(f"cannot read the source {args.source}: {err}") from err
    pure = pure_reducer(text)
    (out / "lifecycle.ts").write_text(pure, encoding="utf-8")
    _npm_install(out, [f"typescript@{_pinned_typescript()}"])
    tsc = str(out / "node_modules" / "typescript" / "bin" / "tsc")
    _run(
        ["node", tsc, "--strict", "--target", "ES2022", "--module", "ES2022"]
        + ["--moduleResolution", "bundler", "--outDir", "dist", "lifecycle.ts"],
        out,
        "tsc (the published reducer, strict)",
    )
    reducer = out / "dist" / "lifecycle.js"
    impl = f"node {BINDINGS / 'adapter.mjs'} --spec {args.spec} --reducer {reducer}"
    print(f"reducer: {reducer}\nimpl: {impl}")
    if args.no_run:
        return 0
    command = [sys.executable, "-m", "pi_context", "conformance", "--impl", impl]
    # The published reducer runs without its extension: events the spec says the extension
    # decides (0.34's provider_context) are not the reducer's to answer.
    command += ["--spec", args.spec, "--reducer-only", "--bundle", str(out / "failures")]
    return subprocess.run(command, cwd=out, check=False).returncode


def _published() -> list[tuple[str, str]]:
    """(spec id, what to do) for every committed spec with a provenance block: ``check`` for
    a published reset-control reducer, else the reason there is nothing to check."""
    from pi_context.statemachine.reset_control import committed_specs

    found = []
    for spec in committed_specs():
        prov = spec.provenance
        if prov is None:
            continue
        if prov.source != "published":
            found.append((spec.id, "ours: reproduces no published reducer"))
        elif spec.name != "reset-control":
            found.append((spec.id, "published, but no pure reducer (its provenance note says so)"))
        else:
            found.append((spec.id, "check"))
    return found


def cmd_all(args: argparse.Namespace) -> int:
    """Every published reset-control spec against its saved source ``SOURCES/<id>.ts``; a
    missing or unreadable source, a failed build or a failed run is reported, never skipped."""
    out = _outside(Path(args.out))
    sources = Path(args.sources)
    results: list[tuple[str, str]] = []
    for spec_id, what in _published():
        if what != "check":
            results.append((spec_id, f"not a reducer check: {what}"))
            continue
        source = sources / f"{spec_id}.ts"
        if not source.is_file():
            results.append((spec_id, f"FAILED: no saved source {source}"))
            continue
        one = argparse.Namespace(
            source=str(source), spec=spec_id, out=str(out / spec_id), no_run=False
        )
        try:
            status = cmd_adapter(one)
        except (CheckError, OSError, UnicodeDecodeError) as err:
            results.append((spec_id, f"FAILED: {err}"))
            continue
        results.append(
            (spec_id, "checked: conforms" if status == 0 else f"FAILED (status {status})")
        )
    print("\nupstream_check all:")
    for spec_id, verdict in results:
        print(f"  {spec_id}: {verdict}")
    failed = [s for s, v in results if not v.startswith(("checked", "not a reducer"))]
    if failed:
        print(
            f"upstream_check: {len(failed)} spec(s) not checked or not conforming: "
            f"{', '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_tests(args: argparse.Namespace) -> int:
    out = _outside(Path(args.out))
    npm = shutil.which("npm") or "npm"
    _run([sys.executable, "-m", TSBUILD], ROOT, "the TypeScript build of the binding")
    tarball = _run([npm, "pack", "--silent", "--pack-destination", str(out)], BINDINGS, "npm pack")
    package = json.loads((BINDINGS / "package.json").read_text(encoding="utf-8"))["name"]
    _npm_install(out, [str(out / tarball.strip().splitlines()[-1]), "@types/node@22"])
    _npm_install(out, [f"typescript@{_pinned_typescript()}"])
    source = Path(args.source).read_text(encoding="utf-8")
    text, count = pure_tests(source, f"{package}/{args.spec}")
    (out / "reset-lifecycle.test.ts").write_text(text, encoding="utf-8")
    tsc = str(out / "node_modules" / "typescript" / "bin" / "tsc")
    _run(
        ["node", tsc, "--strict", "--target", "ES2022", "--module", "NodeNext"]
        + ["--moduleResolution", "NodeNext", "--types", "node", "--outDir", "dist"]
        + ["reset-lifecycle.test.ts"],
        out,
        "tsc (upstream's tests against the binding's types)",
    )
    print(f"{count} pure reducer tests extracted; running them on {package}/{args.spec}")
    return subprocess.run(
        ["node", "--test", "dist/reset-lifecycle.test.js"], cwd=out, check=False
    ).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("adapter", help="build the published reducer and run conformance on it")
    a.add_argument("--source", required=True, help="the saved upstream lifecycle.ts")
    a.add_argument("--spec", required=True, help="the spec it reproduces, e.g. reset-control@0.34")
    a.add_argument("--out", required=True, help="a directory outside this repository")
    a.add_argument("--no-run", action="store_true", help="build only; print the --impl command")
    t = sub.add_parser("tests", help="run upstream's pure reducer tests on the packed binding")
    t.add_argument("--source", required=True, help="the saved test/reset-lifecycle.test.ts")
    t.add_argument("--spec", required=True, help="the entry to test, e.g. reset-control@0.34")
    t.add_argument("--out", required=True, help="a directory outside this repository")
    every = sub.add_parser("all", help="every spec with a provenance block, each reported")
    every.add_argument("--sources", required=True, help="a directory of saved sources, <id>.ts")
    every.add_argument("--out", required=True, help="a directory outside this repository")
    args = parser.parse_args(argv)
    commands = {"adapter": cmd_adapter, "tests": cmd_tests, "all": cmd_all}
    try:
        return int(commands[args.command](args))
    except (CheckError, OSError, UnicodeDecodeError) as err:
        print(f"upstream_check: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
