"""Ways for hosts to drive pi-context.

* ``loop``         the reference host loop (``HostLoop``): the steps of an agent loop around a
                   ``Runtime``, which the demo and the pydantic-ai integration are built from
* ``pydantic_ai``  a pydantic-ai agent driven through the runtime (``pi-context[pydantic-ai]``)

The tool registry and its one dispatcher are ``pi_context.bindings.tool_registry``; the MCP
server lives in ``pi_context.mcp`` (``pi-context[mcp]``).
"""
