"""Warm ``pi-context tool history_search``, whole process, against ``grep -F -c`` reading the
same session file, and what the warm path imports.

On a session at rest (changed longer ago than the index's racy window:
``history_tools.at_rest``) and with the history index built (one call first, in a private
cache folder), each round runs, in
turn: a fresh ``pi-context tool history_search --session FILE --args {"query": ..., "limit":
10}`` process, and a fresh ``grep -F -c QUERY FILE`` whose output is read through a pipe (GNU
grep writing to /dev/null stops at the first match, reading a fraction of the file). Both are
timed the same way (spawn to exit, output read); the figure is the best of ``--repeat``.
Target: ours <= 50 ms whole process at 100k entries.

The package's bytecode is compiled first, as an installed package has it. Then one run under
``python -X importtime`` lists the modules the warm path imports. The
budget kept here: ``msgspec`` (the fast line decoder, with the ``inspect``, ``ast``, ``uuid``
and ``decimal`` it imports), ``dataclasses``, ``random``, ``tempfile``, ``threading``,
``typing`` and ``datetime`` stay off it, and it imports at most ``MODULE_BUDGET`` modules in
all (``tests/history/test_warm_imports.py`` holds the first part as behaviour); the total
import time and the heaviest modules are printed.

Results go to ``benchmarks/results/cli_start.json`` (through ``results.py``).

    python benchmarks/cli_start.py [--entries N | --session FILE] [--repeat K] [--note TEXT]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from results import row, write

import pi_context

QUERY = "needle-7f3a91"
TARGET_MS = 50.0
OFF_THE_PATH = (
    "msgspec", "dataclasses", "inspect", "ast", "uuid", "hashlib", "random", "tempfile",
    "threading", "typing", "datetime",
)  # fmt: skip
MODULE_BUDGET = 119
"""Modules a warm call may import, the interpreter's own start-up included (119 now)."""


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Spawn to exit, the output read through a pipe, in ms."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode not in (0, 1):  # grep -c exits 1 when nothing matches
        raise SystemExit(f"{argv[0]} failed: {done.stderr[-500:]!r}")
    return elapsed


def imports(argv: list[str], env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Module -> (self us, cumulative us) of one ``-X importtime`` run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True
    )
    found: dict[str, tuple[int, int]] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, total, name = line[len("import time:") :].split("|")
        found[name.strip()] = (int(own), int(total))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--session", type=Path, help="an existing session file to use")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--note", default="", help="a word on the machine (loaded, quiet)")
    args = parser.parse_args()
    # An installed package ships its bytecode (pip compiles it); a source checkout run with
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module again in every process.
    compileall.compile_dir(Path(pi_context.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="pi-context-start-") as temp:
        session = args.session
        if session is None:
            from history_tools import build

            session = build(Path(temp) / "session", args.entries)
        from history_tools import at_rest

        at_rest(session)  # a warm call answers a session at rest (see history_tools.at_rest)
        env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(Path(temp) / "cache")}
        call = ["-m", "pi_context", "tool", "history_search", "--session", str(session),
                "--args", json.dumps({"query": QUERY, "limit": 10})]  # fmt: skip
        ours_argv = [sys.executable, *call]
        grep_argv = ["grep", "-F", "-c", QUERY, str(session)]
        timed(ours_argv, env)  # builds the index: every timed call below is warm
        ours, grep = [], []
        for _ in range(args.repeat):
            ours.append(timed(ours_argv, env))
            grep.append(timed(grep_argv, env))
        modules = imports(call, env)
    best, base = min(ours), min(grep)
    print(f"warm pi-context tool history_search: {best:.1f} ms (best of {args.repeat}); "
          f"grep -F -c through a pipe: {base:.1f} ms; ratio {best / base:.2f}x; "
          f"target <= {TARGET_MS:g} ms: {'met' if best <= TARGET_MS else 'MISSED'}")  # fmt: skip
    total = sum(own for own, _ in modules.values()) / 1000
    heaviest = sorted(modules.items(), key=lambda kv: -kv[1][0])[:12]
    print(f"\nimports on the warm path: {len(modules)} modules, {total:.1f} ms (self times)")
    for name, (own, _cumulative) in heaviest:
        print(f"  {own / 1000:7.1f} ms  {name}")
    present = [name for name in OFF_THE_PATH if name in modules]
    print(f"\noff the warm path ({', '.join(OFF_THE_PATH)}): "
          f"{'all off' if not present else 'imported: ' + ', '.join(present)}")  # fmt: skip
    print(f"modules imported: {len(modules)} (budget {MODULE_BUDGET})")
    rows: list[dict[str, Any]] = [
        row(
            "warm pi-context tool history_search, whole process",
            f"wall ms, best of {args.repeat}, fresh processes interleaved with the baseline",
            f"{best:.0f} ms",
            baseline=f"grep -F -c through a pipe {base:.0f} ms",
            ratio=f"{best / base:.2f}×",
            target=f"≤ {TARGET_MS:g} ms",
            met=best <= TARGET_MS,
        ),
        row(
            "modules kept off the warm path",
            f"of {', '.join(OFF_THE_PATH)}: how many the warm path imports",
            str(len(present)),
            target="0",
            met=not present,
        ),
        row(
            "modules on the warm path",
            "modules imported by the whole process (-X importtime)",
            str(len(modules)),
            target=f"≤ {MODULE_BUDGET}",
            met=len(modules) <= MODULE_BUDGET,
        ),
        row(
            "import time on the warm path",
            "ms, the sum of -X importtime self times (one run)",
            f"{total:.0f} ms",
        ),
    ]
    note = "baseline: grep -F -c over the same file through a pipe" + (
        f"; {args.note}" if args.note else ""
    )
    write(__file__, rows, note=note)
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
