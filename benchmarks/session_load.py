"""Benchmark: load + branch + context of large sessions, ours against the real Pi.

For each size in ``--entries`` (default 100,000 and 400,000) it writes one session file (a long
conversation with side branches, compactions, custom messages, labels and model changes; the
generator writes lines directly, so it is linear), then alternates fresh processes:

* ours: ``Session.open`` + ``branch()`` + ``projection()`` in a new Python process;
* baseline: Pi 1.6.0 ``SessionManager.open`` + ``getBranch()`` + ``buildSessionContext()`` in a
  new Node process.

Each side times itself from just before the open to just after the context (interpreter start
excluded; every run is a fresh process, so nothing is warm) and reports its peak RSS. It prints
the minimum over ``--runs`` interleaved runs and the ratios ours/Pi (time, RSS), and checks that
both sides agree on the branch length and the number of context messages.

    python benchmarks/session_load.py [--entries 100000,400000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_baseline import ensure_pi, pi_open

from pi_context.bindings.session.jsonl import encode_line, iso_from_ms
from pi_context.testing.synth import random_message

OURS = r"""
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from pi_context.bindings.session import Durability, Session
t1 = time.perf_counter()
session = Session.open(Path(sys.argv[1]), readonly=True, durability=Durability.NONE)
branch = session.branch()
projection = session.projection()
t2 = time.perf_counter()
print(json.dumps({"ms": (t2 - t1) * 1000, "import_ms": (t1 - t0) * 1000,
    "branch": len(branch), "messages": len(projection["messages"]),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build(path: Path, entries: int, seed: int) -> None:
    """A realistic session, written line by line (linear in the entry count)."""
    rng = random.Random(seed)
    ms = 1_790_000_000_000
    ids: list[str] = []
    kinds: list[str] = []
    leaf: str | None = None
    main_leaf: str | None = None
    counter = 0

    def new_id() -> str:
        nonlocal counter
        counter += 1
        return f"{rng.getrandbits(32):08x}{counter:x}"[-12:]

    with path.open("wb") as out:
        header = {
            "type": "session",
            "version": 3,
            "id": "0196aaaa-0000-7000-8000-00000000beef",
            "timestamp": iso_from_ms(ms),
            "cwd": "/bench",
        }
        out.write(encode_line(header))
        while len(ids) < entries:
            ms += 1000
            if len(ids) % 50_000 == 0 and ids:
                log(f"  wrote {len(ids):,} entries")
            roll = rng.random()
            entry_id = new_id()
            base: dict[str, Any] = {"id": entry_id, "parentId": leaf, "timestamp": iso_from_ms(ms)}
            if roll < 0.80:
                message = random_message(rng, ms)
                if isinstance(message.get("content"), str) and len(message["content"]) > 400:
                    message["content"] = message["content"][:400]
                entry = {"type": "message", **base, "message": message}
            elif roll < 0.90:
                entry = {
                    "type": "custom_message",
                    **base,
                    "customType": rng.choice(["pi-context/guidance", "ext/note"]),
                    "content": "reminder " * rng.randint(1, 30),
                    "display": False,
                }
            elif roll < 0.95:
                data = {"n": rng.randint(0, 10**6), "f": rng.random()}
                entry = {"type": "custom", **base, "customType": "ext/state", "data": data}
            elif roll < 0.953 and main_leaf is None and ids:
                main_leaf, leaf = leaf, rng.choice(ids[-500:])  # a side branch ...
                continue
            elif roll < 0.956 and main_leaf is not None:
                leaf, main_leaf = main_leaf, None  # ... and back to the main line
                continue
            elif roll < 0.9565:
                recent = [i for i, k in zip(ids[-50:], kinds[-50:], strict=True) if k == "message"]
                keep = rng.choice(recent) if recent and rng.random() < 0.5 else entry_id
                entry = {
                    "type": "compaction",
                    **base,
                    "summary": "summary " * 20,
                    "firstKeptEntryId": keep,
                    "tokensBefore": rng.randint(1000, 100_000),
                }
            elif roll < 0.960 and ids:
                entry = {
                    "type": "label",
                    **base,
                    "targetId": rng.choice(ids),
                    "label": f"l{rng.randint(0, 9)}",
                }
            else:
                entry = {
                    "type": "thinking_level_change",
                    **base,
                    "thinkingLevel": rng.choice(["low", "high"]),
                }
            out.write(encode_line(entry))
            ids.append(entry_id)
            kinds.append(entry["type"])
            leaf = entry_id
        if main_leaf is not None:
            last = {
                "type": "message",
                "id": new_id(),
                "parentId": main_leaf,
                "timestamp": iso_from_ms(ms + 1),
                "message": {"role": "user", "content": "last", "timestamp": ms + 1},
            }
            out.write(encode_line(last))


def ours(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", OURS, str(path)], capture_output=True, text=True, check=True
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", default="100000,400000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    module = ensure_pi()
    agree = True
    table: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(n) for n in args.entries.split(",")):
            path = Path(tmp) / f"bench-{size}.jsonl"
            t0 = time.perf_counter()
            build(path, size, args.seed)
            mib = path.stat().st_size / 2**20
            log(f"built {size:,} entries ({mib:.0f} MiB) in {time.perf_counter() - t0:.1f} s")
            mine: list[dict[str, Any]] = []
            base: list[dict[str, Any]] = []
            for run in range(args.runs):
                log(f"  run {run + 1}/{args.runs}")
                mine.append(ours(path))
                if module is not None:
                    base.append(pi_open(path, module))
            best = min(mine, key=lambda r: r["ms"])
            rss = min(r["rss_mb"] for r in mine)
            print(f"{size:,} entries, {mib:.0f} MiB:")
            print(
                f"  ours (Session.open + branch + projection): {best['ms']:.0f} ms,"
                f" peak RSS {rss:.0f} MiB; branch {best['branch']:,},"
                f" {best['messages']:,} messages"
            )
            if not base:
                print("  baseline: skipped (node/npm not installed)")
                continue
            pi_best = min(base, key=lambda r: r["ms"])
            pi_rss = min(r["rss_mb"] for r in base)
            same = (pi_best["branch"], pi_best["messages"]) == (best["branch"], best["messages"])
            agree = agree and same
            print(
                f"  baseline Pi (SessionManager.open + getBranch + buildSessionContext):"
                f" {pi_best['ms']:.0f} ms, peak RSS {pi_rss:.0f} MiB;"
                f" branch {pi_best['branch']:,}, {pi_best['messages']:,} messages"
            )
            time_ratio, rss_ratio = best["ms"] / pi_best["ms"], rss / pi_rss
            print(
                f"  ratio ours/Pi: time {time_ratio:.2f}x (target <= 1.0x:"
                f" {'met' if time_ratio <= 1.0 else 'NOT met'}), RSS {rss_ratio:.2f}x (target"
                f" <= 1.5x: {'met' if rss_ratio <= 1.5 else 'NOT met'});"
                f" agree on branch and context: {same}"
            )
            table.append(
                f"| {size:,} entries ({mib:.0f} MiB) | {best['ms']:.0f} ms, {rss:.0f} MiB |"
                f" {pi_best['ms']:.0f} ms, {pi_rss:.0f} MiB | {time_ratio:.2f}x, {rss_ratio:.2f}x |"
            )
    if table:
        print(
            f"best of {args.runs} interleaved fresh-process runs"
            " (targets: time <= 1.0x, RSS <= 1.5x)"
        )
        print("| session | ours: time, peak RSS | Pi: time, peak RSS | ratio: time, RSS |")
        print("| --- | --- | --- | --- |")
        for line in table:
            print(line)
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
