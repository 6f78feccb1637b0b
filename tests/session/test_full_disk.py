"""Appends and exclusive creates are all-or-nothing on a full disk.

Two ways to fill the disk: a real small tmpfs (when this process may mount one), and the
fault-injection seam in ``pi_context.support.writes`` that fails the n-th write (after a short write
of part of its buffer, or outright) or the n-th fsync, for every n of a scenario. Either way
the session file afterwards holds exactly the lines of the appends that succeeded, byte for
byte, and the session in memory agrees with it.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.bindings.session import Durability, Session, SessionError
from pi_context.bindings.session.jsonl import encode_line
from pi_context.support import writes


def _message(n: int, size: int) -> dict[str, Any]:
    return {"role": "user", "content": f"message {n} " + "x" * size, "timestamp": n}


def scenario(directory: Path, sizes: list[int]) -> tuple[Session, list[bytes]]:
    """Append one message per size; the lines of the appends that succeeded, in order."""
    session = Session.create(
        "/tmp/pi-context-full-disk",
        session_dir=directory,
        session_id=str(uuid.UUID(int=1)),
        durability=Durability.ALWAYS,
    )
    landed: list[bytes] = []
    for n, size in enumerate(sizes):
        before = list(session.entries)
        try:
            session.append_message(_message(n, size))
        except SessionError:
            assert session.entries == before, "a failed append leaves the session as it was"
            continue
        if not landed:
            landed.append(encode_line(session.header))
        landed.append(encode_line(session.entries[-1]))
    return session, landed


def assert_whole(session: Session, landed: list[bytes]) -> None:
    path = session.path
    assert path is not None
    if not landed:
        assert not path.exists(), "a failed create leaves no file behind"
        return
    assert path.read_bytes() == b"".join(landed), "only whole lines of successful appends"
    reopened = Session.open(path, readonly=True)
    assert [e["id"] for e in reopened.entries] == [e["id"] for e in session.entries]
    assert not reopened.problems


class FailingDisk:
    """``writes.WRITE``/``FSYNC`` replaced: call ``n`` (counting both) fails with ENOSPC,
    a write first writing ``part`` of its buffer when ``part`` is set; later calls fail too
    until ``free`` is called (a disk that stays full, then has room again)."""

    def __init__(self, n: int, part: float | None) -> None:
        self.calls = 0
        self.n = n
        self.part = part
        self.full = False

    def write(self, fd: int, data: memoryview) -> int:
        self.calls += 1
        if self.full or self.calls == self.n:
            first = not self.full
            self.full = True
            if first and self.part is not None and len(data) > 1:
                return os.write(fd, data[: max(1, int(len(data) * self.part))])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        self.calls += 1
        if self.full or self.calls == self.n:
            self.full = True
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        os.fsync(fd)

    def free(self) -> None:
        self.full = False
        self.n = 0


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Callable[[int, float | None], FailingDisk]:
    def install(n: int, part: float | None) -> FailingDisk:
        failing = FailingDisk(n, part)
        monkeypatch.setattr(writes, "WRITE", failing.write)
        monkeypatch.setattr(writes, "FSYNC", failing.fsync)
        return failing

    return install


SIZES = [10, 3000, 40, 70_000, 5, 200, 9000]


def count_calls(tmp_path: Path, disk: Callable[[int, float | None], FailingDisk]) -> int:
    counter = disk(10**9, None)
    scenario(tmp_path / "count", SIZES)
    return counter.calls


@pytest.mark.parametrize("part", [None, 0.5, 0.01])
def test_every_failing_write_leaves_only_whole_lines(
    tmp_path: Path, disk: Callable[[int, float | None], FailingDisk], part: float | None
) -> None:
    total = count_calls(tmp_path, disk)
    assert total >= 2 * len(SIZES)  # a write and an fsync per append at least
    for n in range(1, total + 1):
        failing = disk(n, part)
        session, landed = scenario(tmp_path / f"n{n}", SIZES)
        assert_whole(session, landed)
        # Room again: the next append lands whole after the earlier failures.
        failing.free()
        session.append_message(_message(99, 10))
        if len(landed) == 0:
            landed.append(encode_line(session.header))
        landed.append(encode_line(session.entries[-1]))
        assert_whole(session, landed)


def test_a_failed_create_leaves_no_file_and_no_folders(
    tmp_path: Path, disk: Callable[[int, float | None], FailingDisk]
) -> None:
    disk(1, 0.5)
    directory = tmp_path / "new" / "sessions"
    session, landed = scenario(directory, [10])
    assert not landed
    assert not (tmp_path / "new").exists(), "the folders made for the file went with it"
    assert session.path is not None and not session.path.exists()


# --- a real full filesystem -------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, mounted for this test (skipped where mounting is not permitted)."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_appends_on_a_real_full_tmpfs_keep_only_whole_lines(small_tmpfs: Path) -> None:
    # A filler takes most of the room, so the session fills the disk within a few appends.
    filler = small_tmpfs / "filler"
    filler.write_bytes(b"\0" * 36 * 1024)
    sizes = [100, 2000, 5000, 9000, 300, 12_000, 7000, 50, 20_000, 10]
    session, landed = scenario(small_tmpfs / "sessions", sizes)
    assert 1 < len(landed) < len(sizes) + 1, "some appends landed and some met a full disk"
    assert_whole(session, landed)
    filler.unlink()  # room again: appending goes on from whole lines
    session.append_message(_message(77, 100))
    landed.append(encode_line(session.entries[-1]))
    assert_whole(session, landed)


def test_creating_a_session_on_a_full_tmpfs_leaves_nothing(small_tmpfs: Path) -> None:
    fd = os.open(small_tmpfs / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    session, landed = scenario(small_tmpfs / "sessions", [30_000])
    assert not landed
    assert session.path is not None and not session.path.exists()
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["filler"]
