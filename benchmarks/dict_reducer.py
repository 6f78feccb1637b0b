"""The baseline for the wire-path benchmark: reset-control@0.26 written by hand as a plain
reducer over JSON dicts — the way a host without pi-context would write it.

It reads the wire state and event as dicts, walks the table with ``if``s and builds the next
wire state as a new dict. It validates nothing beyond what dict indexing does, so it is the
fastest a straightforward JSON reducer gets; the benchmark checks that it agrees with the spec
on every case before timing it.
"""

from __future__ import annotations

from typing import Any

NONE = {"phase": "none"}
Wire = dict[str, Any]

_ARM = {"idle": "pending", "pending": "pending", "spent": "pending-spent"}
_ARM["pending-spent"] = "pending-spent"
_DISARM = {"idle": "idle", "pending": "idle", "pending-spent": "spent", "spent": "spent"}


def reduce(state: Wire, event: Wire) -> tuple[Wire, str]:
    request = state["request"]
    overflow = state["overflow"]
    phase = request["phase"]
    kind = event["type"]
    if kind == "turn_end":
        facts = event["facts"]
        if facts["aborted"]:
            return {"request": NONE, "overflow": "idle"}, "none"
        if facts["overflow"]:
            if facts["enabled"] and not facts["queued"] and facts["automaticResetEnabled"]:
                return {"request": NONE, "overflow": _ARM[overflow]}, "none"
            return {"request": NONE, "overflow": _DISARM[overflow]}, "none"
        if facts["failed"]:
            return {"request": NONE, "overflow": overflow}, "none"
        if not facts["enabled"]:
            return {"request": NONE, "overflow": "idle"}, "none"
        if phase == "tool-requested" and request["windowId"] == facts["windowId"]:
            return {"request": NONE, "overflow": "idle"}, "commit-boundary"
        if facts["hardReserveDue"]:
            return {"request": NONE, "overflow": "idle"}, "commit-boundary"
        if phase == "close-out" and request["windowId"] == facts["windowId"]:
            return {"request": request, "overflow": "idle"}, "none"
        return {"request": NONE, "overflow": "idle"}, "none"
    if kind == "before_settle":
        facts = event["facts"]
        if facts["aborted"]:
            return {"request": NONE, "overflow": _DISARM[overflow]}, "none"
        if overflow == "pending" and facts["queued"]:
            return state, "none"
        if overflow == "pending" and facts["enabled"] and facts["automaticResetEnabled"]:
            return {"request": NONE, "overflow": "spent"}, "recover-overflow"
        if phase == "none":
            return {"request": request, "overflow": _DISARM[overflow]}, "none"
        if facts["failed"]:
            return {"request": NONE, "overflow": _DISARM[overflow]}, "none"
        if request.get("windowId") != facts["windowId"]:
            return {"request": NONE, "overflow": _DISARM[overflow]}, "none"
        if facts["queued"]:
            after = "spent" if overflow == "pending-spent" else overflow
            return {"request": request, "overflow": after}, "none"
        if facts["enabled"] and (
            phase == "tool-requested"
            or request.get("source") == "manual"
            or facts["automaticResetEnabled"]
        ):
            return {"request": NONE, "overflow": _DISARM[overflow]}, "commit-boundary"
        return {"request": NONE, "overflow": _DISARM[overflow]}, "none"
    if kind == "close_out":
        if phase == "none" or request.get("windowId") != event["windowId"]:
            armed = {"phase": "close-out", "windowId": event["windowId"], "source": event["source"]}
            return {"request": armed, "overflow": overflow}, "close-out-armed"
        if (
            phase == "close-out"
            and request["source"] == "automatic"
            and event["source"] == "manual"
        ):
            manual = {"phase": "close-out", "windowId": request["windowId"], "source": "manual"}
            return {"request": manual, "overflow": overflow}, "already-pending"
        return state, "already-pending"
    if kind == "tool_request":
        if phase == "tool-requested" and request["windowId"] == event["windowId"]:
            return state, "already-pending"
        recorded = {"phase": "tool-requested", "windowId": event["windowId"]}
        return {"request": recorded, "overflow": overflow}, "none"
    if kind in ("settled", "abort", "clear"):
        return {"request": NONE, "overflow": "idle"}, "none"
    raise ValueError(f"unknown event type {kind!r}")


# ---------------------------------------------------------------- validating variant

_OVERFLOWS = frozenset({"idle", "pending", "pending-spent", "spent"})
_SOURCES = frozenset({"manual", "automatic"})
_REQUEST_KEYS = {
    "none": frozenset({"phase"}),
    "close-out": frozenset({"phase", "windowId", "source"}),
    "tool-requested": frozenset({"phase", "windowId"}),
}
_STATE_KEYS = frozenset({"request", "overflow"})
_TURN_END_FACTS = frozenset(
    {"windowId", "aborted", "overflow", "failed", "enabled", "queued"}
    | {"automaticResetEnabled", "hardReserveDue"}
)
_SETTLE_FACTS = frozenset(
    {"windowId", "queued", "enabled", "automaticResetEnabled", "aborted", "failed"}
)


def _check_state(state: Any) -> None:
    if type(state) is not dict or state.keys() != _STATE_KEYS:
        raise ValueError("state: expected an object with request and overflow")
    overflow, request = state["overflow"], state["request"]
    if type(overflow) is not str or overflow not in _OVERFLOWS:
        raise ValueError("state.overflow: not an overflow value")
    if type(request) is not dict:
        raise ValueError("state.request: expected an object")
    phase = request.get("phase")
    if type(phase) is not str or _REQUEST_KEYS.get(phase) != request.keys():
        raise ValueError("state.request: wrong phase or keys")
    if phase != "none" and type(request["windowId"]) is not str:
        raise ValueError("state.request.windowId: expected a string")
    if phase == "close-out" and (
        type(request["source"]) is not str or request["source"] not in _SOURCES
    ):
        raise ValueError("state.request.source: not a source")


def _check_event(event: Any) -> None:
    if type(event) is not dict:
        raise ValueError("event: expected an object")
    kind = event.get("type")
    if kind in ("turn_end", "before_settle"):
        facts = event.get("facts")
        keys = _TURN_END_FACTS if kind == "turn_end" else _SETTLE_FACTS
        if len(event) != 2 or type(facts) is not dict or facts.keys() != keys:
            raise ValueError("event.facts: wrong keys")
        for name, value in facts.items():
            if type(value) is not (str if name == "windowId" else bool):
                raise ValueError(f"event.facts.{name}: wrong type")
    elif kind == "close_out":
        if len(event) != 3 or type(event.get("windowId")) is not str:
            raise ValueError("event.windowId: expected a string")
        source = event.get("source")
        if type(source) is not str or source not in _SOURCES:
            raise ValueError("event.source: not a source")
    elif kind == "tool_request":
        if len(event) != 2 or type(event.get("windowId")) is not str:
            raise ValueError("event.windowId: expected a string")
    elif kind in ("settled", "abort", "clear"):
        if len(event) != 1:
            raise ValueError("event: unexpected keys")
    else:
        raise ValueError("event.type: unknown")


def reduce_checked(state: Any, event: Any) -> tuple[Wire, str]:
    """The same reducer, validating its JSON input first as any host that takes JSON must."""
    _check_state(state)
    _check_event(event)
    return reduce(state, event)
