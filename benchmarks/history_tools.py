"""History tool latency on a large session, and search time against ``grep -F`` (the baseline).

Writes a session of ``--entries`` entries (default 100,000) through the session binding: user
turns, assistant turns with tool calls, tool results, bash runs, extension messages and a reset
every few thousand entries. Then it times each tool call as a host makes it (open the file,
select the branch, project, answer) plus the breakdown, and compares ``history_search`` with
``grep -F`` over the same file.

    python benchmarks/history_tools.py [--entries N] [--repeat K] [--keep DIR] [--session FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_context.bindings.history.items import project_history
from pi_context.bindings.history.query import search_page
from pi_context.bindings.history.tools import TOOLS, gc_paused
from pi_context.bindings.session import Durability, Session
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tools import ToolContext

TOOL = {tool.name: tool for tool in TOOLS}
RARE = "needle-7f3a91"  # appears exactly once, near the start (worst case for newest-first)


def build(directory: Path, entries: int) -> Path:
    session = Session.create(
        "/tmp/pi-context-bench", session_dir=directory, durability=Durability.NONE
    )
    words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "the",
        "lazy",
        "dog",
        "進捗",
        "Café",
        "🎉",
    ]
    resets = 0
    step = max(1, entries // 20)
    written = 0
    while written < entries:
        n = written
        kind = n % 10
        body = " ".join(words[(n + k) % len(words)] for k in range(20 + n % 60))
        if n == 7:
            body += f" {RARE}"
        if kind in (0, 5):
            session.append_message({"role": "user", "content": body, "timestamp": n})
        elif kind in (1, 6):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": body}]
            if kind == 1:
                blocks.append(
                    {
                        "type": "toolCall",
                        "id": f"c{n}",
                        "name": "bash",
                        "arguments": {"command": f"grep -n {words[n % len(words)]} src/*.py"},
                    }
                )
            session.append_message(
                {"role": "assistant", "content": blocks, "stopReason": "stop", "timestamp": n}
            )
        elif kind in (2, 7):
            session.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{n - 1}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": body * 3}],
                    "isError": False,
                    "timestamp": n,
                }
            )
        elif kind == 3:
            session.append_message(
                {
                    "role": "bashExecution",
                    "command": "ls",
                    "output": body,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": n,
                }
            )
        elif kind == 4:
            session.append_custom_message("pi-context/guidance", body, False)
        elif kind == 8 and n % 5000 == 8:
            resets += 1
            window = f"pcw:bench000:{resets:08x}"
            session.append_custom(RESET_MARKER_TYPE, {"windowId": window})
            session.append_custom_message(BOOT_TYPE, body, False, {"windowId": window})
            written += 1
        else:
            session.append_custom("other/state", {"n": n})
        written += 1
        if written % step == 0:
            print(f"  wrote {written:,}/{entries:,} entries", file=sys.stderr, flush=True)
    assert session.path is not None
    return Path(session.path)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    samples: list[float] = []
    result: Any = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the session here and keep it")
    parser.add_argument(
        "--session", type=Path, help="reuse a session this script wrote earlier (with --keep)"
    )
    args = parser.parse_args()
    if shutil.which("grep") is None:
        print("grep is required for the baseline", file=sys.stderr)
        return 2

    directory = args.keep or Path(tempfile.mkdtemp(prefix="pi-context-bench-"))
    if args.session is not None:
        path = args.session
    else:
        directory.mkdir(parents=True, exist_ok=True)
        print(f"building a {args.entries:,}-entry session in {directory}", file=sys.stderr)
        path = build(directory, args.entries)
    size = path.stat().st_size
    ctx = ToolContext(session_path=path)

    def call(name: str, arguments: dict[str, Any]) -> str:
        result = TOOL[name].run(ctx, arguments)
        assert not result.is_error, result.text
        assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES
        return result.text

    rows: list[tuple[str, float]] = []
    # The breakdown runs with the cyclic collector paused, as the tools do.
    with gc_paused():
        t_open, session = timed(lambda: Session.open(path, readonly=True), args.repeat)
        branch = session.branch()
        t_branch, _ = timed(session.branch, args.repeat)
        t_project, history = timed(lambda: project_history(branch, session.session_id), args.repeat)
    items = sum(1 for _ in history.items())
    rows += [
        ("open session file", t_open),
        ("select branch", t_branch),
        ("project windows/items", t_project),
    ]

    t_search_only, page = timed(lambda: search_page(history, {"query": RARE}), args.repeat)
    assert len(page["items"]) == 1, page
    rows.append(("search_page only (rare literal)", t_search_only))

    first = json.loads(call("history_list", {"limit": 1}))["items"][0]
    for label, name, arguments in (
        ("history_windows", "history_windows", {}),
        ("history_list (first page)", "history_list", {}),
        ("history_list (cursor 90% deep)", "history_list", {"cursor": int(items * 0.9)}),
        ("history_search (rare literal)", "history_search", {"query": RARE}),
        ("history_search (common, OR of 2)", "history_search", {"query": ["fox", "進捗"]}),
        (
            "history_search (tool_call filter)",
            "history_search",
            {"query": "grep", "role": "tool_call", "tool_name": "bash"},
        ),
        ("history_read", "history_read", {"item_id": first["item_id"]}),
    ):
        elapsed, _ = timed(lambda n=name, a=arguments: call(n, a), args.repeat)
        rows.append((label, elapsed))

    def grep() -> None:
        done = subprocess.run(["grep", "-F", RARE, str(path)], capture_output=True, check=False)
        assert done.returncode == 0 and done.stdout.count(b"\n") == 1

    t_grep, _ = timed(grep, args.repeat)
    t_search = dict(rows)["history_search (rare literal)"]

    print(
        f"session: {len(branch):,} branch entries, {items:,} items, "
        f"{len(history.windows)} windows, {size / 1e6:.1f} MB"
    )
    print(f"median of {args.repeat} runs:")
    for label, elapsed in rows:
        print(f"  {label:<36} {elapsed * 1000:9.1f} ms")
    print(f"  {'grep -F (baseline)':<36} {t_grep * 1000:9.1f} ms")
    print(
        f"ratio history_search / grep -F: {t_search / t_grep:.1f}x "
        f"(search step alone: {t_search_only / t_grep:.2f}x)"
    )
    if args.keep is None and args.session is None:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
