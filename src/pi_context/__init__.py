"""pi-context: a formally specified reset-control core for LLM context windows.

The public API a host embeds (see docs/embedding.md for a complete host loop):

Runtime (one per session; the agent loop calls it at its lifecycle points)
    Runtime, RuntimeConfig, ModelInfo, Usage, Policy, Thresholds, Notice,
    StartResult, ContextResult, BoundaryResult, HostLoop (the reference agent loop)
Sessions (Pi-compatible JSONL files)
    Session, SessionError, Durability, default_session_dir, seeded_uuids
Tools (model-facing notes, history and runtime tools)
    Tool, ToolContext, ToolResult, ToolError, all_tools, tool_schemas, run_tool
Spec registry (the generated core of each spec)
    reset_control, spec_ids, ResetControl, Spec, SpecError, load_spec
Conformance (check any implementation of a spec over the stdio protocol)
    run_conformance, ConformanceReport

Other hosts: ``pi-context mcp`` serves the notes and history tools over MCP
(``pi_context.mcp``, extra ``[mcp]``); ``pi_context.integrations.pydantic_ai.RuntimeAgent``
drives a pydantic-ai agent through the runtime (extra ``[pydantic-ai]``).

Names are imported on first use, so ``import pi_context`` stays cheap and this page stays an
overview: ``help(pi_context.Runtime)`` (or any name above) documents one name in full, and
``__all__`` lists them all. The sub-packages (``pi_context.spec``, ``pi_context.statemachine``,
``pi_context.bindings``, ``pi_context.codegen``, ``pi_context.checks``) hold the rest.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (CLI start-up)

# Public name -> module that defines it. The one place to update when internals move.
_EXPORTS: dict[str, str] = {
    # runtime
    "Runtime": "pi_context.bindings.runtime.runtime",
    "RuntimeConfig": "pi_context.bindings.runtime.config",
    "ModelInfo": "pi_context.bindings.runtime.config",
    "Notice": "pi_context.bindings.runtime.results",
    "StartResult": "pi_context.bindings.runtime.results",
    "ContextResult": "pi_context.bindings.runtime.results",
    "BoundaryResult": "pi_context.bindings.runtime.results",
    "HostLoop": "pi_context.integrations.loop",
    "Usage": "pi_context.bindings.runtime.budget",
    "Policy": "pi_context.bindings.runtime.budget",
    "Thresholds": "pi_context.bindings.runtime.budget",
    # sessions
    "Session": "pi_context.bindings.session",
    "SessionError": "pi_context.bindings.session",
    "Durability": "pi_context.bindings.session",
    "default_session_dir": "pi_context.bindings.session",
    "seeded_uuids": "pi_context.bindings.session",
    # tools
    "Tool": "pi_context.bindings.tools",
    "ToolContext": "pi_context.bindings.tools",
    "ToolResult": "pi_context.bindings.tools",
    "ToolError": "pi_context.bindings.tools",
    "all_tools": "pi_context.bindings.tool_registry",
    "tool_schemas": "pi_context.bindings.tool_registry",
    "run_tool": "pi_context.bindings.tool_registry",
    # spec registry
    "reset_control": "pi_context.codegen.fresh",
    "spec_ids": "pi_context.statemachine.reset_control",
    "ResetControl": "pi_context.statemachine.reset_control",
    "Spec": "pi_context.spec.model",
    "SpecError": "pi_context.spec.errors",
    "load_spec": "pi_context.spec.loader",
    # the version (written once, in support/version.py, which the build reads too)
    "__version__": "pi_context.support.version",
    # conformance
    "run_conformance": "pi_context.checks.conformance.runner",
    "ConformanceReport": "pi_context.checks.conformance.results",
}
# Public names whose attribute in the defining module is spelled differently.
_ALIASES: dict[str, str] = {"load_spec": "load"}

# Spelled out (not derived from _EXPORTS) so type checkers read it; a test keeps them equal.
__all__ = [
    "__version__",
    "Runtime",
    "RuntimeConfig",
    "ModelInfo",
    "Notice",
    "StartResult",
    "ContextResult",
    "BoundaryResult",
    "HostLoop",
    "Usage",
    "Policy",
    "Thresholds",
    "Session",
    "SessionError",
    "Durability",
    "default_session_dir",
    "seeded_uuids",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolError",
    "all_tools",
    "tool_schemas",
    "run_tool",
    "reset_control",
    "spec_ids",
    "ResetControl",
    "Spec",
    "SpecError",
    "load_spec",
    "run_conformance",
    "ConformanceReport",
]

if TYPE_CHECKING:
    # ``X as X``: an explicit re-export under mypy --strict.
    from pi_context.bindings.runtime.budget import Policy as Policy
    from pi_context.bindings.runtime.budget import Thresholds as Thresholds
    from pi_context.bindings.runtime.budget import Usage as Usage
    from pi_context.bindings.runtime.config import ModelInfo as ModelInfo
    from pi_context.bindings.runtime.config import RuntimeConfig as RuntimeConfig
    from pi_context.bindings.runtime.results import BoundaryResult as BoundaryResult
    from pi_context.bindings.runtime.results import ContextResult as ContextResult
    from pi_context.bindings.runtime.results import Notice as Notice
    from pi_context.bindings.runtime.results import StartResult as StartResult
    from pi_context.bindings.runtime.runtime import Runtime as Runtime
    from pi_context.bindings.session import Durability as Durability
    from pi_context.bindings.session import Session as Session
    from pi_context.bindings.session import SessionError as SessionError
    from pi_context.bindings.session import default_session_dir as default_session_dir
    from pi_context.bindings.session import seeded_uuids as seeded_uuids
    from pi_context.bindings.tool_registry import all_tools as all_tools
    from pi_context.bindings.tool_registry import run_tool as run_tool
    from pi_context.bindings.tool_registry import tool_schemas as tool_schemas
    from pi_context.bindings.tools import Tool as Tool
    from pi_context.bindings.tools import ToolContext as ToolContext
    from pi_context.bindings.tools import ToolError as ToolError
    from pi_context.bindings.tools import ToolResult as ToolResult
    from pi_context.checks.conformance.results import ConformanceReport
    from pi_context.checks.conformance.runner import run_conformance
    from pi_context.codegen.fresh import reset_control as reset_control
    from pi_context.integrations.loop import HostLoop as HostLoop
    from pi_context.spec.errors import SpecError as SpecError
    from pi_context.spec.loader import load as load_spec
    from pi_context.spec.model import Spec as Spec
    from pi_context.statemachine.reset_control import ResetControl as ResetControl
    from pi_context.statemachine.reset_control import spec_ids as spec_ids
    from pi_context.support.version import __version__ as __version__
else:
    # Hidden from type checkers, so a misspelt name is a type error rather than ``Any``.

    def __getattr__(name):
        import importlib

        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'pi_context' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
        globals()[name] = value  # later lookups skip this hook
        return value

    def __dir__():
        """The public API too, not only what a lookup has loaded so far: ``dir(pi_context)``
        and completion list every name of ``__all__``. Only ``inspect.getmembers`` (which
        ``help(pi_context)`` walks, loading each name it is given) sees what is loaded, so
        that ``help`` stays the overview the docstring is and imports nothing more."""
        import sys

        caller = sys._getframe(1).f_code.co_name
        if caller in ("getmembers", "_getmembers"):
            return sorted(globals())
        return sorted(set(globals()) | set(__all__))
