"""Wall time of ``pi-context demo --windows N`` against named baselines.

Baselines: ``issue-target`` (the runtime issue asks for 20 windows "in seconds": 10 s) and
``raw-append`` (writing the demo's final branch, entry by entry, to a fresh session file with
the same durability and no runtime: the floor for producing that file). The ratio to
``raw-append`` is the cost of everything the runtime and the scripted model add.

    python benchmarks/runtime_demo.py [--windows N] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from results import row, write

from pi_context.bindings.session import Session
from pi_context.demo.scripted import run_demo

ISSUE_TARGET_SECONDS = 10.0


def raw_append(entries: list[dict[str, object]], directory: Path) -> float:
    start = time.perf_counter()
    session = Session.create(directory / "project", directory / "raw")
    for entry in entries:
        draft = {k: v for k, v in entry.items() if k not in ("id", "parentId", "timestamp")}
        if draft["type"] == "compaction":
            draft = {"type": "compaction", "summary": "", "firstKeptEntryId": None}
        session.append_draft(draft)
    session.sync()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best_demo = best_raw = float("inf")
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            report = run_demo(args.windows, Path(tmp) / "demo")
            best_demo = min(best_demo, time.perf_counter() - start)
            entries = Session.open(report.session_path).branch()
            best_raw = min(best_raw, raw_append(entries, Path(tmp)))
    print(f"demo, {args.windows} windows: {best_demo:.2f} s ({len(entries)} entries)")
    print(
        f"vs issue-target ({ISSUE_TARGET_SECONDS:.0f} s): {best_demo / ISSUE_TARGET_SECONDS:.2f}x"
    )
    print(f"vs raw-append ({best_raw:.3f} s): {best_demo / best_raw:.1f}x")
    write(
        __file__,
        [
            row(
                "demo",
                f"`pi-context demo --windows {args.windows}` (library call)",
                f"{best_demo:.2f} s ({len(entries)} entries)",
                baseline=f"writing the same entries without the runtime: {best_raw:.3f} s",
                ratio=f"{best_demo / best_raw:.1f}×",
                target=f"≤ {ISSUE_TARGET_SECONDS:g} s",
                met=best_demo <= ISSUE_TARGET_SECONDS,
            )
        ],
        note=f"best of {args.repeat} runs",
    )


if __name__ == "__main__":
    main()
