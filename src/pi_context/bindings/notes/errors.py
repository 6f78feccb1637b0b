"""The named note failures every store operation raises (never a bare ``OSError``)."""

from __future__ import annotations


class NoteError(Exception):
    """A named note failure: ``message`` is what the model sees, ``code`` the stable refusal
    code of the published result envelope (``{error, code, details?}``), ``fields`` what it
    echoes as details. A subclass names its code; ``code=`` overrides it per failure."""

    code = "refused"

    def __init__(self, message: str, *, code: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        if code is not None:
            self.code = code


class NoteNotFoundError(NoteError):
    code = "not_found"

    def __init__(self, scope: str, path: str) -> None:
        super().__init__("note not found", path=path, scope=scope)


class InvalidPathError(NoteError):
    code = "invalid_address"


class PathEscapeError(NoteError):
    """A symbolic link on the way to a note (it could lead out of the home)."""

    code = "invalid_address"


class LinkedNoteError(NoteError):
    """A hard-linked note file: it may be a file outside the home."""

    code = "io_error"


class UnsafeHomeError(NoteError):
    """The notes root or a home is a symbolic link (or not a folder), so it is not trusted."""

    code = "io_error"


class LegacyNoteError(NoteError):
    code = "legacy_note"


class NoteTooLargeError(NoteError):
    code = "too_large"


class NoteConflictError(NoteError):
    code = "already_exists"


class EditError(NoteError):
    code = "no_match"


class HomeReadError(NoteError):
    """A real failure reading a home (not its absence)."""

    code = "io_error"
