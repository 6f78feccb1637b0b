"""Which file or folder a path is, by device and inode, never by the path's text.

A destructive operation proves what it touches: two spellings of one folder (a linked
ancestor, ``..``, a bind mount) name the same inode, and two different folders can share a
spelling over time. ``same`` compares two paths' identities; ``overlap`` says whether one
folder is, or holds, the other, walking up through each folder's real ``..`` with open
descriptors (the kernel resolves the links, not we); ``nearest`` is the identity of a path or
of its nearest existing ancestor, for a folder that is yet to be created.
"""

from __future__ import annotations

import os
from pathlib import Path

Identity = tuple[int, int]
"""(device, inode)."""

MAX_DEPTH = 4096
"""Folders walked up at most (a loop of bind mounts cannot make the walk endless)."""
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def of(info: os.stat_result) -> Identity:
    return info.st_dev, info.st_ino


def same(a: Path | str, b: Path | str) -> bool:
    """Whether ``a`` and ``b`` are the same file or folder (``False`` if either is absent)."""
    try:
        return of(os.stat(a)) == of(os.stat(b))
    except (OSError, ValueError):
        return False


def nearest(path: Path) -> Path | None:
    """``path`` if it exists, else its nearest existing ancestor (``None``: nothing exists)."""
    probe = Path(os.path.abspath(path))
    for _ in range(MAX_DEPTH):
        try:
            os.stat(probe)
            return probe
        except FileNotFoundError:
            if probe.parent == probe:
                return None
            probe = probe.parent
        except (OSError, ValueError):
            return None
    return None


def chain(folder: Path) -> list[Identity]:
    """The identities of ``folder`` and of every folder above it, up to ``/``, through the
    real ``..`` of each (empty when ``folder`` cannot be opened)."""
    try:
        fd = os.open(folder, _DIR)
    except (OSError, ValueError):
        return []
    found: list[Identity] = []
    try:
        for _ in range(MAX_DEPTH):
            here = of(os.fstat(fd))
            if found and found[-1] == here:
                break  # ``/..`` is ``/``
            found.append(here)
            parent = os.open("..", _DIR, dir_fd=fd)
            os.close(fd)
            fd = parent
    except OSError:
        pass
    finally:
        os.close(fd)
    return found


def overlap(a: Path, b: Path) -> bool:
    """Whether folder ``a`` is folder ``b``, or one holds the other, by identity.

    A folder that does not exist yet is placed at its nearest existing ancestor: ``b`` to be
    created inside ``a`` overlaps ``a``. A path that cannot be examined at all counts as
    overlapping (a destructive caller then refuses rather than guesses)."""
    near_a, near_b = nearest(a), nearest(b)
    if near_a is None or near_b is None:
        return True
    up_a, up_b = chain(near_a), chain(near_b)
    if not up_a or not up_b:
        return True
    exists_a = Path(os.path.abspath(a)) == near_a
    exists_b = Path(os.path.abspath(b)) == near_b
    return (exists_a and up_a[0] in up_b) or (exists_b and up_b[0] in up_a)
