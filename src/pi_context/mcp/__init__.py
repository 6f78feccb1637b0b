"""The notes and history tools as an MCP server over stdio (``pi-context mcp``).

Needs the optional ``mcp`` package (``pip install 'pi-context[mcp]'``); importing this package
does not import it, so the CLI can say so instead of failing.
"""
