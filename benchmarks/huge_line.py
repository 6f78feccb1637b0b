"""Peak memory of the first history call on a session holding one huge line.

Writes a session whose one user message is a single line of ``--size`` MB of text (default
1024 = 1 GiB; with a few ordinary turns before and after it), then, in a fresh process per
call and a private cache directory, runs the first ``history_list`` (the cold index build),
then ``history_search`` for a word of the huge message and for one after it (the warm
index), and prints each process's peak resident memory (``ru_maxrss``) next to the line's
size, and its time. Smaller sizes (``--sizes 64,256,1024``) show how the peak grows with the
line: a small multiple of the line, never more.

    python benchmarks/huge_line.py [--sizes 64,256,1024] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from results import row, write

MB = 1 << 20
KEYS = ("cold-list", "warm-search-in", "warm-search-after")
CALL = (
    "import json, resource, sys, time\n"
    "from pathlib import Path\n"
    "from pi_context.bindings.history.tools import TOOLS\n"
    "from pi_context.bindings.tools import ToolContext\n"
    "tool = {t.name: t for t in TOOLS}[sys.argv[2]]\n"
    "started = time.perf_counter()\n"
    "result = tool.run(ToolContext(session_path=Path(sys.argv[1])), json.loads(sys.argv[3]))\n"
    "elapsed = time.perf_counter() - started\n"
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
    "print(json.dumps({'seconds': elapsed, 'peak': peak, 'error': result.is_error,\n"
    "                  'chars': len(result.text)}))\n"
)


def write_session(path: Path, size: int) -> None:
    """A v3 session: two turns, one user message of ``size`` bytes of words, two turns."""

    def entry(n: int, parent: str | None, role: str, text: str) -> bytes:
        content: object = text if role == "user" else [{"type": "text", "text": text}]
        return (
            json.dumps(
                {
                    "type": "message",
                    "id": f"{n:08x}",
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {"role": role, "content": content, "timestamp": n},
                }
            ).encode()
            + b"\n"
        )

    header = {
        "type": "session",
        "version": 3,
        "id": "0192aaaa-0000-7000-8000-00000000000a",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/x",
    }
    with open(path, "wb") as file:
        file.write(json.dumps(header).encode() + b"\n")
        file.write(entry(1, None, "user", "before the huge line"))
        file.write(entry(2, "00000001", "assistant", "an ordinary answer"))
        head = entry(3, "00000002", "user", "\0").split(b"\\u0000")
        file.write(head[0])
        block = b"needle haystack words " * (MB // 22)
        left = size - len(head[0]) - len(head[1])
        while left > 0:
            left -= file.write(block[: min(left, len(block))])
        file.write(head[1])
        file.write(entry(4, "00000003", "assistant", "after it, a marker word: zebrafish"))


def call(session: Path, cache: Path, name: str, arguments: dict[str, object]) -> dict[str, float]:
    env = {**os.environ, "PI_CONTEXT_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CALL, str(session), name, json.dumps(arguments)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1024", help="line sizes in MB, comma-separated")
    parser.add_argument("--keep", type=Path, help="write the sessions here and keep them")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="pi-context-huge-line-"))
    folder.mkdir(parents=True, exist_ok=True)
    baseline = call_baseline()
    print(f"interpreter and tools imported, no session: peak {baseline / MB:.0f} MB")
    rows: list[dict[str, object]] = []
    print("| line | call | seconds | peak RSS | peak / line |")
    print("| ---: | --- | ---: | ---: | ---: |")
    try:
        for size_mb in (int(s) for s in args.sizes.split(",")):
            session = folder / f"huge-{size_mb}.jsonl"
            cache = folder / f"cache-{size_mb}"
            shutil.rmtree(cache, ignore_errors=True)
            write_session(session, size_mb * MB)
            calls: list[tuple[str, str, dict[str, object]]] = [
                ("first history_list (cold index build)", "history_list", {}),
                ("history_search 'needle' (warm)", "history_search", {"query": "needle"}),
                ("history_search 'zebrafish' (warm)", "history_search", {"query": "zebrafish"}),
            ]
            for (label, name, arguments), key in zip(calls, KEYS, strict=True):
                got = call(session, cache, name, arguments)
                assert not got["error"], (label, got)
                print(
                    f"| {size_mb} MB | {label} | {got['seconds']:.2f} | {got['peak'] / MB:.0f} MB"
                    f" | {got['peak'] / (size_mb * MB):.2f} |"
                )
                rows.append(
                    row(
                        f"{key}-{size_mb}",
                        f"{label}, one {size_mb} MB line, fresh process: peak RSS",
                        f"{got['peak'] / MB:.0f} MB ({got['peak'] / (size_mb * MB):.2f}× the "
                        f"line), {got['seconds']:.2f} s",
                        baseline=f"the tools imported, nothing read: {baseline / MB:.0f} MB",
                    )
                )
            if args.keep is None:
                session.unlink()
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    write(__file__, rows, note="each call in a fresh process with a private cache directory")
    return 0


def call_baseline() -> int:
    code = CALL.split("started")[0] + (
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, "-", "history_list"], text=True,
                          capture_output=True, check=True)  # fmt: skip
    return int(done.stdout)


if __name__ == "__main__":
    sys.exit(main())
