"""Long lines cost linear time on both sides of the conformance protocol.

For each size (default 2, 8, 16, 32 and 128 MB) one line of that size is sent to ``pi-context
serve`` (in 64 KiB writes, as a pipe delivers it), followed by a hello; the time from the
first byte to the hello's reply is taken. A line under the 16 MiB limit is parsed and
answered; a longer one is skipped unbuffered and answered with the limit's error. The runner's
side (``Implementation.receive``) is timed the same way on a reply of each size from a
process that writes one. Every figure is shown per MB, next to the smallest size's: linear
buffering keeps the ratio near 1 (the old join-and-split buffering made it grow with the
size: 8 MB 0.9 s, 32 MB 9.2 s, 128 MB 142 s).

    python benchmarks/long_lines.py [--sizes 8,32,128] [--repeat K]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time

from results import row, write

from pi_context.checks.conformance.protocol import MAX_LINE
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure

MB = 1_000_000
SERVE = [sys.executable, "-m", "pi_context", "serve"]
WRITER = (
    "import os, sys\n"
    "size = int(sys.argv[1])\n"
    "sys.stdin.buffer.readline()\n"
    "block = b'x' * 65536\n"
    'os.write(1, b\'{"ok":true,"error":"\')\n'
    "left = size\n"
    "while left > 0:\n"
    "    left -= os.write(1, block[: min(left, len(block))])\n"
    "os.write(1, b'\"}\\n')\n"
    "sys.stdin.buffer.readline()\n"
)


def serve_once(size: int) -> float:
    """Seconds from the first byte of a ``size``-byte line to the reply of the hello after it."""
    proc = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"op":"hello"}\n')
    proc.stdout.readline()  # started and answering
    head = b'{"op":"step","spec":"none","state":"'
    block = b"x" * 65536
    started = time.perf_counter()
    proc.stdin.write(head)
    left = size - len(head) - 3
    while left > 0:
        left -= proc.stdin.write(block[: min(left, len(block))]) or 0
    proc.stdin.write(b'"}\n{"op":"hello"}\n')
    first = proc.stdout.readline()
    second = proc.stdout.readline()
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(timeout=60)
    assert b'"ok":false' in first and b'"ok":true' in second, (first[:200], second[:200])
    return elapsed


def receive_once(size: int) -> float:
    """Seconds for the runner's transport to take in a ``size``-byte reply line."""
    command = shlex.join([sys.executable, "-c", WRITER, str(size)])
    impl = Implementation(command, timeout=600.0)
    try:
        impl.start()
        impl.send([b'{"op":"hello"}\n'])
        started = time.perf_counter()
        try:
            impl.receive("a long reply")
        except ImplementationFailure as failure:
            assert size > MAX_LINE, failure.message
        return time.perf_counter() - started
    finally:
        impl.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="2,8,16,32,128", help="line sizes in MB (default 2,8,16,32,128)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the best counts")
    args = parser.parse_args()
    sizes = [int(float(text) * MB) for text in args.sizes.split(",")]
    print(f"limit: {MAX_LINE:,} bytes per line; best of {args.repeat}")
    print("| line | serve | per MB | runner receive | per MB |")
    print("| --- | --- | --- | --- | --- |")
    base: tuple[float, float] | None = None
    ratios = (1.0, 1.0)
    for size in sizes:
        serve = min(serve_once(size) for _ in range(args.repeat))
        receive = min(receive_once(size) for _ in range(args.repeat))
        per = (serve / (size / MB), receive / (size / MB))
        base = base or per
        ratios = (per[0] / base[0], per[1] / base[1])
        print(
            f"| {size / MB:.0f} MB | {serve:.2f} s | {per[0] * 1000:.1f} ms ({ratios[0]:.2f}x)"
            f" | {receive:.2f} s | {per[1] * 1000:.1f} ms ({ratios[1]:.2f}x) |"
        )
    assert base is not None
    shown = f"{sizes[0] / MB:.0f}–{sizes[-1] / MB:.0f} MB"
    write(
        __file__,
        [
            row(
                f"{side}-linear",
                f"one line of {shown} {what}, time per MB at the largest against the smallest",
                f"{per[index] * 1000:.1f} ms/MB at {sizes[-1] / MB:.0f} MB",
                baseline=f"{base[index] * 1000:.1f} ms/MB at {sizes[0] / MB:.0f} MB",
                ratio=f"{ratios[index]:.2f}×",
                target="linear (≤ 2× per MB)",
                met=ratios[index] <= 2.0,
            )
            for index, (side, what) in enumerate(
                (("serve", "to `pi-context serve`"), ("receive", "to the runner's receive"))
            )
        ],
        note=f"best of {args.repeat}; past {MAX_LINE:,} bytes a line is skipped unbuffered",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
