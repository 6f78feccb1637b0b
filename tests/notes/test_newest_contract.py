"""The notes tools' newest published contract (the extension's ``src/tools/notes.ts``):
``address`` plus ``origin`` (user, self, external), ``crumpled`` and ``wastebasket``,
``replace_all`` and ``rename_to`` on ``notes_update``; results are the flat payload or
``{error, code, details?}``. Each earlier form that differs stays accepted (a test each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.notes.conftest import Notes

from pi_context.bindings.notes.frontmatter import CRUMPLED_KEY


def addresses(listing: dict[str, object]) -> list[str]:
    files = listing["files"]
    assert isinstance(files, list)
    return [row["address"] for row in files]


def note_file(notes: Notes, scope: str, path: str) -> Path:
    return notes.store().home(scope) / path


# --- origin ---------------------------------------------------------------------------------


def test_a_write_records_its_origin_and_self_when_none_is_given(notes: Notes) -> None:
    wrote = notes.json("notes_write", address="@human/told.md", content="x", origin="user")
    assert (wrote["outcome"], wrote["meta"]["origin"]) == ("created", "user")
    again = notes.json("notes_write", address="@human/told.md", content="y")
    assert (again["outcome"], again["meta"]["origin"]) == ("overwrote", "self")
    assert "origin: self" in note_file(notes, "human", "told.md").read_text()


def test_an_origin_change_moves_updated_at_and_reports_a_metadata_change(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="body")
    before = notes.json("notes_list")["files"][0]["updated_at"]
    changed = notes.json("notes_update", address="a.md", origin="external")
    assert (changed["change_kind"], changed["applied"]) == ("metadata", 0)
    assert changed["meta"]["origin"] == "external"
    after = notes.json("notes_list")["files"][0]["updated_at"]
    assert after >= before
    same = notes.json("notes_update", address="a.md", origin="external")
    assert same["change_kind"] == "none"


@pytest.mark.parametrize("bad", ["robot", "", 1, None, ["user"]])
def test_an_unknown_origin_is_refused_naming_it(notes: Notes, bad: object) -> None:
    if bad is None:
        return  # absent: the default
    error = notes.error("notes_write", address="a.md", content="x", origin=bad)
    assert error["code"] == "invalid_origin" and error["origin"] == bad
    assert "user, self, external" in error["error"]
    assert (
        not any(notes.store().home("session").rglob("*.md"))
        if notes.store().home("session").exists()
        else True
    )


# --- crumpled and the wastebasket -----------------------------------------------------------


def test_a_crumpled_note_leaves_list_and_search_and_stays_readable(notes: Notes) -> None:
    notes.call("notes_write", address="keep.md", content="needle")
    notes.call("notes_write", address="@project/old.md", content="needle")
    updated = notes.json("notes_list")["files"]
    old_updated = {row["address"]: row["updated_at"] for row in updated}["@project/old.md"]
    crumpled = notes.json("notes_update", address="@project/old.md", crumpled=True)
    assert crumpled["change_kind"] == "metadata" and "crumpled_at" in crumpled

    listing = notes.json("notes_list")
    assert addresses(listing) == ["keep.md"] and listing["crumpled_excluded"] == 1
    basket = notes.json("notes_list", wastebasket=True)
    assert addresses(basket) == ["@project/old.md"] and basket["crumpled_excluded"] == 0
    [row] = basket["files"]
    assert row["crumpled_at"] == crumpled["crumpled_at"]
    assert row["updated_at"] == old_updated  # crumpling never moves updatedAt

    found = notes.json("notes_search", query="needle")
    assert addresses(found) == ["keep.md"] and found["crumpled_excluded"] == 1
    assert addresses(notes.json("notes_search", query="needle", wastebasket=True)) == [
        "@project/old.md"
    ]
    assert not notes.call("notes_read", address="@project/old.md").is_error


def test_crumpling_again_keeps_the_first_time_and_false_smooths(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="x")
    first = notes.json("notes_update", address="a.md", crumpled=True)["crumpled_at"]
    again = notes.json("notes_update", address="a.md", crumpled=True)
    assert again["crumpled_at"] == first and again["change_kind"] == "none"
    smoothed = notes.json("notes_update", address="a.md", crumpled=False)
    assert "crumpled_at" not in smoothed and smoothed["change_kind"] == "metadata"
    assert CRUMPLED_KEY not in note_file(notes, "session", "a.md").read_text()
    assert addresses(notes.json("notes_list")) == ["a.md"]


def test_a_write_smooths_a_crumpled_note_and_says_so(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="x")
    notes.call("notes_update", address="a.md", crumpled=True)
    wrote = notes.json("notes_write", address="a.md", content="y")
    assert wrote["outcome"] == "uncrumpled" and "crumpled_at" not in wrote
    assert addresses(notes.json("notes_list")) == ["a.md"]


def test_a_note_the_extension_crumpled_is_crumpled_here(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="x")
    file = note_file(notes, "session", "a.md")
    text = file.read_text()
    file.write_text(
        text.replace("\n---\n", f"\n{CRUMPLED_KEY}: 2026-11-01T10:00:00.000+00:00\n---\n", 1)
    )
    assert addresses(notes.json("notes_list")) == []
    [row] = notes.json("notes_list", wastebasket=True)["files"]
    assert row["crumpled_at"] == "2026-11-01T10:00:00.000+00:00"


@pytest.mark.parametrize("tool", ["notes_list", "notes_search"])
def test_wastebasket_must_be_a_boolean(notes: Notes, tool: str) -> None:
    extra = {"query": "x"} if tool == "notes_search" else {}
    error = notes.error(tool, wastebasket="yes", **extra)
    assert error["code"] == "invalid_argument" and error["wastebasket"] == "yes"


# --- replace_all ----------------------------------------------------------------------------


def test_an_ambiguous_edit_names_its_lines_and_replace_all_replaces_each(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="one x\ntwo\nthree x\nx")
    ambiguous = notes.error(
        "notes_update", address="a.md", edits=[{"oldText": "x", "newText": "y"}]
    )
    assert ambiguous["code"] == "ambiguous_edit"
    assert (ambiguous["edit_index"], ambiguous["line_numbers"]) == (0, [1, 3, 4])
    done = notes.json(
        "notes_update", address="a.md", edits=[{"oldText": "x", "newText": "y"}], replace_all=True
    )
    assert (done["applied"], done["change_kind"]) == (1, "body")
    assert note_file(notes, "session", "a.md").read_text().endswith("one y\ntwo\nthree y\ny")
    missing = notes.error(
        "notes_update", address="a.md", edits=[{"oldText": "zzz", "newText": "y"}], replace_all=True
    )
    assert (missing["code"], missing["edit_index"]) == ("no_match", 0)
    bad = notes.error("notes_update", address="a.md", edits=[], replace_all="all")
    assert bad["code"] == "invalid_argument" and bad["replace_all"] == "all"


# --- rename_to ------------------------------------------------------------------------------


def test_rename_moves_the_note_keeping_its_metadata(notes: Notes) -> None:
    notes.call("notes_write", address="draft.md", content="body", origin="user")
    moved = notes.json("notes_update", address="draft.md", rename_to="@project/final.md")
    assert moved["change_kind"] == "file" and moved["rename_from"] == "draft.md"
    assert moved["address"] == moved["rename_to"] == "@project/final.md"
    assert moved["replaced_crumpled_target"] is False
    assert moved["meta"]["origin"] == "user"
    assert not note_file(notes, "session", "draft.md").exists()
    assert addresses(notes.json("notes_list")) == ["@project/final.md"]


def test_rename_refuses_a_live_target_and_replaces_a_crumpled_one(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="from a")
    notes.call("notes_write", address="b.md", content="from b")
    refused = notes.error("notes_update", address="a.md", rename_to="b.md")
    assert refused["code"] == "already_exists"
    assert note_file(notes, "session", "a.md").exists()
    notes.call("notes_update", address="b.md", crumpled=True)
    moved = notes.json("notes_update", address="a.md", rename_to="b.md")
    assert moved["replaced_crumpled_target"] is True
    assert note_file(notes, "session", "b.md").read_text().endswith("from a")
    assert not note_file(notes, "session", "a.md").exists()


def test_rename_to_itself_is_nothing_to_do(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="x")
    for same in ("a.md", "a"):
        error = notes.error("notes_update", address="a.md", rename_to=same)
        assert error["code"] == "nothing_to_do"
    assert note_file(notes, "session", "a.md").exists()


@pytest.mark.parametrize(
    "extra",
    [
        {"edits": [{"oldText": "x", "newText": "y"}]},
        {"origin": "user"},
        {"crumpled": True},
        {"replace_all": True},
    ],
)
def test_rename_to_is_used_alone(notes: Notes, extra: dict[str, object]) -> None:
    notes.call("notes_write", address="a.md", content="x")
    error = notes.error("notes_update", address="a.md", rename_to="b.md", **extra)
    assert "used alone" in error["error"]
    assert note_file(notes, "session", "a.md").read_text().endswith("x")


def test_an_empty_rename_to_is_ignored_and_a_bad_one_named(notes: Notes) -> None:
    notes.call("notes_write", address="a.md", content="x")
    kept = notes.json(
        "notes_update", address="a.md", rename_to="", edits=[{"oldText": "x", "newText": "z"}]
    )
    assert kept["change_kind"] == "body"
    error = notes.error("notes_update", address="a.md", rename_to="../out.md")
    assert error["code"] == "invalid_address"
    foreign = notes.error("notes_update", address="a.md", rename_to="@agents/other/x.md")
    assert "not your home" in foreign["error"]
    assert note_file(notes, "session", "a.md").exists()


# --- the earlier contract stays accepted ----------------------------------------------------


def test_notes_edit_is_the_earlier_name_of_notes_update(notes: Notes) -> None:
    notes.call("notes_write", path="a.md", content="x")
    edited = notes.json("notes_edit", path="a.md", edits=[{"oldText": "x", "newText": "y"}])
    assert edited["applied"] == 1
    renamed = notes.json("notes_edit", path="a.md", rename_to="b.md")
    assert renamed["address"] == "b.md"


def test_stale_still_closes_and_reopens_a_note(notes: Notes) -> None:
    notes.call("notes_write", path="a.md", content="x", stale=True)
    [row] = notes.json("notes_list")["files"]
    assert row["stale"] is True  # the earlier flag: still listed, unlike a crumpled note
    notes.call("notes_update", address="a.md", stale=False)
    assert notes.json("notes_list")["files"][0]["stale"] is False


def test_max_results_and_max_files_are_the_earlier_names_of_limit(notes: Notes) -> None:
    for name in ("a.md", "b.md", "c.md"):
        notes.call("notes_write", address=name, content="needle")
    assert len(notes.json("notes_list", limit=2)["files"]) == 2
    assert len(notes.json("notes_list", max_results=2)["files"]) == 2
    assert len(notes.json("notes_list", max_results=2, limit=2)["files"]) == 2
    differ = notes.error("notes_list", max_results=1, limit=2)
    assert differ["code"] == "invalid_argument" and "differ" in differ["error"]
    assert len(notes.json("notes_search", query="needle", limit=1)["files"]) == 1
    assert len(notes.json("notes_search", query="needle", max_files=1)["files"]) == 1


# --- the envelope ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("notes_read", {"address": "missing.md"}, "not_found"),
        ("notes_read", {"address": "@nowhere/x.md"}, "invalid_address"),
        ("notes_list", {"pattern": 5}, "invalid_pattern"),
        ("notes_search", {"query": ""}, "invalid_query"),
        ("notes_update", {"address": "missing.md", "origin": "user"}, "not_found"),
        ("notes_update", {"address": "a.md"}, "nothing_to_do"),
        ("notes_list", {"surprise": 1}, "invalid_argument"),
    ],
)
def test_every_refusal_is_error_code_and_details(
    notes: Notes, tool: str, args: dict[str, object], code: str
) -> None:
    result = notes.call(tool, **args)
    assert result.is_error
    body = json.loads(result.text)
    assert set(body) <= {"error", "code", "details"} and body["code"] == code, body


def test_a_crumpled_note_is_left_out_of_the_boot_snapshot(notes: Notes) -> None:
    from pi_context.bindings.notes.snapshot import load_snapshot

    notes.call("notes_write", address="@project/kept.md", content="x")
    notes.call("notes_write", address="@project/gone.md", content="x")
    notes.call("notes_update", address="@project/gone.md", crumpled=True)
    for _fresh_and_cached in range(2):  # the second load is served from the disk cache
        paths = [note.path for note in load_snapshot(notes.store()).index()]
        assert paths == ["kept.md"]
