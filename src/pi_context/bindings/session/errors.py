"""Errors and load diagnostics for Pi session files."""

from __future__ import annotations

from pathlib import Path

from pi_context.support.frozen import frozen


class SessionError(Exception):
    """A session operation failed; the message names the file and line where it can."""

    def __init__(self, message: str, path: Path | str | None = None, line: int | None = None):
        self.reason = message
        self.path = Path(path) if path is not None else None
        self.line = line
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


@frozen
class Problem:
    """Something wrong in a session file that loading survived (and what it did about it).

    ``kind`` is one of: ``invalid-json``, ``invalid-utf8``, ``not-an-object``, ``missing-id``,
    ``bad-message``, ``duplicate-id``, ``cycle``, ``torn-tail``, ``extra-header``, ``bom``.
    """

    kind: str
    line: int | None
    message: str

    def render(self, path: Path | None) -> str:
        where = f"{path}" if path is not None else "<memory>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.kind}: {self.message}"
