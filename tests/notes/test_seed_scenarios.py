"""The notes behaviours the seeds pin down, as named scenarios through the real tools.

Each test writes real files under a throwaway root and reads them back through the tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pi_context.bindings.notes.frontmatter import local_iso, parse_iso
from pi_context.bindings.tool_output import TOOL_OUTPUT_MAX_BYTES, utf8_len

from .conftest import TOOL_BY_NAME, Notes

LOCAL_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$")


def fits(text: str) -> bool:
    return utf8_len(text) <= TOOL_OUTPUT_MAX_BYTES


def put(notes: Notes, scope: str, path: str, updated_ms: int, body: str = "body") -> None:
    """Write a note file by hand with chosen timestamps, as another tool or a human would."""
    file = notes.store().physical_path(scope, path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(
        "---\norigin: self\nstale: false\n"
        f"createdAt: {local_iso(updated_ms - 1000)}\nupdatedAt: {local_iso(updated_ms)}\n"
        f"lastAccessed: {local_iso(updated_ms)}\naccessCount: 0\n---\n\n{body}",
        encoding="utf-8",
    )


def test_unicode_note_round_trips_across_sessions(notes: Notes) -> None:
    notes.call(
        "notes_write", path="checkpoint/进度.md", content="第一行\nneedle Café", scope="human"
    )
    # A different session (and project) over the same root sees the human-home note.
    later = notes.other(session_id="0190f1a2-aaaa-7bbb-8ccc-000000000002")
    tail = later.read(path="checkpoint/进度.md", scope="human", offset_chars=-4)
    assert tail.content == "Café"
    assert tail.details["path"] == "checkpoint/进度.md"
    assert tail.details["scope"] == "human"
    assert tail.next_offset_chars is None
    whole = later.read(path="checkpoint/进度.md", scope="human")
    assert whole.content.startswith("---\n")
    assert whole.content.endswith("---\n\n第一行\nneedle Café")

    searched = later.json("notes_search", query="Café", scope="human")
    match = searched["files"][0]["matches"][0]
    assert (match["line"], match["offset_chars"], match["text"]) == (2, 11, "needle Café")
    listed = later.json("notes_list", pattern="checkpoint/**", scope="human")
    assert [f["path"] for f in listed["files"]] == ["checkpoint/进度.md"]
    assert searched["files"][0]["created_at"] == listed["files"][0]["created_at"]
    assert searched["files"][0]["updated_at"] == listed["files"][0]["updated_at"]
    # The session home is per session: the new session does not see the old session's notes.
    notes.call("notes_write", path="mine.md", content="session only")
    assert later.json("notes_list", scope="session")["files"] == []
    assert [f["path"] for f in notes.json("notes_list", scope="session")["files"]] == ["mine.md"]


def test_glob_star_stays_in_one_segment_and_double_star_crosses(notes: Notes) -> None:
    notes.call("notes_write", path="checkpoint/进度.md", content="x", scope="human")
    notes.call("notes_write", path="a/b/c/deep.md", content="x", scope="human")
    paths = lambda pattern: [  # noqa: E731
        f["path"] for f in notes.json("notes_list", pattern=pattern, scope="human")["files"]
    ]
    assert paths("*") == []
    assert paths("checkpoint/*") == ["checkpoint/进度.md"]
    assert paths("a/*") == []
    assert paths("a/**") == ["a/b/c/deep.md"]
    assert paths("**/deep.md") == ["a/b/c/deep.md"]
    assert paths("a/*/c/*.md") == ["a/b/c/deep.md"]
    assert sorted(paths("**")) == ["a/b/c/deep.md", "checkpoint/进度.md"]


def test_path_escapes_are_refused_with_a_named_error(notes: Notes) -> None:
    for path, message in [
        ("../escape", "unsupported component: '..'"),
        ("a/./b", "unsupported component: '.'"),
        ("a//b", "unsupported component: an empty segment"),
        ("/etc/passwd", "relative (no leading /)"),
        ("a\\b", "backslash"),
        ("a\0b", "NUL"),
        ("", "non-empty"),
    ]:
        error = notes.error("notes_write", path=path, content="x")
        assert message in error["error"], (path, error)
        assert error["path"] == path
    assert not any(Path(notes.ctx.notes_home or "").rglob("escape"))


def test_stale_lifecycle_closes_and_revives_a_note(notes: Notes) -> None:
    notes.call("notes_write", path="journal.md", content="log line")
    marked = notes.json("notes_edit", path="journal.md", stale=True)
    assert marked["applied"] == 0
    assert marked["meta"]["stale"] is True
    assert notes.read(path="journal.md").content.endswith("log line"), "content unchanged"
    revived = notes.json("notes_edit", path="journal.md", stale=False)
    assert revived["meta"]["stale"] is False
    notes.call("notes_write", path="journal.md", content="final", stale=True)
    assert notes.json("notes_list", scope="session")["files"][0]["stale"] is True
    notes.call("notes_write", path="journal.md", content="reopened")
    assert notes.json("notes_list", scope="session")["files"][0]["stale"] is False
    missing = notes.error("notes_edit", path="missing.md", stale=True)
    assert missing["error"] == "note not found"
    assert missing["path"] == "missing.md"


def test_stale_notes_stay_listable_readable_and_searchable(notes: Notes) -> None:
    notes.call("notes_write", path="fresh.md", content="fresh content")
    notes.call("notes_write", path="old.md", content="stale content", stale=True)
    listed = {f["path"]: f["stale"] for f in notes.json("notes_list")["files"]}
    assert listed == {"fresh.md": False, "old.md": True}
    assert notes.read(path="old.md").content.endswith("stale content")
    found = notes.json("notes_search", query="stale content")
    assert [f["path"] for f in found["files"]] == ["old.md"]
    assert found["files"][0]["stale"] is True


def test_list_is_most_recently_updated_first_with_path_then_scope_tiebreaks(
    notes: Notes,
) -> None:
    base = 1_700_000_000_000
    put(notes, "session", "b.md", base + 10)
    put(notes, "session", "a.md", base + 10)
    put(notes, "project", "c.md", base + 5)
    put(notes, "human", "e.md", base + 20)
    order = [(f["path"], f["scope"]) for f in notes.json("notes_list")["files"]]
    assert order == [
        ("e.md", "human"),
        ("a.md", "session"),
        ("b.md", "session"),
        ("c.md", "project"),
    ]
    put(notes, "agent", "a.md", base + 10)
    put(notes, "model", "a.md", base + 10)
    same = [f["scope"] for f in notes.json("notes_list")["files"] if f["path"] == "a.md"]
    assert same == ["agent", "model", "session"], "equal times tie-break by scope name"
    narrowed = [f["path"] for f in notes.json("notes_list", scope="session")["files"]]
    assert narrowed == ["a.md", "b.md"]
    row = notes.json("notes_list", scope="human")["files"][0]
    assert LOCAL_ISO.match(row["updated_at"]) and parse_iso(row["updated_at"]) == base + 20


def test_list_pages_by_cursor_and_every_page_fits_the_budget(notes: Notes) -> None:
    long = "x" * 120
    for index in range(200):
        notes.call("notes_write", path=f"page-{long}-{index}.md", content="needle")
    seen: list[str] = []
    cursor: int | None = 0
    pages = 0
    while cursor is not None:
        raw = notes.call("notes_list", max_results=300, cursor=cursor).text
        assert fits(raw)
        page = json.loads(raw)
        seen += [f["path"] for f in page["files"]]
        cursor = page["next_cursor"]
        pages += 1
    assert sorted(seen) == sorted(f"page-{long}-{i}.md" for i in range(200))
    assert pages >= 2, "200 rows of ~250 bytes cannot fit one 32 KiB page"


def test_search_max_files_caps_the_page_not_the_set(notes: Notes) -> None:
    for index in range(7):
        notes.call("notes_write", path=f"needle-{index}.md", content="needle")
    first = notes.json("notes_search", query="needle", max_files=3)
    assert [f["path"] for f in first["files"]] == ["needle-0.md", "needle-1.md", "needle-2.md"]
    assert first["next_cursor"] == 3
    second = notes.json("notes_search", query="needle", max_files=3, cursor=3)
    assert (len(second["files"]), second["next_cursor"]) == (3, 6)
    tail = notes.json("notes_search", query="needle", max_files=3, cursor=6)
    assert ([f["path"] for f in tail["files"]], tail["next_cursor"]) == (["needle-6.md"], None)


def test_search_or_query_returns_each_file_once_in_path_order(notes: Notes) -> None:
    notes.call("notes_write", path="both.md", content="alpha beta\nunrelated")
    notes.call("notes_write", path="alpha.md", content="alpha only")
    notes.call("notes_write", path="beta.md", content="beta only")
    notes.call("notes_write", path="gamma.md", content="gamma only")
    files = lambda query: notes.json("notes_search", query=query)["files"]  # noqa: E731
    both = files(["alpha", "beta"])
    assert [f["path"] for f in both] == ["alpha.md", "beta.md", "both.md"]
    assert len(both[2]["matches"]) == 1, "a line holding both queries is one match"
    assert both[2]["matches"][0]["offset_chars"] == 0
    assert [f["path"] for f in files(["alpha"])] == ["alpha.md", "both.md"]
    assert files("alpha") == files(["alpha"])
    assert [f["path"] for f in files(["gamma"])] == ["gamma.md"]


def test_search_or_query_paginates_without_repeats(notes: Notes) -> None:
    for index in range(12):
        word = ["alpha", "beta", "gamma"][index % 3]
        notes.call("notes_write", path=f"f{index:02d}.md", content=f"{word} {index}")
    seen: list[str] = []
    cursor: int | None = 0
    while cursor is not None:
        page = notes.json("notes_search", query=["alpha", "beta"], max_files=3, cursor=cursor)
        assert page["files"], "a page is never empty"
        seen += [f["path"] for f in page["files"]]
        cursor = page["next_cursor"]
    assert seen == ["f00.md", "f01.md", "f03.md", "f04.md", "f06.md", "f07.md", "f09.md", "f10.md"]
    last = notes.json("notes_search", query=["alpha", "beta"], max_files=3, cursor=6)
    assert (len(last["files"]), last["next_cursor"]) == (2, None)


def test_search_pattern_scopes_the_subtree_and_a_miss_is_an_empty_page(notes: Notes) -> None:
    notes.call("notes_write", path="deep/nested/a.md", content="needle here")
    notes.call("notes_write", path="top.md", content="needle there")
    scoped = notes.json("notes_search", query="needle", pattern="deep/**")
    assert [f["path"] for f in scoped["files"]] == ["deep/nested/a.md"]
    none = notes.json("notes_search", query="needle", pattern="absent/**")
    assert none == {"files": [], "crumpled_excluded": 0, "next_cursor": None}
    everything = notes.json("notes_search", query="needle", pattern="")
    assert [f["path"] for f in everything["files"]] == ["deep/nested/a.md", "top.md"]


def test_an_over_budget_note_is_a_prefix_resumed_by_the_cursor(notes: Notes) -> None:
    text = "H" + "x" * (TOOL_OUTPUT_MAX_BYTES * 2) + "\ntail line"
    notes.call("notes_write", path="huge.md", content=text)
    raw = notes.call("notes_read", path="huge.md")
    assert fits(raw.text)
    first = notes.read(path="huge.md")
    assert first.offset_chars == 0 and first.content.startswith("---\n")
    assert "…" not in first.content, "a plain prefix, no marker"
    assert first.next_offset_chars == first.end_chars
    created, updated = first.details["created_at"], first.details["updated_at"]
    assert first.header == (
        f"[huge.md · chars 0-{first.end_chars} of {first.total_chars} · "
        f"continue at offset_chars={first.end_chars} · session · created {created} · "
        f"updated {updated}]"
    )
    assert sorted(first.details) == [
        "address",
        "created_at",
        "limit_chars",
        "next_offset_chars",
        "offset_chars",
        "path",
        "scope",
        "total_chars",
        "updated_at",
    ]
    parts = [first.content]
    offset = first.next_offset_chars
    while offset is not None:
        assert fits(notes.call("notes_read", path="huge.md", offset_chars=offset).text)
        chunk = notes.read(path="huge.md", offset_chars=offset)
        assert chunk.offset_chars == offset
        parts.append(chunk.content)
        offset = chunk.next_offset_chars
    assert "".join(parts).endswith("---\n\n" + text)


def test_negative_offsets_count_from_the_end_and_clamp_at_zero(notes: Notes) -> None:
    notes.call("notes_write", path="n.md", content="0123456789")
    total = notes.read(path="n.md").total_chars
    assert notes.read(path="n.md", offset_chars=-3).content == "789"
    assert notes.read(path="n.md", offset_chars=-3).offset_chars == total - 3
    assert notes.read(path="n.md", offset_chars=-10, limit_chars=4).content == "0123"
    assert notes.read(path="n.md", offset_chars=-(total + 50)).offset_chars == 0


def test_read_errors_are_named_and_echo_the_arguments(notes: Notes) -> None:
    notes.call("notes_write", path="a.md", content="hello")
    total = notes.read(path="a.md").total_chars
    past = notes.error("notes_read", path="a.md", offset_chars=total + 1)
    assert "past the end" in past["error"]
    assert (past["path"], past["offset_chars"], past["total_chars"]) == (
        "a.md",
        total + 1,
        total,
    )
    end = notes.read(path="a.md", offset_chars=total)
    assert (end.content, end.next_offset_chars) == ("", None)
    missing = notes.call("notes_read", path="no-such.md")
    assert missing.is_error and missing.details is None
    assert json.loads(missing.text) == {
        "error": "note not found",
        "code": "not_found",
        "details": {"path": "no-such.md"},
    }
    too_big = notes.error("notes_read", path="a.md", limit_chars=50_001)
    assert "limit_chars" in too_big["error"] and too_big["limit_chars"] == 50_001


def test_empty_body_is_a_metadata_only_file_that_terminates(notes: Notes) -> None:
    notes.call("notes_write", path="empty.md", content="")
    empty = notes.read(path="empty.md")
    assert empty.content.startswith("---\n") and empty.content.endswith("---\n\n")
    assert empty.total_chars > 0 and empty.next_offset_chars is None
    beyond = notes.error("notes_read", path="empty.md", offset_chars=empty.total_chars + 9)
    assert "past the end" in beyond["error"]
    assert beyond["offset_chars"] == empty.total_chars + 9
    assert beyond["total_chars"] == empty.total_chars


def test_an_over_budget_search_match_is_a_flagged_prefix_with_an_honest_address(
    notes: Notes,
) -> None:
    huge_line = "p" * 500 + "needle " + "y" * (TOOL_OUTPUT_MAX_BYTES * 2)
    notes.call("notes_write", path="a.md", content="needle small")
    notes.call("notes_write", path="search.md", content=huge_line)
    files: list[dict[str, object]] = []
    cursor: int | None = 0
    while cursor is not None:
        raw = notes.call("notes_search", query="needle", cursor=cursor).text
        assert fits(raw)
        page = json.loads(raw)
        files += page["files"]
        cursor = page["next_cursor"]
    assert [f["path"] for f in files] == ["a.md", "search.md"]
    big = files[1]
    assert big["matches_total"] == 1
    match = big["matches"][0]  # type: ignore[index]
    assert match["truncated"] is True
    assert match["total_chars"] == len(huge_line)
    assert huge_line.startswith(match["text"]) and "…" not in match["text"]
    assert (match["line"], match["offset_chars"]) == (1, 500)
    # The address resolves: notes_read at read_offset_chars starts on the query.
    at = notes.read(path="search.md", offset_chars=match["read_offset_chars"], limit_chars=6)
    assert at.content == "needle"
    # Following the read cursor from 0 reconstructs the body.
    parts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        chunk = notes.read(path="search.md", offset_chars=offset)
        parts.append(chunk.content)
        offset = chunk.next_offset_chars
    assert "".join(parts).endswith(huge_line)


def test_many_matches_in_one_file_still_fit_and_name_the_total(notes: Notes) -> None:
    body = "\n".join(f"needle {index} " + "z" * 400 for index in range(1000))
    notes.call("notes_write", path="many.md", content=body)
    raw = notes.call(
        "notes_search", query="needle", max_matches_per_file=1000, max_chars_per_match=5000
    ).text
    assert fits(raw)
    only = json.loads(raw)["files"][0]
    assert only["matches_total"] == 1000
    assert 0 < len(only["matches"]) < 1000
    assert [m["line"] for m in only["matches"]] == list(range(1, len(only["matches"]) + 1))


def test_query_argument_errors_are_named(notes: Notes) -> None:
    assert "empty query matches everything" in notes.error("notes_search", query="")["error"]
    mixed = notes.error("notes_search", query=["alpha", ""])
    assert "empty query matches everything" in mixed["error"]
    assert mixed["query"] == ["alpha", ""]
    assert "non-empty array of strings" in notes.error("notes_search", query=[])["error"]
    assert "elements must be strings" in notes.error("notes_search", query=["alpha", 7])["error"]
    assert "non-empty array of strings" in notes.error("notes_search")["error"]
    bad = notes.error("notes_search", query="x", pattern="a/**b")
    assert "invalid pattern" in bad["error"] and bad["pattern"] == "a/**b"
    assert "invalid pattern" in notes.error("notes_list", pattern="/abs")["error"]
    scope = notes.error("notes_list", scope="global")
    assert "scope must be one of" in scope["error"] and scope["scope"] == "global"
    typo = notes.error("notes_list", max_result=3)
    assert "notes_list does not take 'max_result'" in typo["error"]
    assert typo["unknown_arguments"] == ["max_result"]


def test_edit_missing_is_named_and_write_creates(notes: Notes) -> None:
    assert notes.error("notes_edit", path="missing.md", stale=True)["error"] == "note not found"
    created = notes.json("notes_write", path="missing.md", content="x")
    assert created["created"] is True and "error" not in created
    edited = notes.json("notes_edit", path="missing.md", edits=[{"oldText": "x", "newText": "y"}])
    assert edited["applied"] == 1
    assert notes.read(path="missing.md").content.endswith("\n\ny")


def test_edits_apply_in_order_all_or_nothing(notes: Notes) -> None:
    notes.call("notes_write", path="e.md", content="one two three")
    ok = notes.json(
        "notes_edit",
        path="e.md",
        edits=[{"oldText": "one", "newText": "1"}, {"oldText": "1 two", "newText": "12"}],
    )
    assert ok["applied"] == 2
    assert notes.read(path="e.md").content.endswith("12 three")
    failed = notes.error(
        "notes_edit",
        path="e.md",
        edits=[{"oldText": "three", "newText": "3"}, {"oldText": "absent", "newText": "x"}],
    )
    assert failed["error"] == "edits[1].oldText was not found in the note"
    assert notes.read(path="e.md").content.endswith("12 three"), "nothing applied"
    notes.call("notes_write", path="dup.md", content="a a")
    twice = notes.error("notes_edit", path="dup.md", edits=[{"oldText": "a", "newText": "b"}])
    assert "matches 2 places" in twice["error"]
    nothing = notes.error("notes_edit", path="e.md")
    assert "nothing to edit" in nothing["error"]


def test_size_limit_is_a_named_error_and_keeps_the_old_note(notes: Notes) -> None:
    notes.call("notes_write", path="big.md", content="small")
    over = notes.error("notes_write", path="big.md", content="é" * 500_001)
    assert over["error"] == "note would be 1000002 UTF-8 bytes; the limit is 1000000"
    assert over["size_bytes"] == 1_000_002
    assert notes.read(path="big.md").content.endswith("small")
    exact = notes.json("notes_write", path="big.md", content="é" * 500_000)
    assert exact["size_bytes"] == 1_000_000


def test_write_and_edit_are_sequential_and_reads_are_not() -> None:
    assert TOOL_BY_NAME["notes_write"].sequential and TOOL_BY_NAME["notes_edit"].sequential
    for name in ("notes_read", "notes_list", "notes_search"):
        assert not TOOL_BY_NAME[name].sequential


def test_schemas_expose_the_documented_surface() -> None:
    params = {name: tool.parameters for name, tool in TOOL_BY_NAME.items()}
    # The note is named by address (the newest contract) or path (the seeds'): one required,
    # checked by the tool (tests/notes/test_address_argument.py).
    assert sorted(params["notes_write"]["required"]) == ["content"]
    assert params["notes_edit"]["required"] == []
    assert "edits" in params["notes_edit"]["properties"]
    read = params["notes_read"]["properties"]
    assert sorted(read) == ["address", "limit_chars", "offset_chars", "path", "scope"]
    assert "minimum" not in read["offset_chars"]
    assert read["limit_chars"]["maximum"] == 50_000
    assert "most recently updated first" in TOOL_BY_NAME["notes_list"].description
    assert not re.search(r"start_|stop_line|total_lines", TOOL_BY_NAME["notes_read"].description)
    for tool in TOOL_BY_NAME.values():
        assert tool.schema()["parameters"]["type"] == "object"


def test_timestamps_are_local_iso_with_an_offset_that_parse_back(notes: Notes) -> None:
    written = notes.json("notes_write", path="t.md", content="x")["meta"]
    for key in ("created_at", "updated_at", "last_accessed"):
        assert LOCAL_ISO.match(written[key]), written[key]
        assert not written[key].endswith("Z")
    file_text = notes.store().physical_path("session", "t.md").read_text(encoding="utf-8")
    stamp = re.search(r"^updatedAt: (.*)$", file_text, re.M)
    assert stamp and stamp.group(1) == written["updated_at"]


def test_malformed_metadata_degrades_without_poisoning_other_notes(notes: Notes) -> None:
    notes.call("notes_write", path="good.md", content="keep me")
    notes.call("notes_write", path="bad.md", content="still here")
    file = notes.store().physical_path("session", "bad.md")
    text = file.read_text(encoding="utf-8")
    file.write_text(
        re.sub(
            r"^(createdAt|updatedAt|lastAccessed|accessCount|stale): .*$",
            r"\1: garbage",
            text,
            flags=re.M,
        ),
        encoding="utf-8",
    )
    rows = {f["path"]: f for f in notes.json("notes_list")["files"]}
    assert set(rows) == {"good.md", "bad.md"}
    assert LOCAL_ISO.match(rows["bad.md"]["updated_at"]), "a finite fallback, not NaN"
    assert "NaN" not in json.dumps(rows)
    assert notes.read(path="bad.md").content.endswith("still here")
    # The next write repairs the block and keeps the body it was given.
    notes.call("notes_write", path="bad.md", content="fixed")
    assert "garbage" not in file.read_text(encoding="utf-8")
