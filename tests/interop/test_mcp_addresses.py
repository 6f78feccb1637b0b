"""Note addresses through ``pi-context mcp``, driven by the official MCP SDK client.

``@project/x.md`` lands in the project home the extension resolves it to and lists there
under that address; ``@bogus/x.md`` is refused with the address grammar's error; the
server's instructions explain the grammar from the one module that defines it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from pi_context.bindings.notes.note_address import ADDRESS_HELP  # noqa: E402

from .extension_layout import ExtIdentity, ext_resolve  # noqa: E402

SESSION_ID = "01a236b0-fcc9-7372-98da-eacb8c3dee15"


def test_addresses_through_the_mcp_server(isolated: Path) -> None:
    project = isolated / "repo"
    (project / ".git").mkdir(parents=True)
    session = isolated / "session.jsonl"
    header = {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": "t", "cwd": "/"}
    session.write_text(json.dumps(header) + "\n", "utf-8")
    notes = isolated / "notes"
    argv = ["-m", "pi_context", "mcp", "--session", str(session), "--notes-home", str(notes),
            "--cwd", str(project)]  # fmt: skip
    # the SDK's default environment keeps only HOME, PATH and a few more: pass the suite's
    # own (its isolated cache and XDG folders), so the server never writes into HOME
    params = StdioServerParameters(
        command=sys.executable, args=argv, cwd=isolated, env=dict(os.environ)
    )

    async def main() -> dict[str, Any]:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as c:
                init = await c.initialize()
                wrote = await c.call_tool(
                    "notes_write", {"path": "@project/x.md", "content": "shared"}
                )
                listed = await c.call_tool("notes_list", {"pattern": "@project/**"})
                read_back = await c.call_tool("notes_read", {"path": "@project/x.md"})
                bogus = await c.call_tool("notes_write", {"path": "@bogus/x.md", "content": "no"})
                return {
                    "instructions": init.instructions,
                    "wrote": wrote,
                    "listed": listed,
                    "read": read_back,
                    "bogus": bogus,
                }

    answers = anyio.run(main)
    text = {
        name: value.content[0].text for name, value in answers.items() if name != "instructions"
    }
    assert ADDRESS_HELP in answers["instructions"]
    assert not answers["wrote"].is_error and json.loads(text["wrote"])["address"] == "@project/x.md"
    identity = ExtIdentity.of(notes, SESSION_ID, project, None)
    assert ext_resolve(identity, "@project/x.md").read_text("utf-8").endswith("\n\nshared")
    rows = json.loads(text["listed"])["files"]
    assert [(r["address"], r["scope"]) for r in rows] == [("@project/x.md", "project")]
    assert text["read"].startswith("[@project/x.md · ") and text["read"].endswith("shared")
    assert answers["bogus"].is_error
    assert "invalid note address '@bogus/x.md': @bogus is not a notes home" in text["bogus"]
    assert not (notes / "bogus").exists() and len(list(notes.rglob("*.md"))) == 1
