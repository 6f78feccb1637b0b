"""``notes migrate --apply`` never removes a note when the earlier root and the new root are
one folder, or one holds the other, however they are spelled (issue 31, finding 1): through a
linked ancestor (``~/.pi/agent`` a link to ``~/.agents``) or through ``..``. The roots are
compared by device and inode; each old copy is unlinked only once proven another file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.bindings.notes import relayout
from pi_context.bindings.notes.jail import JailError
from pi_context.support import identity

SESSION = "0192e7a4-1111-7000-8000-000000000001"
NOTES = {
    "human/me.md": "---\ncreatedAt: 1\n---\nhuman note\n",
    "agents/pi/a/b.md": "agent note\n",
    "models/plain-model/p.md": "model note\n",
    f"sessions/{SESSION}/todo": "legacy session note\n",
    f"pi/session/{SESSION}/now.md": "a note of the shared layout\n",
}


def make_home(tmp_path: Path) -> tuple[Path, Path]:
    """``<home>/.agents/notes`` full of notes, and ``<home>/.pi/agent`` linked to ``.agents``."""
    home = tmp_path / "home"
    root = home / ".agents" / "notes"
    for rel, body in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    (home / ".pi").mkdir()
    os.symlink(home / ".agents", home / ".pi" / "agent")
    return home, root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def migrate(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("PI_NOTES_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "pi_context", "notes", "migrate", "--apply", "--quiet", *args],
        capture_output=True, text=True, timeout=120, env=env, cwd=home,
    )  # fmt: skip


@pytest.mark.parametrize("spelling", ["linked ancestor", "dot-dot", "inside"])
def test_migrate_apply_refuses_an_earlier_root_that_is_the_notes_root(
    tmp_path: Path, spelling: str
) -> None:
    home, root = make_home(tmp_path)
    old = {
        "linked ancestor": home / ".pi" / "agent" / "notes",
        "dot-dot": root / ".." / "notes",
        "inside": home / ".pi" / "agent" / "notes" / "sessions",
    }[spelling]
    before = snapshot(root)
    done = migrate(home, "--from", str(old), "--notes-home", str(root))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "same folder, or one holds the other" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(root) == before, "every note survives, byte for byte"


def test_the_default_earlier_root_linked_to_the_notes_root_is_skipped(tmp_path: Path) -> None:
    home, root = make_home(tmp_path)
    before = snapshot(root)
    done = migrate(home, "--notes-home", str(home / ".agents" / "notes"))
    assert "skipped the earlier layout" in done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(root) == before, "every note survives, byte for byte"


def test_roots_apart_still_move(tmp_path: Path) -> None:
    home, root = make_home(tmp_path)
    new = tmp_path / "elsewhere" / "notes"
    done = migrate(home, "--from", str(home / ".pi" / "agent" / "notes"), "--notes-home", str(new))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (new / "human" / "me.md").read_text().endswith("human note\n")
    assert (new / "pi" / "session" / SESSION / "todo.md").read_text() == "legacy session note\n"
    assert not (root / "human" / "me.md").exists(), "moved, not copied"


def test_an_old_copy_that_is_the_kept_file_is_never_unlinked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second guard: were the roots' check ever fooled, ``apply_move`` still compares the
    old copy's identity with the kept file's before it unlinks."""
    home, root = make_home(tmp_path)
    before = snapshot(root)
    old = home / ".pi" / "agent" / "notes"
    monkeypatch.setattr(identity, "overlap", lambda a, b: False)
    plan = relayout.plan_layout(old, root)
    outcomes: list[str] = []
    for item in plan.files:
        try:
            outcomes.append(relayout.apply_move(plan, item))
        except JailError as exc:
            outcomes.append(exc.kind)
    assert outcomes.count("same-file") == 3, outcomes  # human, agents/pi, models/plain-model
    after = snapshot(root)
    for rel, data in before.items():
        if not rel.startswith("sessions/"):
            assert after[rel] == data, rel
    assert after[f"pi/session/{SESSION}/todo.md"] == before[f"sessions/{SESSION}/todo"]


def test_overlap_is_by_identity(tmp_path: Path) -> None:
    a = tmp_path / "a"
    (a / "b").mkdir(parents=True)
    os.symlink(a, tmp_path / "link")
    assert identity.overlap(a, tmp_path / "link")
    assert identity.overlap(tmp_path / "link" / "b", a)
    assert identity.overlap(a / "b" / ".." / "b", a / "b")
    assert identity.overlap(a / "b" / "not-yet", tmp_path / "link")
    (tmp_path / "c").mkdir()
    assert not identity.overlap(a, tmp_path / "c")
    assert not identity.overlap(a / "b", tmp_path / "c" / "not-yet")
