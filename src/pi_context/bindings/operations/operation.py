"""One operation (a handoff, a note generation, a model call) as the log records it.

An ``Operation`` writes ``operation_start``, one ``stage`` per stage (with the note batch), the
``quality`` counts, ``call_start``/``call_end`` per model call and ``operation_end`` with its
outcome (``ok``, ``failed``, ``cancelled``) and code. ``move`` continues it in another
session's log (a handoff's destination). Every event is also handed to ``on_event`` (the
host's progress display); neither the log nor the display can fail the operation.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_context.bindings.session.jsonl import encode
from pi_context.support.clock import now_ms
from pi_context.support.json_fields import json_fields

from .log import LogWriter, log_path

EventSink = Callable[[dict[str, Any]], None]
Clock = Callable[[], int]


def iso(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def tool_signature(name: str, arguments: Any) -> str:
    """A tool call's identity for the repeated-tools heuristic: name + hash of its arguments."""
    digest = hashlib.sha256(encode(arguments).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{name}:{digest[:16]}"


@dataclass(frozen=True)
class CallUsage:
    """What a provider reported for one call (None: not reported)."""

    input: int | None = None
    output: int | None = None
    cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        return json_fields(self, omit_none=("input", "output", "cost"))


@dataclass
class OperationLogs:
    """Where operation logs go (None: the default state directory) and who watches them."""

    directory: Path | None = None
    on_event: EventSink | None = None
    clock: Clock = now_ms
    failure: str | None = None
    """The last write problem of any log (for the panel); None once a write succeeds."""

    def writer(self, session_file: Path | None) -> LogWriter | None:
        return None if session_file is None else LogWriter(log_path(session_file, self.directory))


class Operation:
    """One logged operation of ``kind`` (``handoff``, ``background``, ``compaction``,
    ``foreground``) in the session stored at ``session_file``."""

    def __init__(
        self,
        logs: OperationLogs,
        kind: str,
        session_file: Path | None,
        session_id: str,
        trigger: Mapping[str, Any] | None = None,
    ) -> None:
        self.logs = logs
        self.kind = kind
        self.id = str(uuid.uuid4())
        self.session_id = session_id
        self.writer = logs.writer(session_file)
        self.failures: list[str] = []
        self.ended = False
        self._calls = 0
        self._emit({"event": "operation_start", "trigger": dict(trigger or {})})

    @property
    def log_path(self) -> Path | None:
        return self.writer.path if self.writer is not None else None

    def _emit(self, fields: dict[str, Any]) -> dict[str, Any]:
        ms = self.logs.clock()
        event = {
            "v": 1,
            "at": iso(ms),
            "ms": ms,
            "kind": self.kind,
            "operationId": self.id,
            "sessionId": self.session_id,
            **fields,
        }
        if self.writer is not None:
            if self.writer.append(event):
                self.logs.failure = None
            else:
                self.logs.failure = self.writer.failure
                if self.writer.failure and self.writer.failure not in self.failures:
                    self.failures.append(self.writer.failure)
        if self.logs.on_event is not None:
            with contextlib.suppress(Exception):  # a display must not fail the operation
                self.logs.on_event(event)
        return event

    def stage(self, stage: str, batch: int | None = None) -> None:
        self._emit({"event": "stage", "stage": stage, **({"batch": batch} if batch else {})})

    def quality(self, quality: Mapping[str, Any]) -> None:
        self._emit({"event": "quality", "quality": dict(quality)})

    def move(self, session_file: Path | None, session_id: str) -> None:
        """Continue in another session's log (the destination of a handoff)."""
        old = self.log_path
        self._emit({"event": "moved", "to": str(session_file) if session_file else None})
        self.writer = self.logs.writer(session_file)
        self.session_id = session_id
        self._emit({"event": "moved", "from": str(old) if old else None})

    def call(self, batch: int | None = None, timeout_ms: int | None = None) -> Call:
        self._calls += 1
        return Call(self, batch if batch is not None else self._calls, timeout_ms)

    def finish(self, outcome: str, code: str | None = None, budget: Any = None) -> None:
        """End the operation once (later calls are ignored, as in the seed)."""
        if self.ended:
            return
        self.ended = True
        fields: dict[str, Any] = {"event": "operation_end", "outcome": outcome}
        if code is not None:
            fields["code"] = code
        if budget is not None:
            fields["budget"] = budget
        self._emit(fields)


class Call:
    """One model call inside an operation: ``call_start`` now, ``end`` once."""

    def __init__(self, operation: Operation, batch: int, timeout_ms: int | None) -> None:
        self.operation = operation
        self.id = str(uuid.uuid4())
        self.started = operation.logs.clock()
        self.done = False
        fields: dict[str, Any] = {"event": "call_start", "callId": self.id, "batch": batch}
        if timeout_ms is not None:
            fields["generationTimeoutMs"] = timeout_ms
        operation._emit(fields)

    def end(
        self,
        outcome: str,
        code: str | None = None,
        usage: CallUsage | None = None,
        tools: Sequence[str] = (),
    ) -> None:
        if self.done:
            return
        self.done = True
        fields: dict[str, Any] = {
            "event": "call_end",
            "callId": self.id,
            "outcome": outcome,
            "durationMs": max(0, self.operation.logs.clock() - self.started),
        }
        self.operation._emit(_ended(fields, code, usage, tools))


def _ended(
    fields: dict[str, Any], code: str | None, usage: CallUsage | None, tools: Sequence[str]
) -> dict[str, Any]:
    """A ``call_end`` event's ``fields`` with its code, usage and tools, where it has them."""
    if code is not None:
        fields["code"] = code
    if usage is not None and usage.to_json():
        fields["usage"] = usage.to_json()
    if tools:
        fields["tools"] = list(tools)
    return fields


def log_model_call(
    logs: OperationLogs,
    session_file: Path | None,
    session_id: str,
    *,
    kind: str,
    started_ms: int,
    ended_ms: int,
    outcome: str,
    code: str | None = None,
    usage: CallUsage | None = None,
    tools: Sequence[str] = (),
) -> None:
    """A model call the host made (its replies to the user: ``foreground``), as one
    ``call_start``/``call_end`` pair in the session's log."""
    writer = logs.writer(session_file)
    call_id = str(uuid.uuid4())
    common = {"v": 1, "kind": kind, "sessionId": session_id, "callId": call_id}
    start = {**common, "at": iso(started_ms), "ms": started_ms, "event": "call_start"}
    end: dict[str, Any] = {
        **common,
        "at": iso(ended_ms),
        "ms": ended_ms,
        "event": "call_end",
        "outcome": outcome,
        "durationMs": max(0, ended_ms - started_ms),
    }
    _ended(end, code, usage, tools)
    for event in (start, end):
        if writer is not None:
            logs.failure = None if writer.append(event) else writer.failure
    if logs.on_event is not None:  # reported after the fact: only its end is news
        with contextlib.suppress(Exception):
            logs.on_event(end)
