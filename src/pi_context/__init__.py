"""pi-context: a formally specified reset-control core for LLM context windows.

The spec (``pi_context.spec``) is the single source of truth; ``pi_context.statemachine``
holds the generator and the code it produced; ``pi_context.bindings`` holds the thin I/O
layers (sessions, notes, tools) around the pure core.
"""

__version__ = "0.1.0"
