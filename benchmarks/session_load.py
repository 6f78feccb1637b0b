"""Benchmark: load + branch + projection of a 100k-entry session, against the real Pi.

Builds one session file of ``--entries`` entries (a long conversation with side branches,
compactions, custom messages, context edits and labels), then times, on the same file:

* ours: ``Session.open`` + ``branch()`` + ``projection()`` (best of ``--repeat``), and the peak
  Python memory of one such load (tracemalloc, measured in a separate untimed run);
* baseline: Pi 1.6.0 ``SessionManager.open`` + ``getBranch()`` + ``buildSessionContext()`` in
  Node (best of ``--repeat`` in one process), with its heap growth.

It prints the ratio ours/Pi (lower is better). Pi is npm-installed into ``.cache/pi-npm`` if
needed. Run: ``python benchmarks/session_load.py [--entries 100000]``.
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
import tracemalloc
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Durability, Session, seeded_uuids
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.synth import random_message, stepping_clock

REPO = Path(__file__).resolve().parents[1]
PI_CACHE = REPO / ".cache" / "pi-npm"
PI_PACKAGE = "@earendil-works/pi-coding-agent@1.6.0"
SESSION_MANAGER = (
    PI_CACHE / "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"
)

NODE_SCRIPT = r"""
const { SessionManager } = await import(process.argv[2]);
const file = process.argv[3], repeat = Number(process.argv[4]);
const times = [];
let result, keep;  // keep the last manager alive so its heap is counted
global.gc?.();
const before = process.memoryUsage();
for (let i = 0; i < repeat; i++) {
  const t0 = performance.now();
  const sm = SessionManager.open(file);
  const branch = sm.getBranch();
  const ctx = sm.buildSessionContext();
  times.push(performance.now() - t0);
  result = { branch: branch.length, messages: ctx.messages.length, entries: sm.getEntryCount() };
  keep = sm;
}
const after = process.memoryUsage();
console.log(JSON.stringify({ best_ms: Math.min(...times), times, branch: result.branch,
  messages: result.messages, entries: result.entries,
  heap_mb: (after.heapUsed - before.heapUsed) / 2 ** 20, rss_mb: after.rss / 2 ** 20 }));
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build(path: Path, entries: int, seed: int) -> None:
    """A realistic session: mostly one long conversation, with side branches every so often."""
    rng = random.Random(seed)
    session = Session.in_memory(Path("/bench"), now=stepping_clock(rng), uuids=seeded_uuids(seed))
    stamp = 1_790_000_000_000
    main_leaf: str | None = None
    ids: list[str] = []  # every entry id, in order (session.entries copies; keep it O(1) here)
    while len(ids) < entries:
        stamp += 1000
        if len(ids) % 20_000 == 0 and ids:
            log(f"  built {len(ids):,} entries")
        roll = rng.random()
        new_id: str | None = None
        if roll < 0.80:
            message = random_message(rng, stamp)
            if isinstance(message.get("content"), str) and len(message["content"]) > 400:
                message["content"] = message["content"][:400]
            new_id = session.append_message(message)
        elif roll < 0.90:
            new_id = session.append_custom_message(
                rng.choice(["pi-context/guidance", "ext/note"]),
                "reminder " * rng.randint(1, 30),
                False,
            )
        elif roll < 0.95:
            new_id = session.append_custom(
                "ext/state", {"n": rng.randint(0, 10**6), "f": rng.random()}
            )
        elif roll < 0.953 and main_leaf is None:
            # a side branch of a few entries, then back to the main line
            main_leaf = session.leaf_id
            session.move_leaf(rng.choice(ids[-500:]))
        elif roll < 0.956 and main_leaf is not None:
            session.move_leaf(main_leaf)
            main_leaf = None
        elif roll < 0.9565:
            recent = [i for i in ids[-50:] if session.get(i)["type"] == "message"]  # type: ignore[index]
            keep = rng.choice(recent) if recent and rng.random() < 0.5 else None
            new_id = session.append_compaction("summary " * 20, keep, rng.randint(1000, 100_000))
        elif roll < 0.960:
            new_id = session.append_label(rng.choice(ids), f"l{rng.randint(0, 9)}")
        else:
            new_id = session.append_thinking_level_change(rng.choice(["low", "high"]))
        if new_id is not None:
            ids.append(new_id)
    if main_leaf is not None:
        session.move_leaf(main_leaf)
    session.append_message({"role": "user", "content": "last", "timestamp": stamp + 1})
    with path.open("w", encoding="utf-8") as handle:
        handle.write(encode(session.header) + "\n")
        for entry in session.entries:
            handle.write(encode(entry) + "\n")


def ours(path: Path, repeat: int) -> dict[str, Any]:
    times, phases = [], []
    result: dict[str, Any] = {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        session = Session.open(path, readonly=True, durability=Durability.NONE)
        t1 = time.perf_counter()
        branch = session.branch()
        t2 = time.perf_counter()
        projection = session.projection()
        t3 = time.perf_counter()
        times.append((t3 - t0) * 1000)
        phases.append(((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000))
        result = {
            "branch": len(branch),
            "messages": len(projection["messages"]),
            "entries": len(session.entries),
        }
        del session, branch, projection
    best = min(range(repeat), key=lambda i: times[i])
    tracemalloc.start()
    session = Session.open(path, readonly=True)
    session.projection()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"best_ms": times[best], "phases_ms": phases[best], "peak_mb": peak / 2**20, **result}


def ensure_pi() -> Path | None:
    if SESSION_MANAGER.exists():
        return SESSION_MANAGER
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    log(f"installing {PI_PACKAGE} into {PI_CACHE} ...")
    PI_CACHE.mkdir(parents=True, exist_ok=True)
    if not (PI_CACHE / "package.json").exists():
        (PI_CACHE / "package.json").write_text('{"name": "pi-npm-cache", "private": true}\n')
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", PI_PACKAGE],
        cwd=PI_CACHE,
        check=True,
    )
    return SESSION_MANAGER


def pi(path: Path, repeat: int, module: Path) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as handle:
        handle.write(NODE_SCRIPT)
        script = handle.name
    try:
        result = subprocess.run(
            ["node", "--expose-gc", script, module.as_uri(), str(path), str(repeat)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        Path(script).unlink()
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        log(f"building a {args.entries:,}-entry session ...")
        t0 = time.perf_counter()
        build(path, args.entries, args.seed)
        log(f"  {path.stat().st_size / 2**20:.1f} MiB in {time.perf_counter() - t0:.1f} s")
        log("timing ours (Session.open + branch + projection) ...")
        mine = ours(path, args.repeat)
        module = ensure_pi()
        print(f"session file: {args.entries:,} entries, {path.stat().st_size / 2**20:.1f} MiB")
        load, walk, project = mine["phases_ms"]
        print(
            f"ours: {mine['best_ms']:.0f} ms (load {load:.0f} + branch {walk:.0f}"
            f" + projection {project:.0f}),"
            f" branch {mine['branch']:,} entries, {mine['messages']:,} messages,"
            f" peak Python memory {mine['peak_mb']:.0f} MiB"
        )
        if module is None:
            print("baseline: skipped (node/npm not installed)")
            return 0
        log("timing Pi (SessionManager.open + getBranch + buildSessionContext) ...")
        base = pi(path, args.repeat, module)
        same = (base["branch"], base["messages"]) == (mine["branch"], mine["messages"])
        print(
            f"baseline Pi SessionManager.open: {base['best_ms']:.0f} ms, branch {base['branch']:,},"
            f" {base['messages']:,} messages, heap +{base['heap_mb']:.0f} MiB,"
            f" rss {base['rss_mb']:.0f} MiB"
        )
        print(f"agree on branch and projection size: {same}")
        print(f"ratio ours/Pi (time): {mine['best_ms'] / base['best_ms']:.2f}x")
        return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
