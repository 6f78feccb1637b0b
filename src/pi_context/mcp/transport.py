"""The stdio transport of ``pi-context mcp``: one JSON-RPC message per line, and every line
that asks for an answer gets one.

The SDK's own stdio transport drops what its parser refuses — a line with a lone-surrogate
escape (what Node's ``JSON.stringify`` writes for an emoji cut in half), a line nested deeper
than its parser goes (about 195 levels), a JSON-RPC batch — with nothing sent back, so the
client waits forever; and its writer ends the server on a reply that holds a lone surrogate.
This transport replaces it (the SDK's server runs on top unchanged) and judges each line
before the SDK sees it (``judge``):

* a line that is not JSON — not UTF-8, ``NaN``/``Infinity`` or a number out of range, nested
  deeper than ``MAX_DEPTH``, holding a lone surrogate, longer than ``MAX_LINE_BYTES`` — gets a
  parse error (-32700) naming what was wrong and where, with the request's id when it can be
  read, else ``null``;
* a batch gets a refusal (-32600) for each request in it (MCP carries one message per line);
* JSON that is not a JSON-RPC message gets an invalid-request error (-32600), unless it is a
  notification or a response, which JSON-RPC never answers;
* a request before ``initialize`` (other than ``ping``) gets an invalid-request error (-32600)
  saying to send ``initialize`` first and naming the method that came too early.

Replies are always JSON: a lone surrogate in a reply is written as its ``\\uXXXX`` escape and a
reply that would hold a non-finite number is replaced by an internal error (-32603) for its
id. Lines are gathered without re-joining (linear in their length). At the end of input the
requests already read are answered before the server stops (for up to ``DRAIN_SECONDS``).
While serving, fd 0 reads the null device and fd 1 goes to stderr, so stray output of a
handler never reaches the wire; both are restored afterwards.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from anyio import to_thread
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_LINE_BYTES = 64 << 20
"""The longest line read (64 MiB); a longer one is skipped unread and answered with an error."""
MAX_DEPTH = 128
"""The deepest nesting of arrays and objects in a line (the request object is level 1)."""
DRAIN_SECONDS = 30.0
READ_CHUNK = 1 << 16

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

Id = str | int | None


@dataclass
class Judged:
    """What one line calls for: a message to hand the server, error replies to send, or
    nothing (a blank line, or a bad notification or response, which JSON-RPC never answers)."""

    message: types.JSONRPCMessage | None = None
    replies: list[dict[str, Any]] = field(default_factory=list)
    problem: str = ""
    """Why the line was not handed on (for stderr), or ``""``."""


def error_reply(request_id: Id, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def not_initialized(request_id: Id, method: str) -> dict[str, Any]:
    """The reply to a request sent before ``initialize`` (the SDK's own says only "Invalid
    request parameters", with no data): what to do, and the method that came too early."""
    reply = error_reply(
        request_id,
        INVALID_REQUEST,
        f'the session is not initialized: send "initialize" first ({method!r} came before it)',
    )
    reply["error"]["data"] = {"method": method, "expected": "initialize"}
    return reply


class _NotJSON(ValueError):
    pass


def _refuse_constant(name: str) -> float:
    raise _NotJSON(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJSON(f"the number {text[:40]} is out of range")
    return value


_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)
_LENIENT = json.JSONDecoder()  # only to read a refused line's id


def _request_id(value: object) -> Id:
    """The id of a request, when ``value`` is one that has a usable id."""
    if isinstance(value, dict) and "method" in value:
        found = value.get("id")
        if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
            return found
    return None


def _wants_reply(value: object) -> bool:
    """Whether JSON-RPC owes ``value`` an answer (not a notification, not a response)."""
    if not isinstance(value, dict):
        return True
    if "method" in value:
        return "id" in value
    return not ("id" in value and ("result" in value or "error" in value))


def _shape_problem(value: object) -> str:
    """Too deep, or a lone surrogate somewhere: what and where; ``""`` when neither."""
    stack: list[tuple[object, str, int]] = [(value, "", 1)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, str):
            if not node.isascii():
                try:
                    node.encode("utf-8")
                except UnicodeEncodeError as exc:
                    char = node[exc.start]
                    place = where or "the message"
                    return (
                        f"{place} holds a lone surrogate (\\u{ord(char):04x}), which is not "
                        "Unicode text"
                    )
            continue
        if isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                shown = where if len(where) <= 60 else where[:60] + "…"
                return f"the message is nested deeper than {MAX_DEPTH} levels (at {shown})"
            if isinstance(node, dict):
                for key, child in node.items():
                    path = f"{where}.{key}" if where else str(key)
                    stack.append((key, f"a key in {where or 'the message'}", depth))
                    stack.append((child, path, depth + 1))
            else:
                for index, child in enumerate(node):
                    stack.append((child, f"{where}[{index}]", depth + 1))
    return ""


def judge(line: bytes) -> Judged:
    """What ``line`` (without its newline) calls for; never raises."""
    try:
        return _judge(line)
    except Exception as exc:  # a defect of ours must cost this line only
        return Judged(
            replies=[error_reply(None, INTERNAL_ERROR, f"the line could not be handled: {exc}")],
            problem=f"internal error: {exc!r}",
        )


def _judge(line: bytes) -> Judged:
    if not line.strip():
        return Judged()
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _parse_error(f"the line is not UTF-8 (byte {exc.start} is {line[exc.start]:#04x})")
    try:
        value = _STRICT.decode(text)
    except _NotJSON as exc:
        return _parse_error(f"the line is not JSON: {exc}", *_lenient(text))
    except RecursionError:
        return _parse_error(f"the line is nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return _parse_error(f"the line is not JSON: {exc}")
    problem = _shape_problem(value)
    if problem:
        return _parse_error(problem, _request_id(value), _wants_reply(value))
    if isinstance(value, list):
        return _batch(value)
    if not isinstance(value, dict):
        return _invalid(None, f"a JSON-RPC message is an object, not {type(value).__name__}", True)
    if "method" in value and "id" in value and _request_id(value) is None:
        # A request whose id is no usable id (1.5, true, null, {} or []) is still a request
        # its sender waits on, never a notification: refused, with the id unknown (null).
        shown = json.dumps(value["id"], ensure_ascii=True)[:40]
        reason = f"a request's id is a string or an integer, not {shown}"
        return _invalid(None, reason, True)
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "the message"
        reason = f"not a JSON-RPC 2.0 message ({where}: {first['msg']})"
        return _invalid(_request_id(value), reason, _wants_reply(value))
    return Judged(message=message)


def _lenient(text: str) -> tuple[Id, bool]:
    """The id of a refused line and whether it is owed a reply, read leniently."""
    try:
        value = _LENIENT.decode(text)
    except (ValueError, RecursionError):
        return None, True
    return _request_id(value), _wants_reply(value)


def _parse_error(reason: str, request_id: Id = None, reply: bool = True) -> Judged:
    """A parse error; ``reply`` is false for a notification or a response (never answered)."""
    replies = [error_reply(request_id, PARSE_ERROR, f"Parse error: {reason}")] if reply else []
    return Judged(replies=replies, problem=reason)


def _invalid(request_id: Id, reason: str, reply: bool) -> Judged:
    replies = [error_reply(request_id, INVALID_REQUEST, f"Invalid request: {reason}")]
    return Judged(replies=replies if reply else [], problem=reason)


BATCH_REFUSAL = (
    "Invalid request: batches are not supported; MCP carries one JSON-RPC message per line "
    "(send each request on a line of its own)"
)


def _batch(members: list[Any]) -> Judged:
    ids = [_request_id(m) for m in members]
    replies = [error_reply(i, INVALID_REQUEST, BATCH_REFUSAL) for i in ids if i is not None]
    if not replies:
        replies = [error_reply(None, INVALID_REQUEST, BATCH_REFUSAL)]
    return Judged(replies=replies, problem=f"a batch of {len(members)} message(s)")


# --- writing ------------------------------------------------------------------------------------


def encode_reply(body: dict[str, Any]) -> bytes:
    """One reply as a JSON line: lone surrogates written as their escapes; a reply holding a
    non-finite number (not JSON) becomes an internal error for its id."""
    try:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        request_id = body.get("id")
        message = "the reply held a non-finite number (NaN or Infinity), which JSON cannot carry"
        text = json.dumps(error_reply(request_id, INTERNAL_ERROR, message), ensure_ascii=False)
    # Outside its strings a JSON text is ASCII, so an unencodable character is a lone
    # surrogate inside a string, and backslashreplace writes exactly its JSON escape.
    return text.encode("utf-8", "backslashreplace") + b"\n"


def message_body(message: types.JSONRPCMessage) -> dict[str, Any]:
    body: dict[str, Any] = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return body


# --- the transport ------------------------------------------------------------------------------


@dataclass
class _Pending:
    """Requests handed to the server and not answered yet (drained at the end of input)."""

    ids: Counter[Id] = field(default_factory=Counter)
    empty: anyio.Event = field(default_factory=anyio.Event)

    def add(self, request_id: Id) -> None:
        self.ids[request_id] += 1
        if self.empty.is_set():
            self.empty = anyio.Event()

    def done(self, request_id: Id) -> None:
        if self.ids[request_id] > 0:
            self.ids[request_id] -= 1
            if self.ids[request_id] == 0:
                del self.ids[request_id]
        if not self.ids:
            self.empty.set()


async def _lines(read: Callable[[int], Any]) -> AsyncIterator[bytes | int]:
    """Each line without its newline, or, for a line longer than ``MAX_LINE_BYTES``, its
    length (its bytes are dropped as they arrive). The pieces of a line are joined once."""
    pieces: list[bytes] = []
    size = 0
    skipping = False
    while True:
        chunk: bytes = await read(READ_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            size += len(piece)
            if size > MAX_LINE_BYTES:
                skipping, pieces = True, []
            elif not skipping:
                pieces.append(piece)
            if end < 0:
                break
            yield size if skipping else b"".join(pieces)
            pieces, size, skipping = [], 0, False
            start = end + 1
    if size:
        yield size if skipping else b"".join(pieces)


@contextlib.contextmanager
def _claimed_stdio() -> Any:
    """Private duplicates of fd 0 and 1 for the wire; fd 0 reads /dev/null and fd 1 writes
    to stderr meanwhile; both restored on exit."""
    import fcntl

    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def _warn(number: int, problem: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"pi-context mcp: line {number}: {problem}", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def stdio_transport(
    wire: tuple[int, int] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` for ``Server.run`` over stdin/stdout (or the given
    descriptors ``(read_fd, write_fd)``, which are left open)."""
    with contextlib.ExitStack() as stack:
        if wire is None:
            wire = stack.enter_context(_claimed_stdio())
        read_fd, write_fd = wire
        async with _serve(read_fd, write_fd) as streams:
            yield streams


@contextlib.asynccontextmanager
async def _serve(read_fd: int, write_fd: int) -> AsyncIterator[tuple[Any, Any]]:
    to_server, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_wire, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    write_lock = anyio.Lock()
    pending = _Pending()
    pending.empty.set()

    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]

    async def emit(body: dict[str, Any]) -> None:
        data = encode_reply(body)
        async with write_lock:
            await to_thread.run_sync(write_all, data)

    async def answer(body: dict[str, Any]) -> None:
        """An error reply of the reader's own; a client that went away is not an error."""
        with contextlib.suppress(OSError):
            await emit(body)

    def read_some(size: int) -> bytes:
        try:
            return os.read(read_fd, size)
        except OSError:
            return b""  # an unreadable input ends like a closed one

    async def read(size: int) -> bytes:
        return await to_thread.run_sync(read_some, size, abandon_on_cancel=True)

    async def reader() -> None:
        initialized = False  # an "initialize" request was read: the session may start
        async with to_server:
            number = 0
            async for line in _lines(read):
                number += 1
                if isinstance(line, int):
                    reason = f"the line is {line} bytes, over the limit of {MAX_LINE_BYTES}"
                    _warn(number, reason)
                    await answer(error_reply(None, PARSE_ERROR, f"Parse error: {reason}"))
                    continue
                judged = judge(line)
                if judged.problem:
                    _warn(number, judged.problem)
                for reply in judged.replies:
                    await answer(reply)
                message = judged.message
                if message is None:
                    continue
                if isinstance(message, types.JSONRPCRequest) and not initialized:
                    if message.method == "initialize":
                        initialized = True
                    elif message.method != "ping":  # MCP allows ping at any time
                        _warn(number, f"{message.method!r} before initialize")
                        await answer(not_initialized(message.id, message.method))
                        continue
                if isinstance(message, types.JSONRPCRequest):
                    pending.add(message.id)
                elif isinstance(message, types.JSONRPCNotification) and (
                    message.method == "notifications/cancelled"
                ):
                    cancelled = (message.params or {}).get("requestId")
                    if isinstance(cancelled, str | int):
                        pending.done(cancelled)  # a cancelled request is never answered
                await to_server.send(SessionMessage(message))
            with anyio.move_on_after(DRAIN_SECONDS):
                await pending.empty.wait()

    async def writer() -> None:
        gone = False  # the client closed its end: replies are dropped, the server never blocks
        async with from_server:
            async for session_message in from_server:
                message = session_message.message
                if not gone:
                    try:
                        body = message_body(message)
                    except Exception as exc:  # never lose the writer over one reply
                        request_id = getattr(message, "id", None)
                        reason = f"unserializable reply: {exc}"
                        body = error_reply(request_id, INTERNAL_ERROR, reason)
                    try:
                        await emit(body)
                    except OSError:
                        gone = True
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    pending.done(message.id)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reader)
        tasks.start_soon(writer)
        try:
            yield from_wire, to_wire
        finally:
            tasks.cancel_scope.cancel()
