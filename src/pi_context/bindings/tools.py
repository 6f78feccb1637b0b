"""The toolkit for model-facing tools, shared by every host: the tool types, the one
argument checker and the one dispatcher (the static registry is ``tool_registry``).

A tool is framework-neutral: a name, a description, a JSON Schema for its arguments and a
plain handler from (context, arguments) to a result. ``Tool.run`` is the dispatcher every host
calls (our runtime, the MCP server, ``pi-context tool``, the integrations): it checks the
arguments against the schema (one wording for every tool), runs the handler and turns every
named failure into the error result the model sees. Hosts translate the declarations into
their own function-calling shapes; nothing here knows about an agent framework.

A tool that needs a live runtime (``wipe_memory``, ``get_context_remaining``) finds it in its
``ToolContext``: the host passes it (``Runtime.tool_context()`` does), never a registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from pi_context.support.frozen import field, frozen

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)
if TYPE_CHECKING:
    from typing import Any, Protocol

    JSONValue = Any  # JSON-ready value: dict/list/str/int/float/bool/None

    class LiveRuntime(Protocol):
        """What the runtime tools need from the host's live runtime."""

        def wipe_memory(self) -> ToolResult: ...
        def get_context_remaining(self) -> ToolResult: ...

else:
    JSONValue = object  # only annotations use it
    LiveRuntime = object


@frozen
class ToolContext:
    """What a tool may know about its host: the session, the notes root, the identity, and
    the live runtime when the host runs one (the runtime tools answer from it)."""

    session_path: Path | None = None
    notes_home: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    session_id: str | None = None
    agent_name: str = "pi"
    model_id: str | None = None
    leaf_id: str | None = None
    runtime: LiveRuntime | None = None
    # The host's clock (ms since the epoch) for the times tools write, e.g. a note's times;
    # None: the wall clock (``pi_context.support.clock.now_ms``). A runtime passes its session's.
    clock: Callable[[], int] | None = None


@frozen
class ToolResult:
    """What the model receives (``text``) plus structured details for the host."""

    text: str
    details: JSONValue = None
    is_error: bool = False
    # The tool ends the model's tool loop (wipe_memory): no follow-up request this turn.
    terminate: bool = False


class ToolError(Exception):
    """A named, model-facing error. ``payload`` is the JSON object the model sees:
    ``{"error": message, **fields}``, or a whole ``payload`` of a family's own shape."""

    def __init__(
        self,
        message: str,
        payload: Mapping[str, JSONValue] | None = None,
        **fields: JSONValue,
    ) -> None:
        super().__init__(message)
        self.payload: dict[str, JSONValue] = (
            dict(payload) if payload is not None else {"error": message, **fields}
        )


Handler = Callable[[ToolContext, Mapping[str, JSONValue]], ToolResult]


@frozen
class Tool:
    """A model-facing tool: name, description, JSON Schema of its arguments, and its handler.

    Call ``run`` (the dispatcher), not ``handler``: ``run`` checks the arguments and never
    raises for a named failure.
    """

    name: str
    description: str
    parameters: Mapping[str, JSONValue]
    handler: Handler
    # Tools that mutate storage must not run in parallel with each other.
    sequential: bool = False
    # A family whose errors are the published envelope ``{error, code, details?}`` (the notes
    # tools): the dispatcher's own argument errors take that shape too.
    envelope: bool = False

    def schema(self) -> dict[str, JSONValue]:
        """The function-calling declaration a host exports for this tool."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }

    def run(self, context: ToolContext, arguments: object = None) -> ToolResult:
        """Check ``arguments``, run the handler; every named failure is an error result, in
        the one error format (``error_format``) whichever family answered it, so every
        surface — the runtime, the CLI, the MCP server, the integrations — shows the same."""
        try:
            result = self.handler(context, check_arguments(self, arguments))
            if not result.is_error:
                return result
            from pi_context.bindings.error_format import error_text

            text = error_text(result.text)
            if text == result.text:
                return result
            return ToolResult(
                text=text, details=result.details, is_error=True, terminate=result.terminate
            )
        except ToolError as exc:
            payload = exc.payload
            if self.envelope and "code" not in payload:
                details = {k: v for k, v in payload.items() if k != "error"}
                payload = {"error": payload.get("error", str(exc)), "code": "invalid_argument"}
                if details:
                    payload["details"] = details
            return error_result(payload)
        except OSError as exc:
            where = exc.filename or "no file"
            return error_result({"error": f"{self.name}: {exc.strerror or exc} ({where})"})
        except Exception as exc:
            from pi_context.bindings.session.errors import SessionError

            if isinstance(exc, SessionError):
                return error_result({"error": str(exc)})
            raise


def check_arguments(tool: Tool, arguments: object) -> Mapping[str, JSONValue]:
    """``arguments`` as a mapping, or the one argument error every tool gives: a JSON object
    whose keys are all among the schema's ``properties`` (each tool's schema forbids others)."""
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{tool.name} arguments must be a JSON object")
    allowed = tool.parameters.get("properties")
    known = tuple(allowed) if isinstance(allowed, Mapping) else ()
    unknown = [key for key in arguments if key not in known]
    if unknown:
        from pi_context.bindings.tool_output import HEADER_FIELD_MAX_CHARS, middle_truncate

        shown = [middle_truncate(str(key), HEADER_FIELD_MAX_CHARS) for key in unknown[:20]]
        takes = f"its arguments are {', '.join(known)}" if known else "it takes no arguments"
        raise ToolError(
            f"{tool.name} does not take {', '.join(map(repr, shown))}; {takes}",
            unknown_arguments=shown,
        )
    return arguments


def error_result(payload: Mapping[str, JSONValue]) -> ToolResult:
    """The error result the model sees for ``payload``, within the output budget."""
    from pi_context.bindings.tool_output import fit_json

    return ToolResult(text=fit_json(dict(payload)), details=None, is_error=True)
