"""What the runtime-conformance machine shares with its parts: the usage bands and outcomes it
draws, the mirror (the spec interpreter fed the facts a host would report), the step a mirror
expects, and the model replies it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_context.spec import interpret
from pi_context.spec.model import HOST_ACTION_MEANINGS, Spec, TextType

Wire = dict[str, Any]

CONTEXT_WINDOW = 200_000
RESERVE = 16_384
BANDS: dict[str, int] = {
    # tokens used; every band sits thousands of tokens away from every budget line, so the
    # estimates of what follows the last reply never move a turn across one
    "low": 20_000,
    "reminder": CONTEXT_WINDOW - 35_000,
    "warning": CONTEXT_WINDOW - 22_000,
    "hard": CONTEXT_WINDOW - 5_000,
}
OUTCOMES = ("completed", "error", "overflow", "silent-overflow", "aborted")
"""A silent overflow is a reply that stopped normally but reports more input than the window."""
OUTCOME_DRAWS = ("completed", "completed", "error", "overflow", "silent-overflow", "aborted")
"""Outcomes as the random runs draw them (completed turns and overflows are what build up the
states worth checking)."""
INTERRUPTIONS = ("abort", "tree", "off", "switch", "shutdown")
AWAIT_POINTS = 3
"""The test's boundary builder awaits this many times; an interruption lands before one of
them, or (at point ``AWAIT_POINTS``) after the result is returned, before the host appends."""


class RuntimeMismatch(AssertionError):
    """The runtime did something its spec does not say."""


def check(condition: bool, message: str) -> None:
    """A mismatch between the runtime and its spec unless ``condition`` holds."""
    if not condition:
        raise RuntimeMismatch(message)


class Clock:
    """The test's wall clock: one millisecond per reading."""

    def __init__(self) -> None:
        self.now = 1_767_000_000_000

    def __call__(self) -> int:
        self.now += 1
        return self.now


@dataclass
class Mirror:
    """The spec interpreter, fed the facts a host would report."""

    spec: Spec
    state: Wire = field(init=False)

    def __post_init__(self) -> None:
        self.state = interpret.initial_state(self.spec)

    def has(self, event: str) -> bool:
        return self.spec.event(event) is not None

    def step(self, event: str, **fields: Any) -> tuple[interpret.Step, str, bool]:
        """Step ``event``: the interpreter's step, the row's cause and the duplicate flag
        (``facts``: by host fact name, as the runtime gathers them)."""
        declared = self.spec.event(event)
        assert declared is not None, event
        wire: Wire = {"type": event}
        facts = fields.pop("facts", None)
        for f in declared.fields:
            if f.name in fields or not isinstance(f.type, TextType):  # (a text may be absent)
                wire[f.name] = fields[f.name]
        if declared.facts:
            assert facts is not None
            wire["facts"] = {f.name: facts[f.host_fact] for f in declared.facts}
        pre = self.state
        done = interpret.step(self.spec, pre, wire)
        self.state = done.state
        row = next(r for r in self.spec.rows if r.id == done.row)
        cause = interpret.cause_text(row, pre) or ""
        effect = self.spec.effect(done.effect)
        duplicate = effect is not None and effect.duplicate
        return done, cause, duplicate

    def host_facts(self, event: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """The host facts the spec's facts ``names`` of ``event`` read (each fact's
        ``host_fact``)."""
        declared = self.spec.event(event)
        assert declared is not None, event
        hosts = {f.name: f.host_fact for f in declared.facts}
        return tuple(hosts[name] for name in names)

    def meaning(self, effect: str) -> Any:
        declared = self.spec.effect(effect)
        assert declared is not None and declared.host is not None
        return HOST_ACTION_MEANINGS[declared.host]


@dataclass(frozen=True)
class Expected:
    """What the runtime's own step for ``event`` must be."""

    event: str
    done: interpret.Step
    cause: str
    duplicate: bool


def reply(
    clock: Clock, band: str, outcome: str, calls: int, tool: str = "wipe_memory"
) -> dict[str, Any]:
    """The model's reply of one turn: usage in ``band``, ``calls`` calls of the reset
    ``tool``, ended as ``outcome`` says."""
    tokens = BANDS[band]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": f"turn {clock.now}"}]
        + [
            {
                "type": "toolCall",
                "id": f"w{clock.now}-{n}",
                "name": tool,
                "arguments": {},
            }
            for n in range(calls)
        ],  # fmt: skip
        "api": "test",
        "provider": "p",
        "model": "m",
        "usage": {
            "input": tokens,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens,
        },  # fmt: skip
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": clock(),
    }
    if outcome == "aborted":
        message["stopReason"] = "aborted"
    elif outcome == "error":
        message["stopReason"] = "error"
        message["errorMessage"] = "internal server error"
    elif outcome == "overflow":
        message["stopReason"] = "error"
        message["errorMessage"] = "prompt is too long: 250000 tokens > 200000 maximum"
    elif outcome == "silent-overflow":
        message["stopReason"] = "stop"
        message["usage"] = {**message["usage"], "input": CONTEXT_WINDOW + 10_000}
    return message
