"""A small progress display: redraws one line on a terminal, prints milestones otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.done = 0
        self._last = 0.0
        self._last_pct = 0
        self._start = time.monotonic()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.tty:
            if now - self._last >= 0.1 or self.done >= self.total:
                self._last = now
                pct = 100 * self.done // self.total
                self.stream.write(f"\r  {self.label}: {self.done}/{self.total} ({pct}%)")
                self.stream.flush()
        else:
            pct = 100 * self.done // self.total
            if pct // 25 > self._last_pct // 25 and pct < 100:
                self._last_pct = pct
                self.stream.write(f"  {self.label}: {pct}%\n")
                self.stream.flush()

    def finish(self, note: str = "") -> None:
        elapsed = time.monotonic() - self._start
        text = f"  {self.label}: {self.done}/{self.total} in {elapsed:.2f}s{note}"
        self.stream.write(("\r" + text + "\n") if self.tty else text + "\n")
        self.stream.flush()
