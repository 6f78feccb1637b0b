"""``private_dir`` keeps what it proved (a resident host asks on every call) only while the
proof holds: a folder made writable by others, swapped for a link, or a marker removed is
checked again at once, and refused as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_context.support import cache_dir, cache_home
from pi_context.support.cache_home import CacheRefused, private_dir


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache_dir.CACHE_ENV, str(folder))
    monkeypatch.setattr(cache_home, "RACY_NS", -(10**12))  # fresh markers kept: the proof alone
    monkeypatch.setattr(cache_home, "_proven", {})
    return folder


def opened(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each full check (``open_root``) that ``private_dir`` makes from now on."""
    calls: list[bool] = []
    real = cache_home.open_root

    def counted(*, create: bool) -> int | None:
        calls.append(create)
        return real(create=create)

    monkeypatch.setattr(cache_home, "open_root", counted)
    return calls


def test_a_proven_folder_is_not_checked_again_while_nothing_changed(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private_dir(root / "notes" / "deep")  # made: its proof is taken by the next check
    private_dir(root / "notes" / "deep")
    calls = opened(monkeypatch)
    for _ in range(3):
        assert private_dir(root / "notes" / "deep") == root / "notes" / "deep"
    assert calls == []


@pytest.mark.parametrize("where", ["root", "area", "deep"])
def test_a_folder_made_writable_by_others_is_refused_at_once(root: Path, where: str) -> None:
    target = root / "notes" / "deep"
    private_dir(target)
    private_dir(target)
    folder = {"root": root, "area": root / "notes", "deep": target}[where]
    os.chmod(folder, 0o777)
    with pytest.raises(CacheRefused, match="group or others may write"):
        private_dir(target)
    os.chmod(folder, 0o700)
    assert private_dir(target) == target


def test_an_area_swapped_for_a_link_is_refused_at_once(root: Path) -> None:
    private_dir(root / "notes")
    private_dir(root / "notes")
    os.rename(root / "notes", root / "notes-moved")
    os.symlink(root / "notes-moved", root / "notes")
    with pytest.raises(CacheRefused, match="not a real folder"):
        private_dir(root / "notes")


def test_a_removed_marker_is_checked_again(root: Path) -> None:
    """Without its marker the root is adopted again only while it holds nothing foreign."""
    private_dir(root / "history")
    private_dir(root / "history")
    (root / cache_home.MARKER).unlink()
    (root / "someone-elses.txt").write_text("not the cache's")
    with pytest.raises(CacheRefused, match="did not create"):
        private_dir(root / "history")


def test_a_root_replaced_by_another_folder_is_checked_again(root: Path) -> None:
    private_dir(root / "history")
    private_dir(root / "history")
    os.rename(root, root.with_name("old-cache"))
    root.mkdir(mode=0o700)
    (root / "foreign.txt").write_text("x")
    with pytest.raises(CacheRefused, match="did not create"):
        private_dir(root / "history")
