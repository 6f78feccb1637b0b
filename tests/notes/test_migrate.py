"""Legacy snake_case metadata: refused by the store, migrated only by the explicit command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.frontmatter import parse_note
from pi_context.bindings.notes.migrate import migrate_text

from .conftest import Notes

LEGACY = (
    "---\nscope: global\norigin: self\nstatus: active\nstale: false\n"
    "created_at: 2023-11-14T22:13:19.010+00:00\nupdated_at: 2023-11-14T22:13:20.010+00:00\n"
    "last_accessed: 2023-11-14T22:13:20.010+00:00\naccess_count: 4\n---\n\n"
)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args], capture_output=True, text=True, timeout=60
    )


@given(st.text(max_size=300))
def test_migration_renames_keys_and_keeps_the_body_byte_for_byte(body: str) -> None:
    rewrite = migrate_text(LEGACY + body)
    assert rewrite is not None
    assert rewrite.text.endswith("---\n\n" + body)
    assert rewrite.renamed == (
        ("created_at", "createdAt"),
        ("updated_at", "updatedAt"),
        ("last_accessed", "lastAccessed"),
        ("access_count", "accessCount"),
    )
    assert rewrite.dropped == ("scope",)
    parsed = parse_note(rewrite.text, fallback_ms=0)
    assert parsed.legacy_keys == () and parsed.malformed == ()
    assert parsed.body == body
    assert parsed.meta.access_count == 4
    assert parsed.meta.updated_at == 1_700_000_000_010
    assert parsed.extra_lines == () and parsed.meta.status == "active"
    assert migrate_text(rewrite.text) is None, "migration is idempotent"


def test_camelcase_wins_over_a_duplicate_legacy_key() -> None:
    text = "---\ncreatedAt: 2024-01-01T00:00:00.000+00:00\ncreated_at: 1999\n---\n\nb"
    rewrite = migrate_text(text)
    assert rewrite is not None and rewrite.dropped == ("created_at",) and rewrite.renamed == ()
    assert rewrite.text == "---\ncreatedAt: 2024-01-01T00:00:00.000+00:00\n---\n\nb"


def test_current_and_plain_files_need_nothing() -> None:
    assert migrate_text("no metadata") is None
    assert migrate_text("---\norigin: self\n---\n\nx") is None
    assert migrate_text("---\ncreated_at: never closed") is None


def test_the_store_refuses_legacy_notes_until_the_command_migrates_them(notes: Notes) -> None:
    root = Path(str(notes.ctx.notes_home))
    file = notes.store().physical_path("human", "ideas/old.md")
    file.parent.mkdir(parents=True)
    file.write_text(LEGACY + "old body", encoding="utf-8")
    refused = notes.error("notes_read", path="ideas/old.md", scope="human")
    assert "legacy snake_case metadata (created_at, updated_at" in refused["error"]
    assert "pi-context notes migrate" in refused["error"]
    assert (
        "legacy"
        in notes.error("notes_write", path="ideas/old.md", scope="human", content="x")["error"]
    )
    assert file.read_text(encoding="utf-8") == LEGACY + "old body", "refusal writes nothing"

    preview = cli("notes", "migrate", "--notes-home", str(root))
    assert preview.returncode == 0, preview.stderr
    assert "would migrate human/ideas/old.md: created_at -> createdAt" in preview.stdout
    assert "1 of 1 notes" in preview.stdout and "--apply" in preview.stdout
    assert "[1/1] scanning human" in preview.stderr, "progress goes to stderr"
    assert file.read_text(encoding="utf-8") == LEGACY + "old body", "a dry run writes nothing"

    applied = cli("notes", "migrate", "--notes-home", str(root), "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "migrated 1 of 1 notes" in applied.stdout
    read = notes.read(path="ideas/old.md", scope="human")
    assert read.content.endswith("---\n\nold body")
    assert read.details["updated_at"].startswith("2023-11-1")
    again = cli("notes", "migrate", "--notes-home", str(root))
    assert "0 of 1 notes" in again.stdout


def test_migrate_without_a_root_is_a_clean_no_op(tmp_path: Path) -> None:
    absent = str(tmp_path / "absent")
    result = cli("notes", "migrate", "--notes-home", absent)  # no earlier layout either
    assert result.returncode == 0 and "nothing to migrate" in result.stdout
    assert not (tmp_path / "absent").exists()
    # an earlier root named with --from that is not there is an error naming --from
    named = cli("notes", "migrate", "--notes-home", absent, "--from", absent + "-old")
    assert named.returncode == 2
    assert named.stderr.startswith(f"pi-context notes migrate: --from {absent}-old: ")
    assert not (tmp_path / "absent").exists()


def test_notes_homes_prints_each_scope(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps({"type": "session", "id": "sess-9"}) + "\n", encoding="utf-8")
    result = cli(
        "notes",
        "homes",
        "--notes-home",
        str(tmp_path),
        "--session",
        str(session),
        "--cwd",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert lines["session"] == str(tmp_path / "pi" / "session" / "sess-9")
    assert lines["human"] == str(tmp_path / "human")
    assert lines["model"] == str(tmp_path / "models" / "default")
