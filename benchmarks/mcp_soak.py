"""Soak: ``pi-context mcp`` answers mixed tool calls on 100k- and 400k-entry sessions and 10k
notes, each call costing what it returns, in flat memory.

Builds a session of ``--entries`` entries (the history benchmark's generator: turns, tool calls
and results, bash runs, extension messages, a reset every 5,000 entries) and ``--notes`` notes
over the five homes (the notes benchmark's generator), starts the real ``pi-context mcp``
subprocess and drives it with the official MCP SDK client: ``--calls`` calls in a fixed mix of
every served tool (reads of the history and of notes, the handoff's ``context_history_*``,
listings and searches of both, and writes and edits that rewrite a fixed set of 50 scratch
notes, so the data does not grow), one at a time. Reported:

* per tool: calls, p50 and p99 latency as the client sees it (the JSON-RPC round trip);
* per tool, the p99 against its 10 ms target, and (with two sizes, by default 100k and 400k
  entries) each tool's p50 at the larger size against the smaller (target: within 1.5x: a
  call costs what it returns, not what the session holds);
* the server's resident memory (``VmRSS``) after the handshake (start), and every 1,000 calls
  (every ``--calls``/10 in a shorter run), with its peak (``VmHWM``); warm is the figure after
  the first 1,000 calls (the history index opened, the notes view filled). Target: end within
  1.10x of warm (flat); errors: none.

Results go to ``benchmarks/results/mcp_soak.json`` (through ``results.py``); the README and
docs tables are made from it (``python benchmarks/tables.py``). ``--quick`` is a short run
for CI and tests (20k entries, 1k notes, 600 calls; its figures are not the targets').

    python benchmarks/mcp_soak.py [--entries N [N ...]] [--notes N] [--calls N] [--keep DIR]
    python benchmarks/mcp_soak.py --quick --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from history_tools import RARE
from history_tools import build as build_session
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage
from notes_store import NEEDLE, populate
from results import row, write

from pi_context.bindings.tools import ToolContext

SCRATCH = 50
FLAT = 1.10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in KiB."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def prepare(base: Path, entries: int, notes: int) -> tuple[Path, Path, Path]:
    """(session file, notes root, project folder), built once per ``base``."""
    done = base / "complete"
    sessions, root, project = base / "sessions", base / "notes", base / "project"
    if done.is_file():
        return Path(done.read_text().strip()), root, project
    for folder in (sessions, root, project):
        shutil.rmtree(folder, ignore_errors=True)
    project.mkdir(parents=True)
    log(f"writing a session of {entries:,} entries")
    session = build_session(sessions, entries)
    header = json.loads(session.open("rb").readline())
    log(f"creating {notes:,} notes")
    populate(
        ToolContext(
            notes_home=root,
            cwd=project,
            session_id=header["id"],
            agent_name="pi",
            model_id="m",
        ),
        notes,
    )
    time.sleep(2.1)  # past the notes cache's settle window, as notes of earlier sessions are
    done.write_text(f"{session}\n")
    return session, root, project


def plan(calls: int, seed: int = 5) -> list[tuple[str, dict[str, Any]]]:
    """The fixed mix of calls (the item ids of history_read are filled in from a listing)."""
    rng = random.Random(seed)
    words = ["quick", "lazy dog", "進捗", "Café", RARE, "grep -n", "nothing-matches-this"]
    mix: list[tuple[str, int]] = [
        ("history_list", 3),
        ("history_search", 3),
        ("history_read", 3),
        ("history_windows", 1),
        ("notes_list", 2),
        ("notes_search", 2),
        ("notes_read", 3),
        ("notes_write", 2),
        ("notes_edit", 1),
        ("context_history_search", 2),
        ("context_history_read", 2),
    ]
    names = [name for name, weight in mix for _ in range(weight)]
    out: list[tuple[str, dict[str, Any]]] = []
    for n in range(calls):
        name = names[n % len(names)]
        scratch = f"soak/scratch-{rng.randrange(SCRATCH):02d}.md"
        if name == "history_list":
            args: dict[str, Any] = {"limit": rng.choice([5, 20, 50])}
            if rng.random() < 0.5:
                args["role"] = rng.choice(["user", "assistant", "tool", "tool_call"])
        elif name == "history_search":
            args = {"query": rng.choice(words), "limit": 10}
        elif name == "history_read":
            args = {"item_id": "", "limit_chars": rng.choice([200, 2000])}
        elif name == "history_windows":
            args = {}
        elif name == "context_history_search":
            args = {"query": rng.choice(words), "limit": 10}
        elif name == "context_history_read":
            args = {"id": ""}
        elif name == "notes_list":
            args = {"max_results": rng.choice([20, 100])}
        elif name == "notes_search":
            args = {"query": rng.choice([NEEDLE, "gamma delta", "no-such-words-here"])}
        elif name == "notes_read":
            args = {"path": scratch}
        else:  # notes_write, notes_edit: the content follows the note's state (see ``soak``)
            args = {"path": scratch}
        out.append((name, args))
    return out


async def soak(argv: list[str], calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    process = await anyio.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](16)

    async def server_to_client() -> None:
        pending = b""
        async for chunk in stdout:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                await to_client.send(SessionMessage(message))

    async def client_to_server() -> None:
        async for sent in from_client:
            text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
            await stdin.send((text + "\n").encode())

    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    memory: list[tuple[int, int, int]] = []  # (calls done, rss, hwm)
    async with process, anyio.create_task_group() as tasks:
        tasks.start_soon(server_to_client)
        tasks.start_soon(client_to_server)
        async with ClientSession(client_reads, client_writes) as client:
            await client.initialize()
            memory.append((0, *rss_kib(process.pid)))
            listing = await client.call_tool("history_list", {"limit": 200})
            items = [i["item_id"] for i in json.loads(listing.content[0].text)["items"]]  # type: ignore[union-attr]
            found = await client.call_tool(
                "context_history_search", {"query": "quick", "limit": 20}
            )
            records = [i["id"] for i in json.loads(found.content[0].text)["items"]]  # type: ignore[union-attr]
            state: dict[str, str] = {}
            for k in range(SCRATCH):
                path = f"soak/scratch-{k:02d}.md"
                await client.call_tool("notes_write", {"path": path, "content": "state=a\n"})
                state[path] = "a"
            step = min(1000, max(1, len(calls) // 10))
            for n, (name, args) in enumerate(calls, 1):
                if name == "history_read":
                    args = {**args, "item_id": items[n % len(items)]}
                elif name == "context_history_read":
                    args = {**args, "id": records[n % len(records)]}
                elif name == "notes_write":
                    args = {**args, "content": f"Checkpoint {n}.\nstate=a\n"}
                    state[args["path"]] = "a"
                elif name == "notes_edit":
                    old = state[args["path"]]
                    new = "b" if old == "a" else "a"
                    edit = {"oldText": f"state={old}", "newText": f"state={new}"}
                    args = {**args, "edits": [edit]}
                    state[args["path"]] = new
                started = time.perf_counter()
                result = await client.call_tool(name, args)
                latencies[name].append(time.perf_counter() - started)
                if result.is_error:
                    errors.append(f"{name} {args}: {result.content[0].text[:200]}")  # type: ignore[union-attr]
                if n % step == 0:
                    memory.append((n, *rss_kib(process.pid)))
                    rss = memory[-1][1]
                    log(f"  {n:,}/{len(calls):,} calls; server RSS {rss / 1024:.0f} MiB")
        await stdin.aclose()
        tasks.cancel_scope.cancel()
    return {"latencies": latencies, "errors": errors, "memory": memory}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


P99_TARGET_MS = 10.0
P50_GROWTH = 1.5


def run_size(entries: int, notes: int, calls: int, keep: Path | None) -> dict[str, Any]:
    """One soak against a session of ``entries`` entries: latencies, memory, errors."""
    with tempfile.TemporaryDirectory(prefix="pi-context-soak-") as temp:
        base = keep or Path(temp)
        base.mkdir(parents=True, exist_ok=True)
        os.environ["PI_CONTEXT_CACHE_DIR"] = str(Path(temp) / "cache")
        session, root, project = prepare(base / f"data-{entries}-{notes}", entries, notes)
        argv = [sys.executable, "-m", "pi_context", "mcp", "--session", str(session),
                "--notes-home", str(root), "--cwd", str(project), "--model", "m"]  # fmt: skip
        log(f"{calls:,} calls against {' '.join(argv[1:])}")
        started = time.perf_counter()
        found: dict[str, Any] = anyio.run(soak, argv, plan(calls))
        found["seconds"] = time.perf_counter() - started
    return found


def report(entries: int, notes: int, calls: int, found: dict[str, Any]) -> list[dict[str, Any]]:
    """Print one size's tables; the result rows (p99 per tool, RSS flatness)."""
    latencies, memory, errors = found["latencies"], found["memory"], found["errors"]
    print(f"\n{calls:,} calls in {found['seconds']:.0f} s; session {entries:,} entries, "
          f"{notes:,} notes\n")  # fmt: skip
    print("| tool | calls | p50 | p99 | p99 target |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows: list[dict[str, Any]] = []
    for name in sorted(latencies):
        values = latencies[name]
        p50, p99 = percentile(values, 0.5) * 1000, percentile(values, 0.99) * 1000
        met = p99 <= P99_TARGET_MS
        print(f"| `{name}` | {len(values):,} | {p50:.1f} ms | {p99:.1f} ms | "
              f"{'met' if met else 'MISSED'} |")  # fmt: skip
        rows.append(
            row(
                f"{name} p99 at {entries:,} entries",
                f"`{name}` p99 per call, MCP round trip ({len(values):,} calls; p50 {p50:.2f} ms)",
                f"{p99:.2f} ms",
                target=f"≤ {P99_TARGET_MS:g} ms",
                met=met,
            )
        )
    warm_at = next((i for i, m in enumerate(memory) if m[0] >= 1000), 1)
    start, warm, end = memory[0][1], memory[warm_at][1], memory[-1][1]
    print("\n| server RSS | MiB |")
    print("| --- | ---: |")
    for done, rss, _hwm in memory:
        label = "start (after the handshake)" if done == 0 else f"after {done:,} calls"
        print(f"| {label} | {rss / 1024:.0f} |")
    print(f"| peak (VmHWM) | {memory[-1][2] / 1024:.0f} |")
    per_1000 = (end - warm) / 1024 / max(1, (memory[-1][0] - memory[warm_at][0]) / 1000)
    ratio = end / warm
    print(f"\nend / warm RSS: {ratio:.2f}x (target <= {FLAT:.2f}x); end / start "
          f"{end / start:.2f}x; {per_1000:+.1f} MiB per 1,000 calls after warm-up; "
          f"{len(errors)} error results")  # fmt: skip
    for error in errors[:5]:
        print(f"  error: {error}")
    per_k = ", ".join(f"{rss / 1024:.0f}" for done, rss, _hwm in memory if done)
    rows.append(row(f"server RSS end / warm at {entries:,} entries",
                    f"server RSS (MiB) at the end vs after {memory[warm_at][0]:,} calls; "
                    f"per {memory[1][0]:,} calls: {per_k}; peak {memory[-1][2] / 1024:.0f}",
                    f"{end / 1024:.0f} MiB", baseline=f"{warm / 1024:.0f} MiB",
                    ratio=f"{ratio:.2f}×", target=f"≤ {FLAT:.2f}×", met=ratio <= FLAT))  # fmt: skip
    rows.append(row(f"error results at {entries:,} entries", "calls answered with an error",
                    str(len(errors)), target="0", met=not errors))  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[100_000, 400_000])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="build (and reuse) the data under DIR")
    parser.add_argument("--note", default="", help="a word on the machine (loaded, quiet)")
    parser.add_argument("--quick", action="store_true", help="a short run (CI, tests)")
    parser.add_argument("--out", type=Path, help="write the result file under DIR instead")
    args = parser.parse_args()
    if args.quick:
        args.entries, args.notes, args.calls = [20_000], 1_000, 600
    rows: list[dict[str, Any]] = []
    p50s: dict[int, dict[str, float]] = {}
    for entries in args.entries:
        found = run_size(entries, args.notes, args.calls, args.keep)
        rows += report(entries, args.notes, args.calls, found)
        p50s[entries] = {k: percentile(v, 0.5) * 1000 for k, v in found["latencies"].items()}
    if len(args.entries) > 1:
        small, large = min(args.entries), max(args.entries)
        print(f"\n| tool | p50 at {small:,} | p50 at {large:,} | ratio (target <= "
              f"{P50_GROWTH}x) |\n| --- | ---: | ---: | ---: |")  # fmt: skip
        for name in sorted(p50s[large]):
            ours, base = p50s[large][name], p50s[small][name]
            met = ours <= P50_GROWTH * base
            print(f"| `{name}` | {base:.2f} ms | {ours:.2f} ms | {ours / base:.2f}x |")
            rows.append(row(f"{name} p50 growth {small:,} -> {large:,} entries",
                            f"`{name}` p50 per call at {large:,} vs {small:,} entries",
                            f"{ours:.2f} ms", baseline=f"{base:.2f} ms",
                            ratio=f"{ours / base:.2f}×", target=f"≤ {P50_GROWTH}×",
                            met=met))  # fmt: skip
    note = f"{args.calls:,} calls per size, {args.notes:,} notes" + (
        f"; {args.note}" if args.note else ""
    )
    write(__file__, rows, note=note, folder=args.out)
    return 0 if all(row["met"] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
