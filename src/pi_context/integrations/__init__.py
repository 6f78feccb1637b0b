"""Ways for hosts that are not our own agent loop to use pi-context.

* ``tooling``      the tool registry in function-calling shapes, and error-safe dispatch
* ``pydantic_ai``  a pydantic-ai agent driven through the runtime (``pi-context[pydantic-ai]``)

The MCP server lives in ``pi_context.mcp`` (``pi-context[mcp]``).
"""
