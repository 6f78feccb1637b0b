"""The conformance protocol, version 1: message shapes, encoding and validation.

Newline-delimited JSON over stdio. The runner sends ``hello`` and ``step`` requests; the
implementation answers each line with exactly one line, in order. Both directions are
validated here so the server and the runner report a malformed message the same way: by
naming what was wrong and where, never with a traceback.

Every line is bytes of unknown shape until these checks pass: at most ``MAX_LINE`` bytes,
UTF-8, nesting at most ``jsonlimits.MAX_DEPTH`` levels (checked before any parser runs),
numbers within a double's range, no ``NaN``/``Infinity``. ``encode`` only writes valid JSON:
lone surrogates are escaped and a non-finite number is refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from pi_context.support.jsonlimits import MAX_DEPTH, deeper_than
from pi_context.support.surrogates import escape

PROTOCOL = 1
OPS = ("hello", "step")
MAX_LINE = 16 * 1024 * 1024  # a line longer than this is refused unread, never buffered


class ProtocolError(ValueError):
    """A message that does not follow the protocol; the text says what and where."""


# one encoder and one decoder for every line: json.dumps/json.loads with options build a new
# one per call, which is a measurable share of a step
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


_FAST_ENCODE = msgspec.json.Encoder().encode


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact UTF-8 JSON and a newline.

    Raises ``ValueError`` for a value JSON cannot carry (a NaN or infinite number, nesting
    too deep to encode); lone surrogates are written as ``\\udXXX`` escapes.
    """
    try:
        text = _ENCODER.encode(message)
    except RecursionError:
        raise ValueError("the message nests too deeply to encode") from None
    return escape(text).encode("utf-8") + b"\n"


def encode_step_request(spec: str, state: Any, event: Any) -> bytes:
    """The line ``encode`` writes for ``step_request(spec, state, event)`` where ``state``
    and ``event`` are wire values of a spec (strings and booleans, in objects at most one
    level down: an event's facts): written by msgspec, as ``encode_step_reply`` is."""
    message = step_request(spec, state, event)
    if (
        state.__class__ is dict
        and event.__class__ is dict
        and not _has_number(state)
        and not _has_number(event)
    ):
        try:
            return _FAST_ENCODE(message) + b"\n"
        except (ValueError, TypeError, OverflowError, msgspec.EncodeError):
            pass  # a lone surrogate: spelt by encode
    return encode(message)


def encode_step_reply(
    state: Any, effect: str, consulted: list[str], carried: Mapping[str, Any] | None = None
) -> bytes:
    """The line ``encode`` writes for ``{"ok": true, "state": state, "effect": effect,
    "consulted": consulted, **carried}`` (``carried``: what the effect carries, the
    follow-up prompt) where ``state`` is a well-typed wire state of a spec (what a
    reducer returns): written by msgspec, several times faster. A spec's wire values are
    strings, booleans and objects of them (the spec language has no numbers), which msgspec
    writes byte for byte as ``encode`` does; a lone surrogate, which msgspec refuses, and
    anything that is not a wire state go to ``encode``."""
    message = {"ok": True, "state": state, "effect": effect, "consulted": consulted}
    if carried:
        message.update(carried)
    if state.__class__ is dict and not _has_number(state):
        try:
            return _FAST_ENCODE(message) + b"\n"
        except (ValueError, TypeError, OverflowError, msgspec.EncodeError):
            pass  # a lone surrogate: spelt by encode
    return encode(message)


def _has_number(state: dict[str, Any]) -> bool:
    """Whether a number sits among the state's values (msgspec spells floats its own way):
    never so for a wire state, checked one level deep (the depth of a wire state)."""
    for value in state.values():
        cls = value.__class__
        if cls is str or cls is bool:
            continue
        if cls is dict:
            for inner in value.values():
                if inner.__class__ is float or inner.__class__ is int:
                    return True
        elif cls is float or cls is int:
            return True
    return False


# ---------------------------------------------------------------- framing


class LineBuffer:
    """Splits a byte stream into lines in linear time, whatever the line lengths.

    Only each new chunk is searched for line ends, and the start of a line not yet ended is
    kept as a list of pieces that is joined once, when the line ends. A line longer than
    ``limit`` is not kept at all: its bytes are dropped as they arrive and the line comes out
    as ``None``, so the caller can answer it with an error.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._over = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        complete: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                break
            complete.append(self._take(chunk[start:end]))
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:] if start else chunk)
        return complete

    @property
    def overflowing(self) -> bool:
        """Whether the line being read is already over the limit."""
        return self._over

    def finish(self) -> list[bytes | None]:
        """What is left at end of input: the unterminated last line (None if it was over
        the limit), or nothing when only blank space is left."""
        if self._over:
            self._over = False
            return [None]
        rest = b"".join(self._pieces)
        self._pieces, self._size = [], 0
        return [rest] if rest.strip() else []

    def _add(self, piece: bytes) -> None:
        if self._over:
            return
        self._size += len(piece)
        if self._size > self.limit:
            self._pieces, self._size, self._over = [], 0, True
            return
        self._pieces.append(piece)

    def _take(self, tail: bytes) -> bytes | None:
        if not self._pieces and not self._over:
            return tail if len(tail) <= self.limit else None
        self._add(tail)
        if self._over:
            self._over = False
            return None
        line = b"".join(self._pieces)
        self._pieces, self._size = [], 0
        return line


# ---------------------------------------------------------------- messages


def hello_request() -> dict[str, Any]:
    return {"op": "hello"}


def step_request(spec: str, state: Any, event: Any) -> dict[str, Any]:
    return {"op": "step", "spec": spec, "state": state, "event": event}


def error_reply(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"the number {_clip(text, 40)} is outside the range of a double")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite)
# msgspec reads a well-formed line several times faster and gives the same value (exact big
# integers, the last duplicate key wins); it refuses every line that needs care (not UTF-8, a
# lone surrogate, NaN, a number past a double, deep nesting), which `decode` then decides.
_FAST_DECODE = msgspec.json.Decoder().decode
_FAST_ERRORS = (msgspec.DecodeError, RecursionError, ValueError, TypeError)


def decode(line: bytes, what: str) -> dict[str, Any]:
    """Parse one line into a JSON object; ``what`` names the message in errors."""
    if len(line) > MAX_LINE:
        raise ProtocolError(f"{what} is longer than {MAX_LINE} bytes (the limit)")
    if deeper_than(line):
        raise ProtocolError(f"{what} nests deeper than {MAX_DEPTH} levels (the limit)")
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
    except RecursionError:  # the stack was deep already: the same answer as the limit's
        raise ProtocolError(f"{what} nests too deeply to parse (limit {MAX_DEPTH})") from None
    except (json.JSONDecodeError, ValueError) as err:
        raise ProtocolError(f"{what} is not JSON ({err}): {_clip(text)}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {_clip(text)}")
    return value


def _clip(text: str, limit: int = 80) -> str:
    """At most ``limit`` characters of ``text``, printable (lone surrogates escaped)."""
    return escape(text if len(text) <= limit else text[: limit - 3] + "...")


# ---------------------------------------------------------------- requests (server side)


class Request(NamedTuple):
    """A request, as the server reads it (a tuple: one is made per request)."""

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
        raise ProtocolError(f"step request 'spec' must be a string, got {_clip(json.dumps(spec))}")
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
    prompt: Any = None  # the follow-up prompt the effect carries (None: the reply has none)


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
    return StepReply(
        message["state"], message["effect"], message.get("consulted"), message.get("prompt")
    )
