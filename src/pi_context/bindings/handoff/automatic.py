"""The automatic-handoff record and policy: what a session stores, and how it is replayed.

The record is the seed's ``AUTO_HANDOFF_EVENT`` custom entry, ``{enabled, paused, attempts,
failure?}`` in that key order (``failure`` absent rather than null, as ``JSON.stringify``
writes an undefined field): ``attempts`` holds the times (ms since the epoch) of automatic
handoff attempts, oldest first; the last one of a verified destination's record is the time
its verification finished, which starts the cooldown. The last valid record on the branch is
the session's state; a malformed one is skipped and reported.

Replay (``restore_facts``) turns a record into the facts of ``handoff@0.6-auto``'s ``restore``
event: enabled, paused, cooling (no failure, the last attempt within the cooldown) and whether
attempts are left (fewer than ``max_attempts`` within ``attempt_window_ms``). ``record_for``
writes the spec's automatic state back as a record. The seed leaves the policy's figures open;
the defaults below are ours (docs/handoff.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pi_context.support.json_fields import json_fields

AUTO_HANDOFF_EVENT = "context-memory-auto-handoff"
MAX_KEPT_ATTEMPTS = 16
# What the spec's automatic axis records as enabled / paused.
_OFF = "off"
_PAUSED = "paused"


@dataclass(frozen=True)
class AutoHandoffPolicy:
    """When an automatic handoff starts, and how often. Every figure has a documented default."""

    enabled: bool = True
    """Whether a session without a record has automatic handoff on."""
    pressure_percent: float = 80.0
    """Start when the active window's usage (the budget owner's figure) reaches this share."""
    cooldown_ms: int = 15 * 60_000
    """After a verified destination, no automatic handoff for this long."""
    max_attempts: int = 3
    """At most this many automatic attempts ..."""
    attempt_window_ms: int = 60 * 60_000
    """... within this window; beyond it automatic handoff is exhausted until attempts age out
    (or the user resumes)."""
    max_requests: int = 4
    """Note requests an automatic handoff may make (the seed's ``maxRequests: 4``)."""
    generation_timeout_ms: int = 120_000
    """The notes generator's total time (the seed's GENERATION_TIMEOUT_MS); past it the
    handoff fails with ``checkpoint_timeout``."""

    def __post_init__(self) -> None:
        checks = {
            "pressure_percent": 0 < self.pressure_percent <= 100,
            "cooldown_ms": self.cooldown_ms >= 0,
            "max_attempts": self.max_attempts >= 1,
            "attempt_window_ms": self.attempt_window_ms >= 0,
            "max_requests": self.max_requests >= 1,
            "generation_timeout_ms": self.generation_timeout_ms > 0,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"AutoHandoffPolicy: invalid {', '.join(bad)}")

    def to_json(self) -> dict[str, Any]:
        return {
            **json_fields(self, snake=True, renamed={"enabled": "enabled_by_default"}),
            "tuning": "pressure threshold and cooldown are defaults awaiting real measurements",
        }


@dataclass(frozen=True)
class AutoRecord:
    enabled: bool
    paused: bool
    attempts: tuple[int, ...] = ()
    failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "enabled": self.enabled,
            "paused": self.paused,
            "attempts": list(self.attempts),
        }
        if self.failure is not None:
            out["failure"] = self.failure
        return out


@dataclass
class Replayed:
    """The branch's automatic state: its record (None: none valid) and the bad ones skipped."""

    record: AutoRecord | None
    entry_id: str | None = None
    invalid: list[str] = field(default_factory=list)


def parse_record(data: Any) -> AutoRecord | None:
    """A record as the seed writes it, or None when it is not one."""
    if not isinstance(data, dict):
        return None
    enabled, paused, attempts = data.get("enabled"), data.get("paused"), data.get("attempts")
    failure = data.get("failure")
    if not isinstance(enabled, bool) or not isinstance(paused, bool):
        return None
    if not isinstance(attempts, list) or len(attempts) > 1_000:
        return None
    times: list[int] = []
    for value in attempts:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not math.isfinite(value) or value < 0:
            return None
        times.append(int(value))
    if failure is not None and not isinstance(failure, str):
        return None
    return AutoRecord(enabled, paused, tuple(times), failure)


def replay(entries: Sequence[Any]) -> Replayed:
    """The last valid automatic-handoff record on ``entries`` (a branch, root first)."""
    out = Replayed(None)
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and entry.get("type") == "custom"
            and entry.get("customType") == AUTO_HANDOFF_EVENT
        ):
            continue
        record = parse_record(entry.get("data"))
        if record is None:
            out.invalid.append(str(entry.get("id")))
            continue
        out.record, out.entry_id = record, entry.get("id")
    return out


def recent(attempts: Sequence[int], policy: AutoHandoffPolicy, now: int) -> list[int]:
    """Attempts within the policy's attempt window."""
    return [a for a in attempts if now - a < policy.attempt_window_ms]


def attempts_left(attempts: Sequence[int], policy: AutoHandoffPolicy, now: int) -> bool:
    return len(recent(attempts, policy, now)) < policy.max_attempts


def cooled(attempts: Sequence[int], policy: AutoHandoffPolicy, now: int) -> bool:
    """The cooldown since the last stamp has passed (nothing stamped: it has)."""
    return not attempts or now - attempts[-1] >= policy.cooldown_ms


def cooldown_until(record: AutoRecord, policy: AutoHandoffPolicy) -> int | None:
    """When the cooldown a verified destination's stamp started ends (None: none started)."""
    if record.failure is not None or not record.attempts:
        return None
    return record.attempts[-1] + policy.cooldown_ms


@dataclass(frozen=True)
class RestoreFacts:
    enabled: bool
    paused: bool
    cooling: bool
    attempts_left: bool


def restore_facts(record: AutoRecord | None, policy: AutoHandoffPolicy, now: int) -> RestoreFacts:
    if record is None:
        return RestoreFacts(policy.enabled, False, False, True)
    until = cooldown_until(record, policy)
    return RestoreFacts(
        enabled=record.enabled,
        paused=record.paused,
        cooling=until is not None and now < until,
        attempts_left=attempts_left(record.attempts, policy, now),
    )


def record_for(status: str, attempts: Sequence[int], failure: str | None) -> AutoRecord:
    """The record of the spec's automatic state ``status`` (the attempts kept bounded)."""
    kept = tuple(attempts[-MAX_KEPT_ATTEMPTS:])
    return AutoRecord(status != _OFF, status == _PAUSED, kept, failure)


def stamped(record: AutoRecord, now: int) -> AutoRecord:
    """The seed's verified-destination record: the pending attempt stamped now, not paused,
    no failure (the cooldown starts here)."""
    return replace(record, paused=False, attempts=(*record.attempts[:-1], now), failure=None)


# ``/handoff auto WORD``: the spec event (its generated class) each word sends.
COMMANDS = {
    "on": "EnableEvent",
    "off": "DisableEvent",
    "pause": "PauseEvent",
    "resume": "ResumeEvent",
}
_STATUS_WORDS = {
    "off": "off",
    "armed": "on (armed)",
    "cooling": "cooling down",
    "paused": "paused",
    "exhausted": "attempts exhausted",
}


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds")
    return stamp.replace("+00:00", "Z")


def describe(status: str, record: AutoRecord, policy: AutoHandoffPolicy, now: int) -> str:
    """One line for the user: the state, and what ends it."""
    text = _STATUS_WORDS.get(status, status)
    until = cooldown_until(record, policy)
    if status == "cooling" and until is not None:
        text += f" until {_iso(until)}"
    if status == "exhausted":
        text += (
            f" ({len(recent(record.attempts, policy, now))} attempts in the last "
            f"{policy.attempt_window_ms / 60_000:g} min; /handoff auto resume starts afresh)"
        )
    if status == "paused" and record.failure:
        text += f" after {record.failure}"
    return text


def state_report(
    status: str, record: AutoRecord, policy: AutoHandoffPolicy, now: int
) -> dict[str, Any]:
    """The panel's ``auto_handoff`` block: the spec's state and the record behind it."""
    until = cooldown_until(record, policy)
    return {
        "status": status,
        "enabled": record.enabled,
        "paused": record.paused,
        "last_failure": record.failure,
        "attempts": list(record.attempts),
        "recent_attempts": len(recent(record.attempts, policy, now)),
        "max_attempts": policy.max_attempts,
        "cooldown_until": _iso(until) if until is not None and now < until else None,
        "summary": describe(status, record, policy, now),
    }
