"""notes_list / notes_search latency over 10,000 notes across the five homes.

Baselines (named, same tree, same machine):
  * list   vs ``grep -rF -m1 updatedAt: ROOT`` (touches every file's metadata, as a listing must)
  * search vs ``grep -rF NEEDLE ROOT``         (literal search of every file)
  * boot snapshot load vs ``cat`` of every file (``find ROOT -type f -exec cat {} +``)

Prints the median of several runs and the ratio ours / baseline (lower is better; 1.0 means
as fast as grep). Usage: ``python benchmarks/notes_store.py [--notes 10000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
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


def populate(root: Path, ctx: ToolContext, count: int, seed: int = 7) -> None:
    """Write ``count`` notes spread over the five homes and a few folder levels."""
    rng = random.Random(seed)
    store = store_for(ctx)
    base = 1_700_000_000_000
    for index in range(count):
        scope = SCOPES[index % len(SCOPES)]
        depth = rng.randint(0, 3)
        folders = [f"d{rng.randint(0, 9)}" for _ in range(depth)]
        path = "/".join([*folders, f"note-{index:05d}.md"])
        lines = [" ".join(rng.choices(WORDS, k=12)) for _ in range(rng.randint(5, 40))]
        if index % 100 == 0:
            lines.insert(rng.randint(0, len(lines)), f"the {NEEDLE} is here")
        meta = NoteMeta.new(base + rng.randint(0, 10**9), stale=index % 7 == 0)
        file = store.physical_path(scope, path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(render_note(meta, "\n".join(lines)), encoding="utf-8")
        if index % 1000 == 999:
            print(f"  created {index + 1}/{count} notes", file=sys.stderr, flush=True)


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    run()  # warm the page cache so both sides read from memory
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def shell(*command: str) -> Callable[[], object]:
    return lambda: subprocess.run(command, stdout=subprocess.DEVNULL, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("grep") is None or shutil.which("find") is None:
        print("grep and find are needed for the baselines", file=sys.stderr)
        return 2
    tools = {tool.name: tool for tool in TOOLS}
    with tempfile.TemporaryDirectory(prefix="pi-notes-bench-") as temp:
        root = Path(temp) / "notes"
        project = Path(temp) / "project"
        project.mkdir()
        ctx = ToolContext(
            notes_home=root, cwd=project, session_id="bench", agent_name="pi", model_id="m"
        )
        print(f"creating {args.notes} notes under {root}", file=sys.stderr, flush=True)
        populate(root, ctx, args.notes)

        listed = json.loads(tools["notes_list"].run(ctx, {}).text)
        found = json.loads(tools["notes_search"].run(ctx, {"query": NEEDLE, "max_files": 200}).text)
        expected = len(range(0, args.notes, 100))
        assert len(found["files"]) == expected, (len(found["files"]), expected)
        assert listed["files"], "the listing is not empty"

        rows = [
            (
                "notes_list (all homes, first page)",
                lambda: tools["notes_list"].run(ctx, {}),
                "grep -rF -m1 updatedAt:",
                shell("grep", "-rF", "-m1", "updatedAt:", str(root)),
            ),
            (
                "notes_search (literal, all homes)",
                lambda: tools["notes_search"].run(ctx, {"query": NEEDLE, "max_files": 200}),
                "grep -rF NEEDLE",
                shell("grep", "-rF", NEEDLE, str(root)),
            ),
            (
                "boot snapshot (load all five homes)",
                lambda: load_snapshot(store_for(ctx)),
                "find -type f -exec cat",
                shell("find", str(root), "-type", "f", "-name", "*.md", "-exec", "cat", "{}", "+"),
            ),
        ]
        print(f"{args.notes} notes across {len(SCOPES)} homes, median of {args.repeat} runs")
        print(f"{'operation':<38} {'ours':>9} {'baseline':>9}  ratio  baseline")
        for label, ours, baseline_name, baseline in rows:
            mine = median_seconds(ours, args.repeat)
            theirs = median_seconds(baseline, args.repeat)
            print(
                f"{label:<38} {mine * 1000:>7.1f}ms {theirs * 1000:>7.1f}ms"
                f" {mine / theirs:>6.2f}x  {baseline_name}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
