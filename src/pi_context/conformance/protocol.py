"""The conformance protocol, version 1: message shapes, encoding and validation.

Newline-delimited JSON over stdio. The runner sends ``hello`` and ``step`` requests; the
implementation answers each line with exactly one line, in order. Both directions are
validated here so the server and the runner report a malformed message the same way: by
naming what was wrong and where, never with a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

PROTOCOL = 1
OPS = ("hello", "step")
MAX_LINE = 16 * 1024 * 1024  # a reply longer than this is treated as garbage, not buffered


class ProtocolError(ValueError):
    """A message that does not follow the protocol; the text says what and where."""


# one encoder and one decoder for every line: json.dumps/json.loads with options build a new
# one per call, which is a measurable share of a step
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact UTF-8 JSON and a newline."""
    return _ENCODER.encode(message).encode("utf-8") + b"\n"


def hello_request() -> dict[str, Any]:
    return {"op": "hello"}


def step_request(spec: str, state: Any, event: Any) -> dict[str, Any]:
    return {"op": "step", "spec": spec, "state": state, "event": event}


def error_reply(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
# msgspec reads a well-formed line several times faster and gives the same value (exact big
# integers, the last duplicate key wins); it refuses every line that needs care (not UTF-8, a
# lone surrogate, NaN, a number past a double, deep nesting), which `decode` then decides.
_FAST_DECODE = msgspec.json.Decoder().decode
_FAST_ERRORS = (msgspec.DecodeError, RecursionError, ValueError, TypeError)


def decode(line: bytes, what: str) -> dict[str, Any]:
    """Parse one line into a JSON object; ``what`` names the message in errors."""
    try:
        value = _FAST_DECODE(line)
    except _FAST_ERRORS:
        pass  # anything msgspec refuses is decided, and named, by the path below
    else:
        if type(value) is dict:
            return value
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ProtocolError(f"{what} is not UTF-8 (byte {err.start})") from None
    text = text.strip()
    if not text:
        raise ProtocolError(f"{what} is an empty line")
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except (json.JSONDecodeError, ValueError) as err:
        raise ProtocolError(f"{what} is not JSON ({err}): {_clip(text)}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {_clip(text)}")
    return value


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- requests (server side)


@dataclass(frozen=True)
class Request:
    op: str
    spec: str = ""
    state: Any = None
    event: Any = None


def parse_request(line: bytes) -> Request:
    message = decode(line, "request")
    op = message.get("op")
    if op is None:
        raise ProtocolError("request has no 'op' (expected one of: hello, step)")
    if op not in OPS:
        raise ProtocolError(f"unknown op {_clip(json.dumps(op))} (expected one of: hello, step)")
    if op == "hello":
        return Request("hello")
    for key in ("spec", "state", "event"):
        if key not in message:
            raise ProtocolError(f"step request has no {key!r}")
    spec = message["spec"]
    if not isinstance(spec, str):
        raise ProtocolError(f"step request 'spec' must be a string, got {json.dumps(spec)}")
    return Request("step", spec, message["state"], message["event"])


# ---------------------------------------------------------------- replies (runner side)


@dataclass(frozen=True)
class HelloReply:
    protocol: int
    specs: tuple[str, ...]


@dataclass(frozen=True)
class StepReply:
    state: Any
    effect: Any
    consulted: Any  # None when the implementation does not report reads


@dataclass(frozen=True)
class ErrorReply:
    error: str


def _ok(message: dict[str, Any], what: str) -> bool:
    ok = message.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolError(f"{what} has no boolean 'ok'")
    return ok


def _error(message: dict[str, Any], what: str) -> ErrorReply:
    error = message.get("error")
    if not isinstance(error, str):
        raise ProtocolError(f"{what} says ok:false without an 'error' string")
    return ErrorReply(error)


def parse_hello_reply(line: bytes) -> HelloReply | ErrorReply:
    message = decode(line, "hello reply")
    if not _ok(message, "hello reply"):
        return _error(message, "hello reply")
    protocol = message.get("protocol")
    if not isinstance(protocol, int) or isinstance(protocol, bool):
        raise ProtocolError("hello reply has no integer 'protocol'")
    specs = message.get("specs")
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise ProtocolError("hello reply 'specs' must be a list of spec id strings")
    return HelloReply(protocol, tuple(specs))


def parse_step_reply(line: bytes) -> StepReply | ErrorReply:
    """Shape only: whether the state and effect fit the spec is the checker's job."""
    message = decode(line, "step reply")
    if not _ok(message, "step reply"):
        return _error(message, "step reply")
    for key in ("state", "effect"):
        if key not in message:
            raise ProtocolError(f"step reply has ok:true but no {key!r}")
    return StepReply(message["state"], message["effect"], message.get("consulted"))
