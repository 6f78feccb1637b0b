"""What a resident host keeps of home resolution is never stale: a project key is reused only
while every ``.git`` marker it rests on is unchanged (``homes._marker_proof``), and a session
id is read from just the session file's first line, however long the file or the line."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes import homes
from pi_context.bindings.notes.homes import project_key, session_id_from_file

LEVELS = ("", "a", "a/b", "a/b/c")
MAINS = ("main-one", "second-main-checkout")  # pointers of different lengths
OPS = st.tuples(
    st.sampled_from(LEVELS[:3]),
    st.sampled_from(["dir", "file0", "file1", "rewrite0", "rewrite1", "link", "remove"]),
)


def fresh_key(cwd: Path) -> str:
    saved = dict(homes._project_keys)
    homes._project_keys.clear()
    try:
        return project_key(cwd)
    finally:
        homes._project_keys.clear()
        homes._project_keys.update(saved)


def apply(top: Path, level: str, op: str) -> None:
    marker = top / level / ".git" if level else top / ".git"
    if op == "remove" or op in ("dir", "file0", "file1", "link"):
        if marker.is_symlink() or marker.is_file():
            marker.unlink()
        elif marker.is_dir():
            marker.rmdir()
    if op == "dir":
        marker.mkdir()
    elif op.startswith("file"):
        marker.write_text(f"gitdir: {top / MAINS[int(op[-1])]}/.git/worktrees/w\n")
    elif op.startswith("rewrite") and marker.is_file() and not marker.is_symlink():
        with open(marker, "r+") as handle:  # in place: the same inode, another size
            handle.truncate(0)
            handle.write(f"gitdir: {top / MAINS[int(op[-1])]}/.git/worktrees/w\n")
    elif op == "link":
        target = top / "pointer"
        target.write_text(f"gitdir: {top / MAINS[0]}/.git/worktrees/w\n")
        marker.symlink_to(target)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(OPS, max_size=12))
def test_a_kept_project_key_is_always_the_fresh_one(ops: list[tuple[str, str]]) -> None:
    """Whatever is done to the ``.git`` markers above a working directory (made, removed,
    a pointer written or rewritten in place, a link), the next key is the fresh key."""
    racy = homes.RACY_NS
    homes.RACY_NS = -(10**12)  # even a pointer written just now is kept: only the proof guards
    try:
        with tempfile.TemporaryDirectory() as tmp:
            top = Path(tmp) / "top"
            cwd = top / LEVELS[-1]
            cwd.mkdir(parents=True)
            assert project_key(cwd) == fresh_key(cwd)
            for level, op in ops:
                apply(top, level, op)
                assert project_key(cwd) == fresh_key(cwd), (level, op)
                assert project_key(cwd) == fresh_key(cwd), "asked again: kept"
    finally:
        homes.RACY_NS = racy


def test_a_key_is_kept_only_while_its_proof_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept key is used (the root is not searched again) until a marker changes."""
    cwd = tmp_path / "repo" / "src"
    cwd.mkdir(parents=True)
    first = project_key(cwd)
    searched: list[Path] = []
    real = homes.git_root
    monkeypatch.setattr(homes, "git_root", lambda p: searched.append(p) or real(p))
    assert project_key(cwd) == first and searched == []
    (tmp_path / "repo" / ".git").mkdir()
    assert project_key(cwd) != first and len(searched) == 1
    assert project_key(cwd).startswith("repo-")


def header(session_id: str) -> bytes:
    return json.dumps({"type": "session", "id": session_id}).encode() + b"\n"


@pytest.mark.parametrize(
    "before",
    [b"", b"\n" * 50_000, "\u00a0\n".encode() * 30_000, b"  \r\n" * 2_000],
    ids=["none", "blank-lines", "nbsp-lines", "spaces"],
)
@pytest.mark.parametrize("length", [1, 4_000, 5_000, 70_000, 200_000])
def test_the_session_id_is_read_from_the_first_line_alone(
    tmp_path: Path, before: bytes, length: int
) -> None:
    """Read in growing pieces from the start, the header is the one a whole read finds:
    after any run of blank lines, however long the header line, with a large rest."""
    session_id = "s" * length
    path = tmp_path / "session.jsonl"
    path.write_bytes(before + header(session_id) + b'{"type":"message"}\n' * 20_000)
    assert session_id_from_file(path) == session_id


def test_a_header_cut_by_the_first_piece_is_never_misread(tmp_path: Path) -> None:
    """A first line that ends past the first piece is read whole, not parsed cut."""
    path = tmp_path / "session.jsonl"
    line = header("x" * (homes.HEADER_CHUNK - 20))
    path.write_bytes(line + line)
    assert session_id_from_file(path) == "x" * (homes.HEADER_CHUNK - 20)
    assert os.path.getsize(path) > homes.HEADER_CHUNK
