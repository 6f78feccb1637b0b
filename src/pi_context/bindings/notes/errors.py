"""The named note failures every store operation raises (never a bare ``OSError``)."""

from __future__ import annotations


class NoteError(Exception):
    """A named note failure: ``message`` is what the model sees, ``fields`` what it echoes."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


class NoteNotFoundError(NoteError):
    def __init__(self, scope: str, path: str) -> None:
        super().__init__("note not found", path=path, scope=scope)


class InvalidPathError(NoteError):
    pass


class PathEscapeError(NoteError):
    """A symbolic link on the way to a note (it could lead out of the home)."""


class LinkedNoteError(NoteError):
    """A hard-linked note file: it may be a file outside the home."""


class UnsafeHomeError(NoteError):
    """The notes root or a home is a symbolic link (or not a folder), so it is not trusted."""


class LegacyNoteError(NoteError):
    pass


class NoteTooLargeError(NoteError):
    pass


class NoteConflictError(NoteError):
    pass


class EditError(NoteError):
    pass


class HomeReadError(NoteError):
    """A real failure reading a home (not its absence)."""
