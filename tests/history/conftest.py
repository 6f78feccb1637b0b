"""A session written through the session binding, and the history tools run against its file."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history.tools import TOOLS
from pi_context.bindings.session import Session
from pi_context.bindings.session.windows import BOOT_TYPE, RESET_MARKER_TYPE
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tools import ToolContext, ToolResult

HEADER = re.compile(r" · chars (\d+)-(\d+) of (\d+) · (end|continue at offset_chars=(\d+))")
MARKER = re.compile(r"…\[truncated \d+ chars\]…")
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


@dataclass
class Read:
    header: str
    content: str
    offset_chars: int
    total_chars: int
    next_offset_chars: int | None
    details: dict[str, Any]


def session_file(session: Session, directory: Path) -> Path:
    """The JSONL file the binding wrote (Pi persists only once a user/assistant message exists)."""
    path = getattr(session, "path", None) or getattr(session, "session_file", None)
    if path is not None:
        return Path(path)
    files = sorted(directory.glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


class Harness:
    """A persisted session plus helpers mirroring how a host calls the tools."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.session = Session.create("/tmp/pi-context-history-test", session_dir=directory)
        self.leaf_id: str | None = None

    # --- writing ----------------------------------------------------------------------------

    def text(self, role: str, text: str, tool_name: str = "bash") -> str:
        """Append one text message of ``role`` the way Pi records it; returns the entry id."""
        message: dict[str, Any] = {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "timestamp": int(time.time() * 1000),
        }
        if role == "assistant":
            message["stopReason"] = "stop"
        if role == "toolResult":
            message.update(toolCallId="call-1", toolName=tool_name, isError=False)
        return str(self.session.append_message(message))

    def message(self, message: dict[str, Any]) -> str:
        message.setdefault("timestamp", int(time.time() * 1000))
        return str(self.session.append_message(message))

    def reset(self, window_id: str, *, checkpoint: bool = True) -> str:
        """A 0.26 reset: retain-none checkpoint, marker, hidden boot; returns the marker id."""
        if checkpoint:
            self.session.append_compaction("", None, 100)
        marker = str(self.session.append_custom(RESET_MARKER_TYPE, {"windowId": window_id}))
        self.session.append_custom_message(
            BOOT_TYPE, f"boot of {window_id}", False, {"windowId": window_id}
        )
        return marker

    @property
    def path(self) -> Path:
        return session_file(self.session, self.directory)

    @property
    def root_window(self) -> str:
        return f"pcw:{self.session.session_id[:8]}:root"

    # --- calling ------------------------------------------------------------------------------

    def call(self, name: str, args: dict[str, Any] | None = None) -> ToolResult:
        ctx = ToolContext(session_path=self.path, leaf_id=self.leaf_id)
        result = TOOLS_BY_NAME[name].run(ctx, args or {})
        assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES, f"{name} over budget"
        return result

    def json(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, args)
        decoded: dict[str, Any] = json.loads(result.text)
        assert result.is_error == ("error" in decoded)
        return decoded

    def ids(self, name: str, args: dict[str, Any] | None = None) -> list[str]:
        return [item["item_id"] for item in self.json(name, args)["items"]]

    def read(self, args: dict[str, Any]) -> Read:
        result = self.call("history_read", args)
        assert not result.is_error, result.text
        return parse_read(result)

    def follow(self, name: str, args: dict[str, Any], key: str = "items") -> list[dict[str, Any]]:
        """Every row reachable by following ``next_cursor`` from ``args``."""
        rows: list[dict[str, Any]] = []
        cursor: int | str | None = args.get("cursor", 0)
        pages = 0
        while cursor is not None:
            result = self.json(name, {**args, "cursor": cursor})
            assert result[key] or cursor == 0, "a page before the end is never empty"
            rows.extend(result[key])
            cursor = result["next_cursor"]
            pages += 1
            assert pages < 10_000, "pagination terminates"
        return rows


def parse_read(result: ToolResult) -> Read:
    header, newline, content = result.text.partition("\n")
    assert newline, "a read carries a header line and a payload"
    assert header.startswith("[") and header.endswith("]")
    match = HEADER.search(header)
    assert match is not None, header
    start, end, total = int(match.group(1)), int(match.group(2)), int(match.group(3))
    assert len(content) == end - start, "the header range matches the delivered payload"
    nxt = None if match.group(4) == "end" else int(match.group(5))
    return Read(header, content, start, total, nxt, dict(result.details or {}))


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield Harness(tmp_path)
