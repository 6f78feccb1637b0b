"""How the notes store reaches a note inside its home: the home's open folder, the note's
folder (made on a write, taken back on a failure), its lock's name, and a jail refusal as the
store's named error."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pi_context.bindings.notes import jail
from pi_context.bindings.notes.address import (
    NoteAddressError,
)
from pi_context.bindings.notes.errors import (
    InvalidPathError,
    LinkedNoteError,
    NoteConflictError,
    NoteError,
    PathEscapeError,
    UnsafeHomeError,
)
from pi_context.bindings.notes.frontmatter import (
    parse_note,
)
from pi_context.bindings.notes.homes import NotesHomes
from pi_context.bindings.notes.note_address import address_path
from pi_context.bindings.notes.records import Note, _decode, _mtime_ms
from pi_context.support.clock import now_ms
from pi_context.support.digest import sha256_hex


def lock_name(path: str) -> str:
    """The lock file (inside the home's lock folder) serializing writers of note ``path``."""
    return sha256_hex(path.encode("utf-8"))[:40] + ".lock"


MAX_WALK_DEPTH = 128
"""Folders nested deeper than this are not listed (a hostile tree cannot exhaust descriptors),
and a write deeper than this is refused, so every note the tools write is listed."""


def _note_error(exc: jail.JailError, scope: str, path: str) -> NoteError:
    """A jail refusal on the way to one note, as the store's named error."""
    if exc.kind == "symlink":
        return PathEscapeError(f"path escapes its home: {exc.message}", path=path, scope=scope)
    if exc.kind == "linked":
        return LinkedNoteError(exc.message, path=path, scope=scope)
    if exc.kind == "conflict":
        return NoteConflictError(exc.message, path=path, scope=scope)
    return NoteError(exc.message, path=path, scope=scope)


class _Access:
    """Addressing of a notes store (``NoteStore`` is one): its homes, and a note's folder."""

    def __init__(self, homes: NotesHomes, clock: Callable[[], int] = now_ms) -> None:
        self.homes = homes
        self.clock = clock

    # --- addressing ---------------------------------------------------------------------

    def home(self, scope: str) -> Path:
        return self.homes.home(scope)

    def _canonical(self, path: str) -> str:
        try:
            return address_path(path)
        except NoteAddressError as exc:
            raise InvalidPathError(str(exc), path=path) from exc

    def physical_path(self, scope: str, path: str) -> Path:
        """Where the note ``path`` of ``scope`` lives (for display; I/O never uses it)."""
        return self.home(scope).joinpath(*self._canonical(path).split("/"))

    def _home_fd(self, scope: str, *, create: bool) -> int | None:
        """An open descriptor of the scope's home, or ``None`` when it does not exist."""
        parts = list(self.homes.parts(scope))
        root = self.homes.root
        try:
            root_fd = jail.open_root(root, create=create)
            if root_fd is None:
                return None
            try:
                return jail.walk_dirs(root_fd, parts, create=create, shown=str(root))
            finally:
                os.close(root_fd)
        except jail.JailError as exc:
            if exc.kind in ("symlink", "untrusted"):
                raise UnsafeHomeError(
                    f"the {scope} home is not trusted: {exc.message}", scope=scope
                ) from exc
            raise NoteError(exc.message, scope=scope) from exc

    @contextmanager
    def _note_dir(self, scope: str, path: str, *, create: bool) -> Iterator[tuple[int, str] | None]:
        """(open folder of the note, file name), or ``None`` when a folder is absent."""
        home_fd = self._home_fd(scope, create=create)
        if home_fd is None:
            yield None
            return
        parts = path.split("/")
        made: list[str] = []
        try:
            try:
                dir_fd = jail.walk_dirs(home_fd, parts[:-1], create=create, shown="", made=made)
            except jail.JailError as exc:
                if exc.kind == "conflict":
                    raise NoteConflictError(
                        f"{exc.message}: a note cannot also be a folder", path=path, scope=scope
                    ) from exc
                raise _note_error(exc, scope, path) from exc
        finally:
            os.close(home_fd)
        if dir_fd is None:
            yield None
            return
        try:
            yield dir_fd, parts[-1]
        except BaseException:  # a failed write (a full disk) takes back the folders it made
            with suppress(NoteError, jail.JailError, OSError):
                self._prune(scope, parts[:-1], made)
            raise
        finally:
            os.close(dir_fd)

    def _prune(self, scope: str, parts: list[str], made: list[str]) -> None:
        home_fd = self._home_fd(scope, create=False) if made else None
        if home_fd is not None:
            try:
                jail.prune_made(home_fd, parts, made)
            finally:
                os.close(home_fd)

    # --- one file --------------------------------------------------------------------------

    def _read_in(self, scope: str, path: str, dir_fd: int, name: str) -> Note | None:
        try:
            data, info = jail.read_file(dir_fd, name, shown=path)
        except FileNotFoundError:
            return None
        except jail.JailError as exc:
            if exc.kind == "conflict" and "folder" in exc.message:
                return None  # a folder of notes is not a note
            raise _note_error(exc, scope, path) from exc
        text = _decode(data)
        return Note(scope, path, text, parse_note(text, _mtime_ms(info)))
