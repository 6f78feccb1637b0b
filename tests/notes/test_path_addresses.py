"""Note paths are addresses: refused by name when over the limit, delivered whole otherwise.

The attack: a model (or a human) names a note with a path longer than any tool result should
carry. ``notes_write`` refuses it before touching the home; a path at the limit is written and
comes back whole from ``notes_list``, ``notes_search`` and the ``notes_read`` header, where a
middle-truncated path would look valid and resolve to nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes.address import MAX_PATH_BYTES, MAX_SEGMENT_BYTES
from pi_context.bindings.tools import ToolContext

from .conftest import Notes

MARKER = "…[truncated"


def longest_path(char: str = "a") -> str:
    """A path of exactly MAX_PATH_BYTES UTF-8 bytes, ending in .md, segments at their limit."""
    width = len(char.encode("utf-8"))
    segments: list[str] = []
    room = MAX_PATH_BYTES - len(".md")
    while room > 0:
        if segments:
            room -= 1  # the separator
        take = min(MAX_SEGMENT_BYTES - len(".md"), room) // width
        segments.append(char * take)
        room -= take * width
        if take == 0:
            segments.pop()
            break
    path = "/".join(segments) + ".md"
    padding = MAX_PATH_BYTES - len(path.encode("utf-8"))
    return "b" * padding + path


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    "path",
    [
        "a/" * 600 + "note.md",  # many short segments
        "é" * 200 + "/" + "é" * 200 + "/" + "é" * 120 + ".md",  # 1,045 bytes in 523 chars
        "x" * (MAX_SEGMENT_BYTES + 1) + ".md",  # one segment over its own limit
    ],
    ids=["segments", "multibyte", "segment"],
)
def test_an_over_long_note_path_is_refused_at_creation_with_nothing_written(
    notes: Notes, notes_root: Path, path: str
) -> None:
    error = notes.error("notes_write", path=path, content="body")
    assert "UTF-8 bytes" in error["error"]
    assert str(MAX_PATH_BYTES) in error["error"] or str(MAX_SEGMENT_BYTES) in error["error"]
    assert files_under(notes_root) == [], "the home is untouched"
    assert "UTF-8 bytes" in notes.error("notes_read", path=path)["error"]
    edits = [{"oldText": "a", "newText": "b"}]
    assert "UTF-8 bytes" in notes.error("notes_edit", path=path, edits=edits)["error"]


@pytest.mark.parametrize("char", ["a", "é", "中"])
def test_a_path_at_the_limit_comes_back_whole_from_every_tool(notes: Notes, char: str) -> None:
    path = longest_path(char)
    assert len(path.encode("utf-8")) == MAX_PATH_BYTES
    written = notes.json("notes_write", path=path, content="the needle is here")
    assert written["path"] == path
    listed = notes.json("notes_list", scope="session")["files"]
    assert [row["path"] for row in listed] == [path]
    found = notes.json("notes_search", query="needle", scope="session")["files"]
    assert [row["path"] for row in found] == [path]
    read = notes.read(path=path, scope="session")
    assert read.header.startswith(f"[{path} · "), "the header names the path whole"
    assert MARKER not in read.header
    assert "the needle is here" in read.content


# Plain segment names (no separators, controls, backslashes or the reserved prefix).
segment = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc"),
        blacklist_characters="/\\\x7f@",  # an @ is never part of an address's path
    ),
    min_size=1,
    max_size=60,
).filter(lambda s: s not in (".", "..") and not s.startswith(".pi-notes"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(segment, min_size=1, max_size=12))
def test_every_listed_path_resolves_when_passed_back(parts: list[str]) -> None:
    path = "/".join(parts)
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES - len(".md") or any(
        len(p.encode("utf-8")) > MAX_SEGMENT_BYTES - len(".md") for p in parts
    ):
        return  # near or over the limits: the refusal is tested above
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        notes = Notes(
            ToolContext(
                notes_home=root / "notes",
                cwd=root,
                session_id="0190f1a2-aaaa-7bbb-8ccc-000000000001",
                agent_name="pi",
            )
        )
        result = notes.call("notes_write", path=path, content="body")
        assert not result.is_error, result.text
        for row in notes.json("notes_list")["files"]:
            assert MARKER not in row["path"]
            read = notes.read(path=row["path"], scope=row["scope"])
            assert read.details["path"] == row["path"]
            by_address = notes.read(path=row["address"])
            assert by_address.header.startswith(f"[{row['address']} · ")
            assert by_address.details["address"] == row["address"]
            assert by_address.content == read.content
