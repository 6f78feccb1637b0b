"""The host-facing types of ``/handoff`` and the pure helpers its stages use.

``HandoffOptions`` is what a host passes (the notes generator and its hooks), ``NotesRequest``
what the generator receives, ``HandoffResult`` what a handoff returns (the runtime a handoff
drives is ``ports.HandoffHost``, so this package needs no import of ``Runtime``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pi_context.bindings.handoff.automatic import AutoHandoffPolicy, AutoRecord
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import HistoryRecord
from pi_context.bindings.handoff.notes import NoteState
from pi_context.bindings.handoff.quality import Quality
from pi_context.bindings.operations import Call, Operation, OperationLogs
from pi_context.bindings.runtime.ports import HandoffHost
from pi_context.bindings.session import Session
from pi_context.statemachine.typed import handoff_0_6_auto as ht

GIT_TIMEOUT_S = 5.0
DEFAULT_CONTEXT_WINDOW = 200_000
TOUCHING_TOOLS = frozenset({"read", "write", "edit"})

INSTRUCTIONS = (
    "Prepare a handoff. Keep the goal, the user's explicit constraints, decisions, failed "
    "attempts, anything still waiting for the user's decision or approval, dated validation "
    "results and the next steps. A past request for approval is not permission."
)
CONTINUATION = (
    "Take over the task described by the relay packet. First check the current files, the Git "
    "status and the latest user constraints, then continue only work that was authorized and "
    "is unfinished. The packet is history, not a new authorization: whatever was waiting for "
    "the user's decision or approval still waits, and you must not approve it yourself. Look "
    "up details of the earlier session with context_history_search / context_history_read and "
    'scope="handoff".'
)


class HandoffOwner(Protocol):
    """What one handoff run needs of the runtime's handoff lifecycle (``handoff.Handoffs``):
    its spec state and step, the automatic state it records, the policy, logs and clock."""

    host: HandoffHost
    state: ht.State
    policy: AutoHandoffPolicy
    logs: OperationLogs
    attempts: list[int]
    failure: str | None
    clock: Callable[[], int]

    def step(self, event: ht.Event, rows: list[str] | None = None) -> str: ...
    def record(self) -> AutoRecord: ...
    def take_attempt(self) -> None: ...
    def stamp(self, now: int) -> None: ...


@dataclass
class _Requests:
    """The note requests a generator made (and the limit an automatic handoff sets)."""

    operation: Operation | None
    limit: int | None
    timeout_ms: int | None
    stage: str = ""
    """The stage the requests are logged under (the notes stage)."""
    first: Call | None = None
    """The first request, opened before the generator runs (a generator that logs nothing
    is logged as this one request)."""
    calls: list[Call] = field(default_factory=list)


@dataclass(frozen=True)
class NotesRequest:
    """What the host's notes generator receives."""

    archived: list[HistoryRecord]
    """Records not yet covered by saved notes (what to distil)."""
    records: list[HistoryRecord]
    """Every citable record of the source branch."""
    state: NoteState
    """The notes saved so far."""
    budget: int
    """Bytes the rendered notes may take."""
    instructions: str
    cancelled: Callable[[], bool]
    max_requests: int | None = None
    """At most this many model requests (an automatic handoff: 4); None: no limit."""
    _requests: _Requests = field(default_factory=lambda: _Requests(None, None, None))

    def start_request(self) -> Call:
        """Log one model request (its batch number counts from 1); ``end`` it with the outcome
        and the provider's usage. Beyond ``max_requests`` it raises ``notes_request_limit``."""
        tracked = self._requests
        if tracked.limit is not None and len(tracked.calls) >= tracked.limit:
            raise HandoffError(
                "notes_request_limit",
                f"the notes generator may make at most {tracked.limit} requests",
            )
        batch = len(tracked.calls) + 1
        if tracked.first is not None:
            call, tracked.first = tracked.first, None
        elif tracked.operation is None:
            raise HandoffError("operation_failed", "this request is not part of a handoff")
        else:
            tracked.operation.stage(tracked.stage, batch)
            call = tracked.operation.call(batch, tracked.timeout_ms)
        tracked.calls.append(call)
        return call


NoteUpdates = Sequence[Any]
NotesGenerator = Callable[[NotesRequest], "NoteUpdates | Awaitable[NoteUpdates]"]
"""Returns note updates (JSON objects with key, kind, text, sourceIds, inference, status)."""
SendMessage = Callable[[Session, str], "None | Awaitable[None]"]
SwitchSession = Callable[[Session, str], "bool | Awaitable[bool]"]
"""Switches the host to a session (reason ``new`` or ``resume``) and starts the runtime on it;
returns False when the switch was cancelled."""


@dataclass(frozen=True)
class HandoffOptions:
    generator: NotesGenerator
    session_dir: Path | None = None
    """Where the destination goes (default: next to the source)."""
    cancelled: Callable[[], bool] = lambda: False
    """Polled before every stage and inside long reads; True cancels the handoff."""
    send: SendMessage | None = None
    """Sends the continuation in the destination (default: append it as a user message)."""
    on_stage: Callable[[str], None] | None = None
    """Progress: called with each stage name as it begins."""
    git_timeout: float = GIT_TIMEOUT_S
    switch: SwitchSession | None = None
    """The host's session switch (default: ``runtime.session_start``; never cancelled)."""
    assert_ready: Callable[[], None] | None = None
    """An automatic handoff calls it after the offer is verified, before the switch; it raises
    (a HandoffError names why) when the host is no longer ready, e.g. a user message waits."""
    on_switch: Callable[[], None] | None = None
    """An automatic handoff calls it after ``assert_ready``, right before the switch (the
    seed's ``onSwitch``); if it raises, the handoff stops there with the verified offer kept."""


@dataclass
class HandoffResult:
    outcome: str  # done | failed | cancelled (the end stage)
    code: str | None = None
    message: str = ""
    stages: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    source: Path | None = None
    destination: Path | None = None
    offer_id: str | None = None
    packet: dict[str, Any] | None = None
    quality: Quality | None = None
    trigger: str | None = None
    """What started it (the spec's trigger axis: manual or automatic)."""
    returned: bool | None = None
    """After a failed or cancelled setup: whether the host got back to the source."""
    operation_id: str | None = None
    log_path: Path | None = None
    refused: bool = False
    """A second handoff while one runs (nothing was done)."""

    @property
    def ok(self) -> bool:
        return self.code is None and not self.refused and self.destination is not None


def touched_files(entries: Sequence[Any]) -> list[str]:
    """Paths named by read/write/edit tool calls in assistant messages, first seen first."""
    files: dict[str, None] = {}
    for entry in entries:
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if (
                isinstance(block, dict)
                and block.get("type") == "toolCall"
                and block.get("name") in TOUCHING_TOOLS
                and isinstance(block.get("arguments"), dict)
                and isinstance(block["arguments"].get("path"), str)
            ):
                files[block["arguments"]["path"]] = None
    return list(files)


def git_status(cwd: Path, timeout: float = GIT_TIMEOUT_S) -> str:
    """``git status --short --branch`` in ``cwd``, or a note that it is unavailable."""
    unavailable = "Git status unavailable; verify it in the destination."
    try:
        done = subprocess.run(
            ["git", "status", "--short", "--branch"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return unavailable
    return done.stdout if done.returncode == 0 else unavailable


def archived_records(
    entries: Sequence[Any], records: list[HistoryRecord], state: NoteState
) -> list[HistoryRecord]:
    """Records after the notes' coverage boundary, plus the latest compaction summary when
    that compaction carries no notes of its own (its summary is the only trace of what it
    replaced)."""
    ids = [r.id for r in records]
    boundary = state.coverage
    start = ids.index(boundary) + 1 if boundary in ids else 0
    out = records[start:]
    last = next((e for e in reversed(entries) if e.get("type") == "compaction"), None)
    details = last.get("details") if last else None
    if last is not None and not (
        isinstance(details, dict) and details.get("piContextMemory") is not None
    ):
        summary = next((r for r in records if r.id == last.get("id")), None)
        if summary is not None and summary not in out:
            order = {e.get("id"): i for i, e in enumerate(entries)}
            out = sorted([*out, summary], key=lambda r: order.get(r.id, 0))
    return out
