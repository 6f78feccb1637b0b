"""Record ids of ``context_history_search`` are whole or reported unaddressable, never cut.

The attack: a hand-edited session whose entry ids are kilobytes long. Twenty matches of
2 KB ids cannot share one result; cutting the ids to fit would hand out ids that resolve to
nothing. Instead fewer matches are shown (``nextOffset`` resumes at the first one left out),
an id over the address limit is shown as null with its reason, and reading one is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.addresses import ADDRESS_MAX_CHARS
from pi_context.bindings.handoff.errors import HandoffError
from pi_context.bindings.handoff.history import HistoryRecord
from pi_context.bindings.handoff.notes import validate_note
from pi_context.bindings.session import Session
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tool_registry import all_tools
from pi_context.bindings.tools import ToolContext, ToolError


def call(path: Path, name: str, **args: Any) -> tuple[bool, Any]:
    try:
        result = all_tools()[name].run(ToolContext(session_path=path), args)
    except ToolError as exc:
        return True, json.loads(str(exc))
    assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES
    return result.is_error, json.loads(result.text)


def session_with_ids(directory: Path, ids: list[str]) -> Path:
    """A real session file, then its message ids replaced as a hand edit would."""
    session = Session.create(directory, directory)
    own = [
        session.append_message({"role": "user", "content": f"needle {n} " + "x" * 900})
        for n in range(len(ids))
    ]
    assert session.path is not None
    rename = dict(zip(own, ids, strict=True))
    lines = []
    for raw in session.path.read_text(encoding="utf-8").split("\n"):
        if raw:
            entry = json.loads(raw)
            for key in ("id", "parentId"):
                if entry.get(key) in rename:
                    entry[key] = rename[entry[key]]
            lines.append(json.dumps(entry, ensure_ascii=False))
    session.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return session.path


def test_twenty_matches_with_ids_at_the_limit_page_without_cutting_an_id(tmp_path: Path) -> None:
    ids = [f"{n:02d}" + "𝔦" * (ADDRESS_MAX_CHARS - 2) for n in range(20)]
    path = session_with_ids(tmp_path, ids)
    seen: list[str] = []
    offset = 0
    while True:
        error, page = call(path, "context_history_search", query="needle", offset=offset, limit=20)
        assert not error, page
        assert page["items"], "every page shows at least one match"
        seen += [item["id"] for item in page["items"]]
        assert page["nextOffset"] == offset + len(page["items"])
        if not page["hasMore"]:
            break
        offset = page["nextOffset"]
    assert seen == ids, "every id whole, in order, none skipped"
    error, read = call(path, "context_history_read", id=ids[7])
    assert not error and read["text"].startswith("needle 7 ")


def test_an_id_over_the_limit_is_null_with_a_reason_and_reading_it_is_refused(
    tmp_path: Path,
) -> None:
    huge = "h" * 10_000
    path = session_with_ids(tmp_path, ["ok", huge])
    error, page = call(path, "context_history_search", query="needle")
    assert not error
    assert [item["id"] for item in page["items"]] == ["ok", None]
    assert "10000 characters" in page["items"][1]["unaddressable"]
    error, refused = call(path, "context_history_read", id=huge)
    assert error and refused["code"] == "source_not_found"
    assert "address limit" in refused["error"]


def test_an_over_long_note_key_is_named_by_its_length_not_cut_to_a_valid_looking_key() -> None:
    with pytest.raises(HandoffError) as caught:
        validate_note({"key": "k" * 65, "kind": "fact", "text": "t"}, [])
    assert "65-character key" in caught.value.message
    assert "k" * 64 not in caught.value.message


def test_a_note_cannot_cite_an_unaddressable_record_id() -> None:
    huge = "h" * (ADDRESS_MAX_CHARS + 1)
    record = HistoryRecord(huge, "user", "", "the user said so")
    note = {
        "key": "k",
        "kind": "constraint",
        "text": "t",
        "inference": False,
        "status": "active",
        "sourceIds": [huge],
    }
    with pytest.raises(HandoffError) as caught:
        validate_note(note, [record])
    assert caught.value.code == "invalid_source"
