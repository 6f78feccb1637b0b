"""Benchmark: loading a large session in a fresh process, ours against the real Pi.

For each size in ``--entries`` (default 100,000 and 400,000) it writes one session file (a long
conversation with side branches, compactions, custom messages, labels and model changes; the
generator writes lines directly, so it is linear), then runs, interleaved, ``--runs`` rounds of
three fresh processes:

* ours, load: ``Session.open`` + ``branch()`` + ``projection()``;
* ours, cold history call: the first ``history_search`` of a long-lived host (the MCP server
  declares itself one) on the file, with no index yet (a private cache folder): it is answered
  from the file and the index is built after the answer (``history/first.py``);
* ours, cold one-shot call: the same first search in a one-shot command, which builds the
  index before it answers (no target: shown so that the cost of a build stays in sight);
* baseline: Pi 1.6.0 ``SessionManager.open`` + ``getBranch()`` + ``buildSessionContext()`` in a
  new Node process.

Our processes run as the ``pi-context`` executable runs its commands (``gc_pause.one_shot``:
what a load leaves alive is frozen, not scanned by the collector). Each side times itself from
just before the open to just after the answer (interpreter start and imports excluded on both
sides; every run is a fresh process, so nothing is warm) and reports its peak RSS. It prints the
minimum over the runs and the ratios ours/Pi (time, RSS), checks that both sides agree on the
branch length and the number of context messages and that both first searches give the same
answer, and writes ``benchmarks/results/session_load.json``. Targets: load and the long-lived
host's cold call <= 0.6x Pi's time, load peak RSS <= 1.0x Pi's.

    python benchmarks/session_load.py [--entries 100000,400000] [--runs 3] [--note TEXT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_baseline import ensure_pi, pi_open
from results import row, write

from pi_context.bindings.session.jsonl import encode_line, iso_from_ms
from pi_context.testing.synth import random_message

TIME_TARGET = 0.6
RSS_TARGET = 1.0

OURS = r"""
import json, resource, sys, time
from pathlib import Path
from pi_context.bindings.session import Durability, Session
import pi_context.bindings.session.decoders  # imported by the first load (Pi imports first too)
from pi_context.support.gc_pause import one_shot
one_shot()  # as the pi-context executable runs a command
t1 = time.perf_counter()
session = Session.open(Path(sys.argv[1]), readonly=True, durability=Durability.NONE)
branch = session.branch()
projection = session.projection()
t2 = time.perf_counter()
print(json.dumps({"ms": (t2 - t1) * 1000,
    "branch": len(branch), "messages": len(projection["messages"]),
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

COLD = r"""
import json, resource, sys, time
from pathlib import Path
from pi_context.bindings.history.tools import TOOLS
from pi_context.bindings.tools import ToolContext
from pi_context.support import heap
from pi_context.support.gc_pause import one_shot
# imported by the first call (Pi imports first too)
import pi_context.bindings.history.first, pi_context.bindings.session.decoders
if sys.argv[2] == "long-lived":
    heap.long_lived_host()  # as the MCP server declares itself
else:
    one_shot()  # as the pi-context executable runs a command
tool = {t.name: t for t in TOOLS}["history_search"]
t1 = time.perf_counter()
result = tool.run(ToolContext(session_path=Path(sys.argv[1])), {"query": "needle-7f3a91"})
t2 = time.perf_counter()
assert not result.is_error, result.text
print(json.dumps({"ms": (t2 - t1) * 1000, "text": result.text,
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


def fresh(script: str, path: Path, env: dict[str, str] | None = None, *args: str) -> dict[str, Any]:
    """One fresh Python process running ``script`` on ``path``; what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def ratio_row(label: str, measures: str, ours: float, pi: float, unit: str, target: float) -> Any:
    fmt = "{:,.0f} " + unit
    return row(
        label,
        measures,
        fmt.format(ours),
        baseline="Pi 1.6.0 " + fmt.format(pi),
        ratio=f"{ours / pi:.2f}×",
        target=f"≤ {target:g}× Pi",
        met=ours <= target * pi,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", default="100000,400000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--note", default="", help="a word on the machine (loaded, quiet)")
    args = parser.parse_args()
    module = ensure_pi()
    if module is None:
        print("the baseline needs node and npm (the real Pi is installed with npm)")
        return 1
    agree = True
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(cache)}
        for size in (int(n) for n in args.entries.split(",")):
            path = Path(tmp) / f"bench-{size}.jsonl"
            t0 = time.perf_counter()
            build(path, size, args.seed)
            mib = path.stat().st_size / 2**20
            log(f"built {size:,} entries ({mib:.0f} MiB) in {time.perf_counter() - t0:.1f} s")
            loads: list[dict[str, Any]] = []
            colds: list[dict[str, Any]] = []
            builds: list[dict[str, Any]] = []
            pis: list[dict[str, Any]] = []
            for run in range(args.runs):
                log(f"  run {run + 1}/{args.runs}")
                loads.append(fresh(OURS, path))
                subprocess.run(["rm", "-rf", str(cache)], check=True)
                colds.append(fresh(COLD, path, env, "long-lived"))
                subprocess.run(["rm", "-rf", str(cache)], check=True)
                builds.append(fresh(COLD, path, env, "one-shot"))
                pis.append(pi_open(path, module))
            load_ms = min(r["ms"] for r in loads)
            load_rss = min(r["rss_mb"] for r in loads)
            cold_ms = min(r["ms"] for r in colds)
            cold_rss = min(r["rss_mb"] for r in colds)
            build_ms = min(r["ms"] for r in builds)
            answers = {r["text"] for r in colds + builds}
            pi_ms = min(r["ms"] for r in pis)
            pi_rss = min(r["rss_mb"] for r in pis)
            shape = {(r["branch"], r["messages"]) for r in loads + pis}
            same = len(shape) == 1 and len(answers) == 1
            agree = agree and same
            print(f"{size:,} entries, {mib:.0f} MiB (best of {args.runs}, interleaved):")
            print(
                f"  ours load + branch + projection: {load_ms:,.0f} ms, peak RSS {load_rss:,.0f}"
                f" MiB; first (cold) history_search of a long-lived host: {cold_ms:,.0f} ms,"
                f" peak RSS {cold_rss:,.0f} MiB; of a one-shot command (builds the index"
                f" first): {build_ms:,.0f} ms"
            )
            print(
                f"  Pi open + getBranch + buildSessionContext: {pi_ms:,.0f} ms, peak RSS"
                f" {pi_rss:,.0f} MiB"
            )
            print(
                f"  ratio ours/Pi: load {load_ms / pi_ms:.2f}x, cold call {cold_ms / pi_ms:.2f}x"
                f" (targets <= {TIME_TARGET:g}x), load RSS {load_rss / pi_rss:.2f}x (target <="
                f" {RSS_TARGET:g}x); both sides agree on branch and context, and both first"
                f" searches on their answer: {same}"
            )
            what = f"{size // 1000:,}k entries ({mib:.0f} MiB)"
            rows += [
                ratio_row(
                    f"load + branch + projection, {what}",
                    f"{what}: load + branch + projection, fresh process, ms (start-up excluded)",
                    load_ms,
                    pi_ms,
                    "ms",
                    TIME_TARGET,
                ),
                ratio_row(
                    f"first (cold) history_search, {what}",
                    f"{what}: first history_search of a long-lived host (the MCP server), no"
                    " index yet: answered from the file, the index built after, ms",
                    cold_ms,
                    pi_ms,
                    "ms",
                    TIME_TARGET,
                ),
                row(
                    f"first history_search of a one-shot command, {what}",
                    f"{what}: first history_search of a one-shot command, no index yet (it"
                    " builds the index, then answers), ms",
                    f"{build_ms:,.0f} ms",
                    baseline=f"Pi 1.6.0 {pi_ms:,.0f} ms",
                    ratio=f"{build_ms / pi_ms:.2f}×",
                ),
                ratio_row(
                    f"load peak RSS, {what}",
                    f"{what}: peak RSS of the load's process",
                    load_rss,
                    pi_rss,
                    "MiB",
                    RSS_TARGET,
                ),
            ]
    note = f"best of {args.runs} interleaved fresh-process runs" + (
        f"; {args.note}" if args.note else ""
    )
    write(__file__, rows, note=note)
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
