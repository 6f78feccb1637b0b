"""The explicit migration of legacy snake_case note metadata to camelCase.

Older releases wrote ``created_at``, ``updated_at``, ``last_accessed``, ``access_count`` and a
``scope`` key. The store refuses such notes rather than guess; this module finds them in every
home under the notes root and rewrites only their metadata block: each legacy key is renamed
with its value kept verbatim, ``scope`` is dropped (the home is the scope), and the body is
left byte for byte. Where a note already has the camelCase key too, the camelCase value wins
and the legacy line is dropped (and reported). Each rewrite is atomic and holds the note's
lock, so it is safe while agents are running.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.access import lock_name
from pi_context.bindings.notes.address import RESERVED_PREFIX
from pi_context.bindings.notes.frontmatter import FENCE, LEGACY_DROPPED_KEYS, LEGACY_KEYS

HOME_GROUPS = ("pi/session", "project", "agents", "models")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*:")


@dataclass(frozen=True)
class Rewrite:
    text: str
    renamed: tuple[tuple[str, str], ...]
    dropped: tuple[str, ...]


def migrate_text(text: str) -> Rewrite | None:
    """The migrated file, or ``None`` when its metadata has nothing legacy to change."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != FENCE:
        return None
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r") == FENCE)
    except StopIteration:
        return None
    block = lines[1:close]
    keys = [m.group(1) if (m := _KEY.match(line)) else None for line in block]
    present = {key for key in keys if key}
    kept: list[str] = []
    renamed: list[tuple[str, str]] = []
    dropped: list[str] = []
    for line, key in zip(block, keys, strict=True):
        if key in LEGACY_KEYS:
            new = LEGACY_KEYS[key]
            if new in present:
                dropped.append(key)  # the camelCase value already there wins
                continue
            kept.append(new + line[len(key) :])
            renamed.append((key, new))
            present.add(new)
        elif key in LEGACY_DROPPED_KEYS:
            dropped.append(key)
        else:
            kept.append(line)
    if not renamed and not dropped:
        return None
    migrated = "\n".join([lines[0], *kept, *lines[close:]])
    return Rewrite(migrated, tuple(renamed), tuple(dropped))


def homes_under(root: Path) -> list[Path]:
    """Every home directory under the notes root, in a stable order."""
    homes: list[Path] = []
    if (root / "human").is_dir() and not (root / "human").is_symlink():
        homes.append(root / "human")
    for group in HOME_GROUPS:
        directory = root / group
        if directory.is_symlink():
            continue
        if directory.is_dir():
            found = (p for p in directory.iterdir() if p.is_dir() and not p.is_symlink())
            homes.extend(sorted(found))
    return homes


def _files(home: Path) -> Iterator[tuple[str, Path]]:
    for directory, folders, files in os.walk(home):
        folders[:] = sorted(f for f in folders if not f.startswith(RESERVED_PREFIX))
        relative = Path(directory).relative_to(home).parts
        for name in sorted(files):
            if name.startswith(RESERVED_PREFIX):
                continue
            file = Path(directory) / name
            if file.is_symlink():
                continue
            yield "/".join((*relative, name)), file


@dataclass(frozen=True)
class Planned:
    home: Path
    path: str
    file: Path
    rewrite: Rewrite


@dataclass
class Plan:
    root: Path
    items: list[Planned]
    scanned: int
    errors: list[tuple[Path, str]]


def plan(root: Path, progress: Callable[[str], None] | None = None) -> Plan:
    """Find every note under ``root`` whose metadata needs migrating (reads only)."""
    result = Plan(root, [], 0, [])
    homes = homes_under(root)
    for number, home in enumerate(homes, start=1):
        if progress:
            progress(f"[{number}/{len(homes)}] scanning {home.relative_to(root)}")
        for path, file in _files(home):
            result.scanned += 1
            try:
                text = file.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                result.errors.append((file, "not valid UTF-8; left unchanged"))
                continue
            except OSError as exc:
                result.errors.append((file, f"cannot read: {exc.strerror or exc}"))
                continue
            rewrite = migrate_text(text)
            if rewrite is not None:
                result.items.append(Planned(home, path, file, rewrite))
    return result


def apply(item: Planned) -> Rewrite | None:
    """Rewrite one planned note under its lock, re-reading it first (it may have changed).

    The home is reopened by descriptor (links refused), exactly as the store writes.
    Raises ``jail.JailError`` or ``UnicodeDecodeError`` naming what went wrong.
    """
    home_fd = jail.open_root(item.home, create=False)
    if home_fd is None:
        raise jail.JailError("missing", f"{item.home} vanished")
    parts = item.path.split("/")
    try:
        with jail.file_lock(home_fd, lock_name(item.path), shown=str(item.home)):
            dir_fd = jail.walk_dirs(home_fd, parts[:-1], create=False, shown=str(item.home))
            if dir_fd is None:
                raise jail.JailError("missing", f"{item.path} vanished")
            try:
                data, _info = jail.read_file(dir_fd, parts[-1], shown=item.path)
                rewrite = migrate_text(data.decode("utf-8"))
                if rewrite is not None:
                    jail.replace_file(
                        dir_fd, parts[-1], rewrite.text.encode("utf-8"), shown=item.path
                    )
                return rewrite
            finally:
                os.close(dir_fd)
    finally:
        os.close(home_fd)


def preview(file: Path) -> Rewrite | None | str:
    """What ``plan`` would find for one file not yet in the new layout (a note the layout
    move will place): its rewrite, ``None`` when nothing is legacy, or why it cannot be read."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    try:
        return migrate_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "not valid UTF-8; left unchanged"


@dataclass
class Emptied:
    removed: list[Path]
    """Folders removed (bottom-up), the root last if it emptied too."""
    left: list[Path]
    """Folders that still hold something (the files that stayed are reported by the move)."""


def remove_emptied(old_root: Path) -> Emptied:
    """After the layout move: remove the folders of the earlier layout that hold nothing any
    more but our own lock files. Only empty folders are removed (``rmdir``), links are never
    followed, and a folder that still holds a note, or anything not ours, stays."""
    result = Emptied([], [])
    if old_root.is_symlink() or not old_root.is_dir():
        return result
    for directory, folders, _files in os.walk(old_root, topdown=False):
        here = Path(directory)
        if here.name == jail.LOCK_DIR:
            continue  # taken with its parent
        locks = here / jail.LOCK_DIR
        if jail.LOCK_DIR in folders and not locks.is_symlink() and _only_locks(locks):
            for lock in locks.iterdir():
                lock.unlink(missing_ok=True)
            _rmdir(locks)
        if _rmdir(here):
            result.removed.append(here)
        else:
            result.left.append(here)
    return result


def _only_locks(folder: Path) -> bool:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    return all(e.name.endswith(".lock") and e.is_file(follow_symlinks=False) for e in entries)


def _rmdir(folder: Path) -> bool:
    try:
        os.rmdir(folder)
    except OSError:
        return False
    return True
