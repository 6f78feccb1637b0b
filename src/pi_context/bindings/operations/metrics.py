"""Reading operation logs back: the events of a session (and of its handoff parent, up to the
handoff) and the seed's metrics over them.

Missing data is not zero: a primary log file that does not exist, a file that exists but
cannot be read, and a line that is not one JSON object (a torn last line after a crash) are
each counted, never silently skipped, and a rate with no sample is ``None``.

Metrics (each counts exactly this):

- ``calls``: model calls started (``call_start``);
- ``failedCalls`` / ``cancelledCalls``: calls that ended failed / cancelled;
- ``unfinishedCalls``: calls started that have no end in the window;
- ``failureRate``: failed / ended calls (``None`` without an ended call);
- ``handoffs``: handoff operations that ended (any outcome); ``failedOperations``: operations
  of any kind that ended failed;
- ``returnedTokens``: output tokens the provider reported, all calls;
- ``extraTokens``: input + output tokens of the extension's own calls (every kind but
  ``foreground``, the host's replies to the user);
- ``unknownUsageCalls``: ended calls of the extension's own kinds without reported usage;
  ``nativeUnknownUsage``: ended ``foreground`` calls without reported usage;
- ``reportedCost``: the sum of provider-reported cost (calls that report none add nothing);
- ``callDurationMs``: summed durations of ended calls (not wall time: calls may overlap);
- ``suspectedRepeatedTools``: tool calls whose name and arguments repeat an earlier one in the
  window (a heuristic).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_context.bindings.session.jsonl import JSONLineError, parse
from pi_context.support.json_fields import json_fields

from .log import rotated

MAX_READ_BYTES = 8 * 1024 * 1024
FOREGROUND = "foreground"
OUR_KINDS = ("background", "compaction", "handoff")


@dataclass(frozen=True)
class LogSource:
    """One session's log in the window: events up to ``until_ms`` only (None: all). For a
    handoff parent that is the packet's creation: the millisecond it was made in counts, as
    the generation it summarises ended then at the latest."""

    path: Path
    session_id: str
    until_ms: int | None = None


@dataclass
class Metrics:
    calls: int = 0
    failed_calls: int = 0
    cancelled_calls: int = 0
    unfinished_calls: int = 0
    failure_rate: float | None = None
    handoffs: int = 0
    failed_operations: int = 0
    returned_tokens: int = 0
    extra_tokens: int = 0
    unknown_usage_calls: int = 0
    native_unknown_usage: int = 0
    reported_cost: float = 0.0
    call_duration_ms: int = 0
    suspected_repeated_tools: int = 0

    def to_json(self) -> dict[str, Any]:
        out = json_fields(self, snake=True)
        out["reported_cost"] = round(self.reported_cost, 9)
        return out


@dataclass
class Diagnostics:
    """What the log window holds, and what it could not hold."""

    events: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    files: list[str] = field(default_factory=list)
    missing_primary_files: int = 0
    unavailable_files: int = 0
    invalid_lines: int = 0

    def window_json(self) -> dict[str, Any]:
        return {
            "files": list(self.files),
            "missing_primary_files": self.missing_primary_files,
            "unavailable_files": self.unavailable_files,
            "invalid_lines": self.invalid_lines,
        }


def read_diagnostics(sources: Sequence[LogSource]) -> Diagnostics:
    """The events of every source (oldest rotation first), and the metrics over them."""
    out = Diagnostics()
    for source in sources:
        out.files.append(str(source.path))
        for index, path in enumerate(reversed(rotated(source.path))):
            primary = index == len(rotated(source.path)) - 1
            data = _read(path)
            if data is None:
                if primary:
                    out.missing_primary_files += 1
                continue
            if not isinstance(data, bytes):
                out.unavailable_files += 1
                continue
            for event in _lines(data, out):
                if source.until_ms is not None and _ms(event) > source.until_ms:
                    continue
                out.events.append(event)
    out.events.sort(key=_ms)
    out.metrics = compute_metrics(out.events)
    return out


def _read(path: Path) -> bytes | None | bool:
    """The file's bytes; None when it does not exist; False when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_READ_BYTES:
            return False
        chunks: list[bytes] = []
        total = 0
        while total <= MAX_READ_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return False if total > MAX_READ_BYTES else b"".join(chunks)
    except OSError:
        return False
    finally:
        os.close(fd)


def _lines(data: bytes, out: Diagnostics) -> Iterable[dict[str, Any]]:
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = parse(raw.decode("utf-8"))
        except (UnicodeDecodeError, JSONLineError, RecursionError):
            out.invalid_lines += 1
            continue
        if not isinstance(value, dict) or not isinstance(value.get("event"), str):
            out.invalid_lines += 1
            continue
        yield value


def _ms(event: dict[str, Any]) -> int:
    value = event.get("ms")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value and abs(value) != float("inf") else None


def compute_metrics(events: Sequence[dict[str, Any]]) -> Metrics:
    m = Metrics()
    started: dict[str, dict[str, Any]] = {}
    ended: set[str] = set()
    seen_tools: set[str] = set()
    finished = 0
    for event in events:
        kind = event.get("event")
        call = event.get("callId")
        if kind == "call_start" and isinstance(call, str):
            m.calls += 1
            started[call] = event
        elif kind == "call_end" and isinstance(call, str):
            if call in ended:
                continue
            ended.add(call)
            finished += 1
            outcome = event.get("outcome")
            m.failed_calls += outcome == "failed"
            m.cancelled_calls += outcome == "cancelled"
            usage = event.get("usage")
            ours = event.get("kind") != FOREGROUND
            if isinstance(usage, dict):
                output = _num(usage.get("output")) or 0
                m.returned_tokens += int(output)
                if ours:
                    m.extra_tokens += int((_num(usage.get("input")) or 0) + output)
                m.reported_cost += _num(usage.get("cost")) or 0.0
            elif ours:
                m.unknown_usage_calls += 1
            else:
                m.native_unknown_usage += 1
            duration = _num(event.get("durationMs"))
            m.call_duration_ms += int(duration) if duration and duration > 0 else 0
            tools = event.get("tools")
            for signature in tools if isinstance(tools, list) else []:
                if isinstance(signature, str):
                    m.suspected_repeated_tools += signature in seen_tools
                    seen_tools.add(signature)
        elif kind == "operation_end":
            m.handoffs += event.get("kind") == "handoff"
            m.failed_operations += event.get("outcome") == "failed"
    m.unfinished_calls = sum(1 for call in started if call not in ended)
    m.failure_rate = None if finished == 0 else m.failed_calls / finished
    return m
