"""Memory of a long-lived host: the MCP server's resident size over 10,000 tool calls.

Writes a session (user and assistant turns with tool calls, tool results, a few resets) and a
notes home, starts ``pi-context mcp`` over stdio with the real MCP SDK client, and calls the
history and notes tools round-robin (``history_windows``, ``history_list``,
``history_search``, ``history_read``, ``notes_list``, ``notes_read``, ``notes_search``). The
server's resident set (``VmRSS`` from ``/proc``) is sampled every ``--every`` calls.

Baseline: the server's own resident size after the first ``--warmup`` calls (caches, the
history index and the imports are in place by then). Printed: the size at the end against that
baseline (target <= 1.10: a long-lived host does not grow with the number of calls), and the
growth per 1,000 calls after warm-up.

Then, in this process, what the collector does around the same calls: a long-lived host keeps
objects alive while a tool runs (here one reference cycle per call, dropped after it). Printed:
how many of those cycles are never collected (target 0: a tool call must not ``gc.freeze()``
them into the permanent generation) and the permanent generation's size.

    python benchmarks/mcp_memory.py [--calls N] [--entries N] [--every N] [--warmup N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from results import row, write

TARGET_RATIO = 1.10


def build_session(root: Path, entries: int) -> Path:
    from pi_context.bindings.session import Durability, Session, seeded_uuids
    from pi_context.bindings.session.boundary import reset_drafts

    session = Session.create(
        root / "project", root / "sessions", uuids=seeded_uuids(3), durability=Durability.NONE
    )
    stamp = 1_767_000_000_000
    turn = 0
    while len(session.entries) < entries:
        turn += 1
        stamp += 1_000
        session.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"step {turn}: port module"}],
             "timestamp": stamp}
        )  # fmt: skip
        call = {"type": "toolCall", "id": f"c{turn}", "name": "read", "arguments": {"path": "a"}}
        session.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": f"reading {turn}"}, call],
             "api": "x", "provider": "x", "model": "x", "usage": {"totalTokens": 1000 + turn},
             "stopReason": "toolUse", "timestamp": stamp + 1}
        )  # fmt: skip
        session.append_message(
            {"role": "toolResult", "toolCallId": f"c{turn}", "toolName": "read",
             "content": [{"type": "text", "text": "ledger " * 40}], "isError": False,
             "timestamp": stamp + 2}
        )  # fmt: skip
        if turn % 200 == 0:
            session.append_drafts(
                reset_drafts(session.branch(), session.session_id, "boot", "go on")
            )
    assert session.path is not None
    return session.path


def write_notes(home: Path, session: Path) -> None:
    from pi_context.bindings.session import Session
    from pi_context.bindings.tool_registry import run_tool
    from pi_context.bindings.tools import ToolContext

    opened = Session.open(session, readonly=True)
    context = ToolContext(
        session_path=session, notes_home=home, cwd=session.parent, session_id=opened.session_id
    )
    for n in range(20):
        content = f"# Note {n}\nledger module {n}\n" * 5
        written = run_tool("notes_write", {"path": f"note-{n:02d}.md", "content": content}, context)
        assert not written.is_error, written.text


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def server_pid() -> int:
    """The ``pi-context mcp`` child of this process."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"pi_context" in cmdline and b"mcp" in cmdline:
            return int(entry.name)
    raise RuntimeError("the MCP server process was not found")


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("history_windows", {}),
    ("history_list", {"limit": 20}),
    ("history_search", {"query": "module", "limit": 10}),
    ("history_read", {}),  # filled with a real address below
    ("notes_list", {}),
    ("notes_read", {"path": "note-03.md"}),
    ("notes_search", {"query": "ledger"}),
]


async def soak(session: Path, notes: Path, calls: int, every: int, warmup: int) -> list[Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pi_context", "mcp", "--session", str(session), "--notes-home", str(notes)],
        env={**os.environ},
    )
    samples: list[tuple[int, int, float]] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        pid = server_pid()
        listed = await client.call_tool("history_list", {"limit": 1})
        item = json.loads(listed.content[0].text)["items"][0]  # type: ignore[union-attr]
        CALLS[3] = ("history_read", {"window_id": item["window_id"], "item_id": item["item_id"]})
        started = time.perf_counter()
        for n in range(1, calls + 1):
            name, args = CALLS[n % len(CALLS)]
            result = await client.call_tool(name, args)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")
            if n % every == 0 or n == warmup:
                samples.append((n, rss_kib(pid), time.perf_counter() - started))
    return samples


def in_process(root: Path, session: Path, calls: int) -> tuple[int, int]:
    """(cycles dropped during ``calls`` tool calls that were never collected, frozen objects)."""
    import gc
    import weakref

    from pi_context.bindings.tool_registry import run_tool
    from pi_context.bindings.tools import ToolContext

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    context = ToolContext(session_path=session, notes_home=root / "notes")
    refs = []
    for n in range(calls):
        held = Cycle()  # alive while the tool runs, garbage after it
        refs.append(weakref.ref(held))
        name, args = CALLS[n % 3]
        run_tool(name, args, context)
        del held
    gc.collect()
    return sum(ref() is not None for ref in refs), gc.get_freeze_count()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=3_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--warmup", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi-context-mcp-memory-") as tmp:
        root = Path(tmp)
        os.environ["PI_CONTEXT_CACHE_DIR"] = str(root / "cache")
        session = build_session(root, args.entries)
        write_notes(root / "notes", session)
        samples = asyncio.run(soak(session, root / "notes", args.calls, args.every, args.warmup))
        leaked, frozen = in_process(root, session, args.calls)
    base = next(rss for n, rss, _ in samples if n == args.warmup)
    end_n, end, seconds = samples[-1]
    print(f"{'calls':>7}  {'RSS MiB':>8}  {'seconds':>8}")
    for n, rss, at in samples:
        print(f"{n:>7}  {rss / 1024:>8.1f}  {at:>8.1f}")
    ratio = end / base
    per_thousand = (end - base) / 1024 / max(1, (end_n - args.warmup) / 1000)
    verdict = "yes" if ratio <= TARGET_RATIO else "NO"
    print(
        f"\nRSS after {end_n} calls: {end / 1024:.1f} MiB; baseline (after {args.warmup} calls, "
        f"the server's own warm size): {base / 1024:.1f} MiB; ratio {ratio:.2f}x "
        f"(target <= {TARGET_RATIO:.2f}x: {verdict}); growth {per_thousand:+.2f} MiB per 1,000 "
        f"calls; {seconds:.1f} s"
    )
    print(
        f"in-process, {args.calls} calls: {leaked} of {args.calls} cycles dropped during a call "
        f"never collected (target 0: {'yes' if leaked == 0 else 'NO'}); {frozen} objects in "
        "the permanent generation"
    )
    write(
        __file__,
        [
            row(
                "rss",
                f"`pi-context mcp` resident size after {end_n:,} tool calls (MCP SDK client, "
                f"{args.entries:,}-entry session)",
                f"{end / 1024:.1f} MiB ({per_thousand:+.2f} MiB per 1,000 calls)",
                baseline=f"its own size after {args.warmup:,} calls: {base / 1024:.1f} MiB",
                ratio=f"{ratio:.2f}×",
                target=f"≤ {TARGET_RATIO:.2f}×",
                met=ratio <= TARGET_RATIO,
            ),
            row(
                "cycles",
                f"reference cycles a host drops during a tool call that are never freed "
                f"({args.calls:,} calls in-process)",
                f"{leaked:,} of {args.calls:,} ({frozen:,} objects frozen)",
                target="0",
                met=leaked == 0,
            ),
        ],
        note=f"{args.calls:,} calls, sampled every {args.every:,}",
    )
    return 0 if ratio <= TARGET_RATIO and leaked == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
