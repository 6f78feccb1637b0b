"""Move notes from this project's earlier layout into the extension's shared layout.

Earlier releases kept notes under ``~/.pi/agent/notes`` as ``sessions/<slug>``,
``projects/<name>-<sha256 10>``, ``human``, ``agents/<slug>`` and ``models/<slug>``, with file
names exactly as the model spelled them. The shared layout (see ``homes``) differs in the
root, the folder names, the slugs and the ``.md`` suffix. Old slugs are not always reversible:

* a session folder is the session id unless it carries a hash suffix (the id had characters
  a folder cannot hold), in which case it is left in place and reported;
* an agent folder maps to ``slugify`` of its readable part;
* a model folder maps to ``slugify`` of its name when it was a plain id; a hashed one (an id
  with a provider prefix) needs ``--model ID`` to be recognised;
* a project folder hashes the full project path, so only projects named with ``--project DIR``
  (the current directory is always tried) can be placed; the rest are left and reported.

Nothing is ever overwritten: a destination that already holds different bytes is a conflict
(left in place, reported); identical bytes mean an earlier run already copied it, so the old
copy is removed, but only once it is proven to be another file (device and inode) than the
copy kept. An earlier root that is the new root, or holds it, or lies inside it (through a
linked ancestor or ``..``, compared by identity, never by the paths' text) is refused with
``RootsOverlapError`` before anything is read. Each file is written atomically under the
note's lock in the new home, read back and compared, and only then removed from the old home.
Links (soft or hard) in the old tree are reported and left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.access import lock_name
from pi_context.bindings.notes.address import (
    RESERVED_PREFIX,
    NoteAddressError,
    note_path,
)
from pi_context.bindings.notes.homes import model_slug, project_key, slugify
from pi_context.support import identity

_HASHED = re.compile(r"-[0-9a-f]{10}$")
_LEGACY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_DEPTH = 128


class RootsOverlapError(jail.JailError):
    """The earlier layout's root and the new notes root are one folder, or one holds the
    other (by device and inode): moving notes between them could remove the only copy."""

    def __init__(self, old_root: Path, new_root: Path) -> None:
        super().__init__(
            "overlap",
            f"the earlier root {old_root} and the notes root {new_root} are the same folder, "
            "or one holds the other (compared by device and inode, through links and '..'); "
            "nothing was moved. Give --from the earlier layout's own folder, apart from the "
            "notes root",
        )
        self.old_root = old_root
        self.new_root = new_root


def check_apart(old_root: Path, new_root: Path) -> None:
    """Raise ``RootsOverlapError`` unless the two roots are apart, by identity."""
    if identity.overlap(old_root, new_root):
        raise RootsOverlapError(old_root, new_root)


def legacy_root() -> Path:
    return Path.home() / ".pi" / "agent" / "notes"


def _legacy_clean(value: str) -> str:
    return _LEGACY_UNSAFE.sub("-", value).strip(".-")[:64].strip(".-")


def legacy_slug(value: str) -> str:
    """The folder name the earlier layout gave an identity (kept to recognise old folders)."""
    cleaned = _legacy_clean(value)
    if cleaned == value and cleaned and not _HASHED.search(cleaned):
        return cleaned
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{cleaned or 'x'}-{digest}"


def legacy_project_slug(project: Path) -> str:
    resolved = str(project.resolve())
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{_legacy_clean(Path(resolved).name) or 'root'}-{digest}"


@dataclass(frozen=True)
class HomeMove:
    old: tuple[str, ...]
    """The old home's folders below the old root."""
    new: tuple[str, ...] | None
    """The shared layout's home folders, or ``None`` when it cannot be placed."""
    reason: str = ""


def home_moves(old_root: Path, projects: Sequence[Path], models: Sequence[str]) -> list[HomeMove]:
    """Every old home under ``old_root`` and where it goes."""
    moves: list[HomeMove] = []
    if (old_root / "human").is_dir():
        moves.append(HomeMove(("human",), ("human",)))
    project_map = {legacy_project_slug(p): project_key(p) for p in projects}
    model_map = {legacy_slug(m): model_slug(m) for m in models}
    for group in ("sessions", "projects", "agents", "models"):
        directory = old_root / group
        if directory.is_symlink() or not directory.is_dir():
            continue
        for entry in sorted(directory.iterdir()):
            if entry.is_symlink() or not entry.is_dir():
                continue
            name = entry.name
            hashed = bool(_HASHED.search(name))
            old = (group, name)
            if group == "sessions":
                if hashed:
                    moves.append(HomeMove(old, None, "its session id cannot be recovered"))
                else:
                    moves.append(HomeMove(old, ("pi", "session", name)))
            elif group == "projects":
                if name in project_map:
                    moves.append(HomeMove(old, ("project", project_map[name])))
                else:
                    moves.append(HomeMove(old, None, "unknown project; rerun with --project DIR"))
            elif group == "agents":
                moves.append(HomeMove(old, ("agents", slugify(_HASHED.sub("", name)))))
            elif name in model_map:
                moves.append(HomeMove(old, ("models", model_map[name])))
            elif hashed:
                moves.append(HomeMove(old, None, "unknown model id; rerun with --model ID"))
            else:
                moves.append(HomeMove(old, ("models", slugify(name))))
    return moves


@dataclass(frozen=True)
class FileMove:
    move: HomeMove
    old_path: str
    new_path: str


@dataclass
class LayoutPlan:
    old_root: Path
    new_root: Path
    files: list[FileMove] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    """(old location, why it stays)."""


def _old_files(home_fd: int, prefix: str, depth: int) -> Iterator[tuple[str, str | None]]:
    """(relative path, problem or None) of every file below an open old home."""
    try:
        with os.scandir(home_fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        yield prefix or ".", f"cannot list: {exc.strerror or exc}"
        return
    for entry in entries:
        if entry.name.startswith(RESERVED_PREFIX):
            continue
        path = prefix + entry.name
        try:
            if entry.is_symlink():
                yield path, "a symbolic link; left alone"
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth >= MAX_DEPTH:
                    yield path, "nested too deeply"
                    continue
                child = os.open(entry.name, jail.DIR_FLAGS, dir_fd=home_fd)
                try:
                    yield from _old_files(child, path + "/", depth + 1)
                finally:
                    os.close(child)
            elif entry.is_file(follow_symlinks=False):
                yield path, None
            else:
                yield path, "not a regular file; left alone"
        except OSError as exc:
            yield path, f"cannot read: {exc.strerror or exc}"


def _open_old_home(old_root: Path, parts: Sequence[str]) -> int | None:
    root_fd = jail.open_root(old_root, create=False)
    if root_fd is None:
        return None
    try:
        return jail.walk_dirs(root_fd, list(parts), create=False, shown=str(old_root))
    finally:
        os.close(root_fd)


def plan_layout(
    old_root: Path,
    new_root: Path,
    projects: Sequence[Path] = (),
    models: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> LayoutPlan:
    """What ``apply_move`` would move (reads only); ``RootsOverlapError`` when the roots are
    not apart."""
    check_apart(old_root, new_root)
    result = LayoutPlan(old_root, new_root)
    moves = home_moves(old_root, projects, models)
    for number, move in enumerate(moves, start=1):
        shown = "/".join(move.old)
        if progress:
            progress(f"[{number}/{len(moves)}] scanning {shown}")
        if move.new is None:
            result.left.append((shown + "/", move.reason))
            continue
        try:
            home_fd = _open_old_home(old_root, move.old)
        except jail.JailError as exc:
            result.left.append((shown + "/", exc.message))
            continue
        if home_fd is None:
            continue
        try:
            for path, problem in _old_files(home_fd, "", 0):
                where = f"{shown}/{path}"
                if problem is not None:
                    result.left.append((where, problem))
                    continue
                try:
                    new_path = note_path(path)
                except NoteAddressError as exc:
                    result.left.append((where, f"not addressable as a note: {exc}"))
                    continue
                result.files.append(FileMove(move, path, new_path))
        finally:
            os.close(home_fd)
    return result


def apply_move(plan: LayoutPlan, item: FileMove) -> str:
    """Move one file; returns ``moved``, ``already there`` or raises ``jail.JailError``.

    The old copy is unlinked only when the name still holds the very file read, and that file
    is not the one kept in the new home (device and inode)."""
    assert item.move.new is not None
    check_apart(plan.old_root, plan.new_root)
    old_fd = _open_old_home(plan.old_root, item.move.old)
    if old_fd is None:
        raise jail.JailError("missing", "the old home vanished")
    old_parts = item.old_path.split("/")
    try:
        old_dir = jail.walk_dirs(old_fd, old_parts[:-1], create=False, shown="")
    finally:
        os.close(old_fd)
    if old_dir is None:
        raise jail.JailError("missing", "the old file vanished")
    try:
        data, info = jail.read_file(old_dir, old_parts[-1], shown=item.old_path, exact=True)
        outcome, kept = _place(plan.new_root, item.move.new, item.new_path, data)
        now = identity.of(os.stat(old_parts[-1], dir_fd=old_dir, follow_symlinks=False))
        if now == kept:
            raise jail.JailError(
                "same-file", f"{item.old_path} is the very file kept in the new home; left alone"
            )
        if now != identity.of(info):
            raise jail.JailError("changed", f"{item.old_path} was replaced while moving it")
        os.unlink(old_parts[-1], dir_fd=old_dir)  # only once the new copy reads back equal
        return outcome
    except FileNotFoundError as exc:
        raise jail.JailError("missing", "the old file vanished") from exc
    except OSError as exc:
        raise jail.JailError("io", f"cannot remove the old copy: {exc.strerror or exc}") from exc
    finally:
        os.close(old_dir)


def _place(
    new_root: Path, home: Sequence[str], path: str, data: bytes
) -> tuple[str, identity.Identity]:
    """Write ``data`` to the new home unless it is there already: the outcome, and the
    identity of the file that holds it."""
    root_fd = jail.open_root(new_root, create=True)
    assert root_fd is not None
    try:
        home_fd = jail.walk_dirs(root_fd, list(home), create=True, shown=str(new_root))
    finally:
        os.close(root_fd)
    assert home_fd is not None
    parts = path.split("/")
    try:
        with jail.file_lock(home_fd, lock_name(path), shown="/".join(home)):
            dir_fd = jail.walk_dirs(home_fd, parts[:-1], create=True, shown="/".join(home))
            assert dir_fd is not None
            try:
                try:
                    existing, held = jail.read_file(dir_fd, parts[-1], shown=path)
                except FileNotFoundError:
                    existing = None
                if existing is not None:
                    if existing == data:
                        return "already there", identity.of(held)
                    raise jail.JailError(
                        "conflict", f"{'/'.join(home)}/{path} already exists with other content"
                    )
                jail.replace_file(dir_fd, parts[-1], data, shown=path)
                back, held = jail.read_file(dir_fd, parts[-1], shown=path)
                if back != data:
                    raise jail.JailError("io", f"{path} did not read back as written")
                return "moved", identity.of(held)
            finally:
                os.close(dir_fd)
    finally:
        os.close(home_fd)
