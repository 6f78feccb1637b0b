"""The reference implementation served over the conformance protocol.

Steps go through each spec's generated wire reducer (``step_wire``), which decides straight
from the JSON values and reports the lazy facts it read as ``consulted``. Every request gets
exactly one reply; a request that cannot be served gets ``{"ok": false, "error": ...}``
naming the problem and the server keeps going.

Input is bytes of unknown shape: a line longer than ``MAX_LINE`` is skipped unbuffered (in
linear time, however long) and answered with an error naming the limit, and every reply is
valid JSON (``protocol.encode``) or, when it cannot be, an error reply saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO

from pi_context.checks.conformance.protocol import (
    MAX_LINE,
    PROTOCOL,
    LineBuffer,
    ProtocolError,
    Request,
    encode,
    encode_step_reply,
    error_reply,
    parse_request,
)
from pi_context.spec import load, spec_path
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import NotGenerated, ResetControl, spec_ids
from pi_context.statemachine.reset_control import reset_control as committed_handle
from pi_context.statemachine.wirecheck import WireError

_STEP_KEYS = frozenset({"ok", "state", "effect", "consulted"})
"""A step reply's own keys; any other key is what the effect carries."""
_UNKNOWN = object()  # a spec whose carried_wire was not looked up yet


class Server:
    def __init__(self, specs: Sequence[Spec | ResetControl]) -> None:
        """Serve ``specs``: loaded specs (their generated code found, or generated for this
        process), or handles of committed generated code (``committed``)."""
        self._served: dict[str, ResetControl] = {}
        self._carrying: dict[str, frozenset[str]] = {}  # spec id -> the rows that carry
        self._carriers: dict[str, Any] = {}  # spec id -> its carried_wire (None: it has none)
        self._specs = {spec.id: spec for spec in specs if isinstance(spec, Spec)}
        for spec in specs:
            if spec.id in self._served:
                where = f" ({spec.path})" if isinstance(spec, Spec) else ""
                raise ValueError(f"two specs with the id {spec.id!r}{where}")
            self._served[spec.id] = spec if isinstance(spec, ResetControl) else _generated(spec)

    @classmethod
    def committed(cls) -> Server:
        """Every committed spec, through its committed generated code when that is of the
        spec's very bytes (no spec is parsed: the server starts at once), else generated
        for this process from the loaded spec."""
        handles: list[Spec | ResetControl] = []
        for spec_id in spec_ids(None):
            try:
                handles.append(committed_handle(spec_id))
            except NotGenerated as stale:  # an edited spec: its code is generated here
                handles.append(stale.spec)
        return cls(handles)

    @property
    def spec_ids(self) -> list[str]:
        return list(self._served)

    def handle(self, line: bytes) -> dict[str, Any]:
        """The reply to one request line; never raises for bad input."""
        try:
            request = parse_request(line)
        except ProtocolError as err:
            return error_reply(str(err))
        if request.op == "hello":
            return {"ok": True, "protocol": PROTOCOL, "specs": self.spec_ids}
        return self._step(request)

    def reply(self, line: bytes) -> bytes:
        """The encoded reply line to one request line; never raises."""
        try:
            message = self.handle(line)
            if message.get("ok") is True and "state" in message:
                carried = (
                    {k: v for k, v in message.items() if k not in _STEP_KEYS}
                    if len(message) > len(_STEP_KEYS)
                    else None
                )
                return encode_step_reply(
                    message["state"], message["effect"], message["consulted"], carried
                )
            return encode(message)
        except (ValueError, TypeError, RecursionError) as err:
            return encode(error_reply(f"the reply cannot be written as JSON: {err}"))
        except Exception as err:  # a defect here must not stop the server
            return encode(error_reply(f"internal error: {type(err).__name__}: {err}"))

    def _step(self, request: Request) -> dict[str, Any]:
        gen = self._served.get(request.spec)
        if gen is None:
            known = ", ".join(self._served) or "none"
            return error_reply(f"unknown spec {request.spec!r} (serving: {known})")
        consulted: list[str] = []
        try:
            next_state, effect, row = gen.wire.step_wire(request.state, request.event, consulted)
            carried = self._carried(gen, request.state, row)
        except WireError as err:
            return error_reply(f"{request.spec}: {err}")
        except Exception as err:  # a defect in generated code must not stop the server
            return error_reply(f"{request.spec}: internal error: {type(err).__name__}: {err}")
        # what the effect carries (the follow-up prompt) joins the reply, as upstream's result
        return {
            "ok": True,
            "state": next_state,
            "effect": effect,
            "consulted": consulted,
            **carried,
        }

    def _carried(self, gen: ResetControl, state: Any, row: str) -> dict[str, Any]:
        """What the effect of ``row`` carries in ``state`` (the follow-up prompt), asked of
        the generated code only for the rows of the spec that carry something (asking
        parses the state again)."""
        carried_wire = self._carriers.get(gen.id, _UNKNOWN)
        if carried_wire is _UNKNOWN:
            carried_wire = self._carriers[gen.id] = getattr(gen.wire, "carried_wire", None)
        if carried_wire is None:
            return {}
        rows = self._carrying.get(gen.id)
        if rows is None:
            spec = self._specs.get(gen.id) or load(spec_path(gen.id), analyse=False)
            rows = self._carrying[gen.id] = frozenset(r.id for r in spec.rows if r.carry)
        if row not in rows:
            return {}
        found: dict[str, Any] = carried_wire(state, row)
        return found

    def serve(self, inp: BinaryIO, out: BinaryIO) -> None:
        """Answer requests until end of input.

        Input is read in whatever chunks are available and the replies to a chunk are written
        and flushed together: pipelined requests are batched, and a lone request is never
        held back waiting for more input.
        """
        lines = LineBuffer(MAX_LINE)
        while True:
            chunk = _read_available(inp)
            if not chunk:
                break
            replies = [self._answer(line) for line in lines.feed(chunk)]
            if replies:
                out.write(b"".join(replies))
                out.flush()
        last = lines.finish()
        if last:
            out.write(b"".join(self._answer(line) for line in last))
            out.flush()

    def _answer(self, line: bytes | None) -> bytes:
        if line is None:
            return encode(error_reply(f"request is longer than {MAX_LINE} bytes (the limit)"))
        return self.reply(line)


def _generated(spec: Spec) -> ResetControl:
    from pi_context.codegen.fresh import reset_control

    return reset_control(spec)


def _read_available(inp: BinaryIO) -> bytes:
    read1 = getattr(inp, "read1", None)
    if read1 is not None:
        data: bytes = read1(65536)
        return data
    return inp.read(65536)
