"""``pi-context session show``: readable rendering with windows, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_context.bindings.session import Session, seeded_uuids
from pi_context.bindings.session.boundary import commit_boundary, reset_drafts
from pi_context.cli import main

SID = "feedc0de-0000-7000-8000-000000000000"


def _reset_session(tmp_path: Path) -> Session:
    session = Session.create(Path("/p"), tmp_path, session_id=SID, uuids=seeded_uuids(8))
    session.append_message({"role": "user", "content": "before the reset", "timestamp": 1})
    session.append_label(session.entries[0]["id"], "start")
    session.append_session_info("demo")
    commit_boundary(
        session,
        reset_drafts(session.branch(), SID, "boot", "go", window_id="pcw:feedc0de:0000abcd"),
    )
    session.append_message({"role": "user", "content": "after the reset", "timestamp": 2})
    return session


def test_readable_view_marks_windows_context_and_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _reset_session(tmp_path)
    assert main(["session", "show", str(session.path)]) == 0
    out = capsys.readouterr().out
    assert "name: demo" in out
    assert f"══ window pcw:{SID[:8]}:root ══" in out
    assert "══ window pcw:feedc0de:0000abcd (active) ══" in out
    first = session.entries[0]["id"]
    assert f"    {first}  user: before the reset" in out, "raw history shown, not in context"
    assert "* " in out and "custom_message notesoup/boot (hidden): boot" in out
    assert "compaction (retain-none)" in out
    assert f"● {first} [start]" in out


def test_json_view_for_another_leaf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = _reset_session(tmp_path)
    first = session.entries[0]["id"]
    assert main(["session", "show", str(session.path), "--leaf", first, "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert list(view) == [
        "leaf",
        "leafId",
        "branchIds",
        "contextEntryIds",
        "projection",
        "sessionName",
        "windows",
        "tree",
        "dialect",
    ]
    assert view["dialect"] == "notesoup", "the whole file's, whatever the leaf"
    assert view["leaf"] == first and view["branchIds"] == [first]
    [window] = view["windows"]  # the branch ends before the reset: one window, from the start
    assert window["start"] == 0 and window["end"] == 1
    assert view["projection"]["messages"] == [
        {"role": "user", "content": "before the reset", "timestamp": 1}
    ]


def test_bad_input_gets_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"message","id":"x"}\n')
    assert main(["session", "show", str(bad)]) == 1
    assert f"pi-context session show: {bad}:1: not a Pi session" in capsys.readouterr().err
    session = _reset_session(tmp_path / "s")
    # the command line names what is not there: usage errors (exit 2) naming it
    assert main(["session", "show", str(session.path), "--leaf", "nope"]) == 2
    assert "pi-context session show: --leaf nope: no such entry" in capsys.readouterr().err
    assert main(["session", "show", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err


def test_problems_are_warned_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _reset_session(tmp_path)
    assert session.path is not None
    with session.path.open("ab") as handle:
        handle.write(b"{broken\n")
    assert main(["session", "show", str(session.path), "--json"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {session.path}:{len(session.entries) + 2}: invalid-json: skipped" in err
