"""``pi-context mcp``: serve the notes and history tools of one session over MCP (stdio)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pi_context.bindings.tools import ToolContext

from ._options import add_notes_home, fail

INSTALL_HINT = "pip install 'pi-context[mcp]'"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the notes and history tools over MCP (stdio)",
        description=(
            "Serve pi-context's notes and history tools for one Pi session as an MCP server on "
            "stdin/stdout, with the same names, schemas, byte budgets and errors as our own "
            f"tools. Needs the optional mcp package ({INSTALL_HINT})."
        ),
    )
    parser.add_argument(
        "--session", type=Path, required=True, metavar="FILE", help="Pi session JSONL file"
    )
    add_notes_home(parser)
    parser.add_argument("--cwd", type=Path, help="project root for project notes (default: cwd)")
    parser.add_argument("--agent", default="pi", help="agent name for the notes homes")
    parser.add_argument("--model", help="model id for the notes homes")
    parser.set_defaults(handler=run)


HEADER_LIMIT = 1 << 20
"""Bytes read to find a session's first line (a Pi header is a few hundred)."""


def session_problem(path: Path) -> str | None:
    """Why ``path`` is not a Pi session file, or ``None``: a regular file whose first line is
    a ``{"type":"session",...}`` header. Never blocks (a FIFO is refused, not opened for
    reading) and reads at most ``HEADER_LIMIT`` bytes."""
    import json
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"cannot open it: {exc.strerror}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file, so not a Pi session file"
        head = os.read(fd, HEADER_LIMIT)
    except OSError as exc:
        return f"cannot read it: {exc.strerror}"
    finally:
        os.close(fd)
    if not head.strip():
        return "the file is empty, not a Pi session file (Pi writes a header line first)"
    line = head.split(b"\n", 1)[0]
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        header = None
    if not (isinstance(header, dict) and header.get("type") == "session" and header.get("id")):
        return 'not a Pi session file: its first line is not a {"type":"session",...} header'
    return None


def run(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401  (the optional SDK)
    except ImportError:
        return fail("mcp", f"the MCP server needs the optional mcp package: {INSTALL_HINT}")
    session: Path = args.session.expanduser().absolute()
    if session.is_dir():
        return fail("mcp", f"--session {args.session}: is a directory, not a session file")
    if not session.exists():
        return fail("mcp", f"--session {args.session}: no such session file")
    problem = session_problem(session)
    if problem is not None:
        return fail("mcp", f"--session {args.session}: {problem}")
    cwd = (args.cwd or Path.cwd()).expanduser().absolute()
    if not cwd.is_dir():
        return fail("mcp", f"--cwd {args.cwd}: not a directory")
    notes_home = args.notes_home.expanduser().absolute() if args.notes_home else None
    if notes_home is not None and notes_home.exists() and not notes_home.is_dir():
        return fail("mcp", f"--notes-home {args.notes_home}: not a directory")
    context = ToolContext(
        session_path=session,
        notes_home=notes_home,
        cwd=cwd,
        agent_name=args.agent,
        model_id=args.model,
    )
    import anyio

    from pi_context.mcp.server import serve_stdio

    anyio.run(serve_stdio, context)
    return 0
