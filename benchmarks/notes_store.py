"""notes_list / notes_search / boot snapshot over 10,000 and 50,000 notes vs ``grep -rF``.

Each size gets its own tree (the five homes, a few folder levels). Figures, side by side:

* warm, in-process (what an agent pays per tool call: the host process is already running)
  vs ``grep -rF`` in a fresh process over the same tree;
* cold, fresh process (``pi-context tool ...``: interpreter start-up and imports included) vs
  the same ``grep -rF``.

Baselines (named, same tree): list and snapshot vs ``grep -rF updatedAt: ROOT`` (every file
read once, as a listing must), search vs ``grep -rF NEEDLE ROOT``. Runs are interleaved (ours,
baseline, ours, baseline…) and the minimum of each is reported. Ratio = ours / baseline.
Usage: ``python benchmarks/notes_store.py [--sizes 10000 50000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pi_context.bindings.notes.frontmatter import NoteMeta, render_note
from pi_context.bindings.notes.homes import SCOPES
from pi_context.bindings.notes.snapshot import load_snapshot
from pi_context.bindings.notes.tools import TOOLS, store_for
from pi_context.bindings.tools import ToolContext

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "context",
    "window",
    "reset",
    "budget",
    "history",
    "marker",
    "boot",
    "note",
]
NEEDLE = "zanzibar-needle"


def populate(ctx: ToolContext, count: int, seed: int = 7) -> None:
    """Write ``count`` notes spread over the five homes and a few folder levels."""
    rng = random.Random(seed)
    store = store_for(ctx)
    base = 1_700_000_000_000
    for index in range(count):
        scope = SCOPES[index % len(SCOPES)]
        folders = [f"d{rng.randint(0, 9)}" for _ in range(rng.randint(0, 3))]
        path = "/".join([*folders, f"note-{index:05d}.md"])
        lines = [" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(5, 40))]
        if index % 100 == 0:
            lines.insert(rng.randint(0, len(lines)), f"the {NEEDLE} is here")
        meta = NoteMeta.new(base + rng.randint(0, 10**9), stale=index % 7 == 0)
        file = store.physical_path(scope, path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(render_note(meta, "\n".join(lines)), encoding="utf-8")
        if index % 5000 == 4999:
            print(f"  created {index + 1}/{count} notes", file=sys.stderr, flush=True)


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def shell(*command: str) -> Callable[[], object]:
    return lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=False)


def interleaved(
    ours: Callable[[], object], theirs: Callable[[], object], repeat: int
) -> tuple[float, float]:
    ours()  # warm the page cache (and, in-process, the note cache) for both sides
    theirs()
    mine: list[float] = []
    base: list[float] = []
    for _ in range(repeat):
        mine.append(timed(ours))
        base.append(timed(theirs))
    return min(mine), min(base)


def cli(ctx: ToolContext, name: str, args: dict[str, object]) -> Callable[[], object]:
    command = [sys.executable, "-m", "pi_context", "tool", name]
    command += ["--notes-home", str(ctx.notes_home), "--args", json.dumps(args)]
    return lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=True, cwd=ctx.cwd)


def measure(count: int, repeat: int) -> list[tuple[str, float, float, str]]:
    tools = {tool.name: tool for tool in TOOLS}
    rows: list[tuple[str, float, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="pi-notes-bench-") as temp:
        root = Path(temp) / "notes"
        project = Path(temp) / "project"
        project.mkdir()
        ctx = ToolContext(
            notes_home=root, cwd=project, session_id="bench", agent_name="pi", model_id="m"
        )
        print(f"creating {count} notes under {root}", file=sys.stderr, flush=True)
        populate(ctx, count)
        # Age the tree past the cache's settle window, as notes of earlier sessions are.
        time.sleep(2.1)
        result = tools["notes_search"].run(ctx, {"query": NEEDLE})
        assert isinstance(result.details, dict)
        expected = len(range(0, count, 100))
        assert result.details["total_files"] == expected, "search finds every needle"
        grep_list = shell("grep", "-rF", "updatedAt:", str(root))
        grep_needle = shell("grep", "-rF", NEEDLE, str(root))
        search = {"query": NEEDLE, "max_files": 200}
        cases: list[tuple[str, Callable[[], object], Callable[[], object], str]] = [
            (
                "notes_list, warm in-process",
                lambda: tools["notes_list"].run(ctx, {}),
                grep_list,
                "grep -rF updatedAt:",
            ),
            (
                "notes_search, warm in-process",
                lambda: tools["notes_search"].run(ctx, search),
                grep_needle,
                "grep -rF NEEDLE",
            ),
            (
                "boot snapshot, warm in-process",
                lambda: load_snapshot(store_for(ctx)),
                grep_list,
                "grep -rF updatedAt:",
            ),
            (
                "notes_list, fresh CLI process",
                cli(ctx, "notes_list", {}),
                grep_list,
                "grep -rF updatedAt:",
            ),
            (
                "notes_search, fresh CLI process",
                cli(ctx, "notes_search", search),
                grep_needle,
                "grep -rF NEEDLE",
            ),
        ]
        for label, ours, theirs, name in cases:
            print(f"  timing {label}", file=sys.stderr, flush=True)
            mine, base = interleaved(ours, theirs, repeat)
            rows.append((label, mine, base, name))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("grep") is None:
        print("grep is needed for the baseline", file=sys.stderr)
        return 2
    for count in args.sizes:
        rows = measure(count, args.repeat)
        print(f"\n{count} notes across {len(SCOPES)} homes, min of {args.repeat} interleaved runs")
        print(f"{'operation':<34} {'ours':>9} {'baseline':>9}  ratio  baseline")
        for label, mine, base, name in rows:
            figures = f"{mine * 1000:>7.1f}ms {base * 1000:>7.1f}ms {mine / base:>6.2f}x"
            print(f"{label:<34} {figures}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
