"""Item ids of a v1 session are stable: derived from the file, the same in every call and
every process (issue 25: migration minted fresh random ids on each read, so an id from
``history_list`` never resolved in ``history_read``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.history.tools import TOOLS
from pi_context.bindings.session import Session
from pi_context.bindings.session.jsonl import encode_line
from pi_context.bindings.tools import ToolContext

TOOL = {tool.name: tool for tool in TOOLS}


def v1_file(path: Path, header_id: str = "0192aaaa-0000-7000-8000-00000000000a") -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "session", "id": header_id, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/x"}
    ]
    for n in range(6):
        role = "user" if n % 2 == 0 else "assistant"
        content: Any = f"v1 words {n}"
        if role == "assistant":
            content = [{"type": "text", "text": content}]
        lines.append({"type": "message", "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": role, "content": content, "timestamp": n}})  # fmt: skip
    path.write_bytes(b"".join(encode_line(v) for v in lines))
    return path


def listed(path: Path) -> list[str]:
    text = TOOL["history_list"].run(ToolContext(session_path=path), {}).text
    return [item["item_id"] for item in json.loads(text)["items"]]


LIST_IN_A_PROCESS = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from pi_context.bindings.history.tools import TOOLS\n"
    "from pi_context.bindings.tools import ToolContext\n"
    "tool = {t.name: t for t in TOOLS}['history_list']\n"
    "text = tool.run(ToolContext(session_path=Path(sys.argv[1])), {}).text\n"
    "print(json.dumps([i['item_id'] for i in json.loads(text)['items']]))\n"
)


@pytest.mark.parametrize("indexed", ["1", "0"])
def test_v1_item_ids_are_the_same_across_calls_and_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: str
) -> None:
    monkeypatch.setenv("PI_CONTEXT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PI_CONTEXT_HISTORY_INDEX", indexed)
    path = v1_file(tmp_path / "v1.jsonl")
    first = listed(path)
    assert len(first) == 6 and listed(path) == first
    others = [
        subprocess.run(
            [sys.executable, "-c", LIST_IN_A_PROCESS, str(path)],
            capture_output=True,
            check=True,
            text=True,
        ).stdout
        for _ in range(2)
    ]
    assert [json.loads(out) for out in others] == [first, first]
    for item_id in first:  # an id from one call resolves in the next
        result = TOOL["history_read"].run(ToolContext(session_path=path), {"item_id": item_id})
        assert not result.is_error and "v1 words" in result.text, result.text
    # The file is untouched by reading it: still v1, still without ids.
    assert b'"id":"' not in path.read_bytes().split(b"\n", 1)[1]


def test_v1_ids_depend_on_the_file_and_are_distinct(tmp_path: Path) -> None:
    one = Session.open(v1_file(tmp_path / "a.jsonl"), readonly=True)
    again = Session.open(v1_file(tmp_path / "b.jsonl"), readonly=True)
    other = Session.open(v1_file(tmp_path / "c.jsonl", "0192bbbb-0000-7000-8000-0000000000b0"))
    ids = [entry["id"] for entry in one.entries]
    assert ids == [entry["id"] for entry in again.entries]  # the same file content: same ids
    assert len(set(ids)) == len(ids)
    assert set(ids).isdisjoint(entry["id"] for entry in other.entries)
