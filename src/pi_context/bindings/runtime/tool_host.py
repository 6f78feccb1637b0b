"""The tool-facing side of one runtime: its ``ToolContext`` (which carries the runtime to
the tools that need it), its schemas, its calls through the shared dispatcher, and the
answers of its two tools (the reset tool, ``wipe_memory`` or ``clear_memory`` as the
running generation names it, and ``get_context_remaining``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pi_context.bindings.tool_output import encode_json
from pi_context.bindings.tool_registry import all_tools, run_tool
from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolResult, error_result

from .budget import Budget, countdown
from .config import RuntimeConfig
from .control import Control
from .lifecycle import Lifecycle
from .protocol import ALREADY_PENDING_STATUS, REQUESTED_STATUS, RESET_RESULT_MESSAGE
from .tools import RESET_TOOL_NAMES
from .window import WindowView

EARLIER_NAMES = frozenset({"notes_edit"})
"""Tools answered under an earlier name but offered to the model only under the newest."""


@dataclass(slots=True, eq=False, repr=False)
class RuntimeTools:
    """Tools for one runtime: the two runtime tools and every registry tool, with the
    runtime's own context."""

    lifecycle: Lifecycle
    control: Control
    window: WindowView
    budget: Budget
    config: RuntimeConfig
    cwd: Callable[[], Path]

    def context(self) -> ToolContext:
        session = self.lifecycle.session
        model = self.lifecycle.model
        return ToolContext(
            session_path=session.path,
            notes_home=self.config.notes_home,
            cwd=self.cwd(),
            session_id=session.session_id,
            agent_name=self.config.agent_name,
            model_id=model.id if model else None,
            leaf_id=session.leaf_id,
            runtime=self,
            clock=session.now_ms,  # note times on the session's clock, as its entries are
        )

    def served(self) -> dict[str, Tool]:
        """Every registry tool the runtime offers the model: the reset tool only under the
        running generation's name, the notes update tool only under its newest name
        (``notes_edit``, the earlier one, is still answered by ``call``)."""
        offered = self.control.reset_tool
        return {
            name: tool
            for name, tool in all_tools().items()
            if (name not in RESET_TOOL_NAMES or name == offered) and name not in EARLIER_NAMES
        }

    def schemas(self) -> list[dict[str, JSONValue]]:
        """Function-calling declarations of every tool the runtime serves."""
        return [tool.schema() for tool in self.served().values()]

    def call(self, name: str, arguments: object = None) -> ToolResult:
        """Any pi-context tool for this session, through the shared dispatcher (the reset
        tool's other generation's name stays accepted: a model may still use it)."""
        return run_tool(name, arguments, self.context())

    def _shut_down(self, name: str) -> ToolResult | None:
        if self.lifecycle.active:
            return None
        return error_result(
            {"error": f"{name} needs a running pi-context runtime; this session's has shut down"}
        )

    def wipe_memory(self) -> ToolResult:
        """The model asks for a fresh window (the reset tool, under either generation's name):
        recorded once per window, committed at turn end."""
        name = self.control.reset_tool
        refused = self._shut_down(name)
        if refused is not None:
            return refused
        refusal = self.lifecycle.refuse_while_off(name)
        if refusal is not None:
            return error_result({"error": refusal})
        window = self.window.window_id
        step = self.control.tool_request(window)
        # The extension answers with the status alone; the window and a sentence are this
        # project's named option (``RuntimeConfig.reset_result_details``).
        payload: dict[str, JSONValue] = {
            "status": ALREADY_PENDING_STATUS if step.duplicate else REQUESTED_STATUS,
        }
        if self.config.reset_result_details:
            payload["window_id"] = window
            payload["message"] = RESET_RESULT_MESSAGE
        return ToolResult(text=encode_json(payload), details=payload, terminate=True)

    def get_context_remaining(self) -> ToolResult:
        """Tokens left before the final warning (0 at or past it; null when unknown)."""
        refused = self._shut_down("get_context_remaining")
        if refused is not None:
            return refused
        left = countdown(self.window.remaining(), self.budget.thresholds)
        payload: dict[str, JSONValue] = {"remaining_tokens": left}
        return ToolResult(text=encode_json(payload), details=payload)
