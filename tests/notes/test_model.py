"""Random tool-call sequences against a plain dict model of the notes.

Hypothesis drives the real tools over a real directory; after every step the tools must
agree with the model: read returns the body, list returns exactly the notes with their
stale flags, search finds exactly the files and lines a naive scan finds, and every
response fits the output budget.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from pi_context.bindings.notes.tools import TOOLS
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len
from pi_context.bindings.tools import ToolContext

TOOL = {tool.name: tool for tool in TOOLS}
SCOPE = st.sampled_from(["session", "project", "human"])
PATH = st.sampled_from(["a.md", "b.md", "dir/a.md", "dir/sub/c.md", "进度.md"])
TEXT = st.text(alphabet=st.sampled_from(list("ab \n-:é进😀")), max_size=40)
WORD = st.sampled_from(["a", "b", "é", "进", "😀", "ab", "-"])


class NotesModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.temp = Path(tempfile.mkdtemp(prefix="notes-model-"))
        self.ctx = ToolContext(notes_home=self.temp, cwd=self.temp, session_id="model")
        self.model: dict[tuple[str, str], tuple[str, bool]] = {}

    def teardown(self) -> None:
        shutil.rmtree(self.temp, ignore_errors=True)

    def call(self, name: str, **args: Any) -> Any:
        result = TOOL[name].run(self.ctx, args)
        assert utf8_len(result.text) <= TOOL_OUTPUT_MAX_BYTES
        return result

    @rule(scope=SCOPE, path=PATH, body=TEXT, stale=st.none() | st.booleans())
    def write(self, scope: str, path: str, body: str, stale: bool | None) -> None:
        args: dict[str, Any] = {"path": path, "content": body, "scope": scope}
        if stale is not None:
            args["stale"] = stale
        result = self.call("notes_write", **args)  # PATH has no note/folder clashes
        assert not result.is_error, result.text
        self.model[(scope, path)] = (body, bool(stale))

    @rule(scope=SCOPE, path=PATH, old=WORD, new=WORD, stale=st.none() | st.booleans())
    def edit(self, scope: str, path: str, old: str, new: str, stale: bool | None) -> None:
        args: dict[str, Any] = {
            "path": path,
            "scope": scope,
            "edits": [{"oldText": old, "newText": new}],
        }
        if stale is not None:
            args["stale"] = stale
        result = self.call("notes_edit", **args)
        current = self.model.get((scope, path))
        if current is None:
            assert json.loads(result.text)["error"] == "note not found"
            return
        body, was_stale = current
        if body.count(old) != 1:
            assert result.is_error
            assert self.model[(scope, path)] == current
            return
        assert not result.is_error, result.text
        self.model[(scope, path)] = (
            body.replace(old, new, 1),
            was_stale if stale is None else stale,
        )

    @rule(scope=SCOPE, path=PATH, limit=st.integers(1, 60))
    def read_by_pages(self, scope: str, path: str, limit: int) -> None:
        current = self.model.get((scope, path))
        parts: list[str] = []
        offset: int | None = 0
        while offset is not None:
            result = self.call(
                "notes_read", path=path, scope=scope, offset_chars=offset, limit_chars=limit
            )
            if current is None:
                assert json.loads(result.text)["error"] == "note not found"
                return
            parts.append(result.text.partition("\n")[2])
            offset = result.details["next_offset_chars"]
        assert "".join(parts).endswith("\n\n" + current[0])

    @rule(word=WORD)
    def search(self, word: str) -> None:
        found: list[tuple[str, str, list[int]]] = []
        cursor: int | None = 0
        while cursor is not None:
            page = json.loads(
                self.call("notes_search", query=word, cursor=cursor, max_files=4).text
            )
            found += [
                (f["scope"], f["path"], [m["line"] for m in f["matches"]]) for f in page["files"]
            ]
            cursor = page["next_cursor"]
        expected = sorted(
            (
                (scope, path, [i + 1 for i, line in enumerate(body.split("\n")) if word in line])
                for (scope, path), (body, _) in self.model.items()
                if word in body
            ),
            key=lambda row: (row[1], row[0]),
        )
        # A query spanning no newline is found on exactly the lines that contain it.
        assert found == expected

    @invariant()
    def list_matches_the_model(self) -> None:
        page = json.loads(self.call("notes_list", max_results=1000).text)
        listed = {(f["scope"], f["path"]): f["stale"] for f in page["files"]}
        assert listed == {key: stale for key, (_, stale) in self.model.items()}
        stamps = [f["updated_at"] for f in page["files"]]
        assert len(stamps) == len(listed)


NotesModel.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestNotesModel = NotesModel.TestCase


def test_tool_errors_are_json_that_fits_even_for_huge_arguments(tmp_path: Path) -> None:
    ctx = ToolContext(notes_home=tmp_path, cwd=tmp_path, session_id="s")
    result = TOOL["notes_search"].run(ctx, {"query": ["x" * 200_000, ""]})
    assert result.is_error
    text = result.text
    assert utf8_len(text) <= TOOL_OUTPUT_MAX_BYTES
    error = json.loads(text)
    assert "empty query matches everything" in error["error"]
    assert error["code"] == "invalid_query"
    assert "…[truncated" in error["details"]["query"][0]
