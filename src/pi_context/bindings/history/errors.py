"""The history tools' model-facing error and the paging arguments every paged tool takes."""

from __future__ import annotations

from pi_context.bindings.tool_output import JSONValue, middle_truncate
from pi_context.support.frozen import frozen

ECHO_MAX_CHARS = 200  # echoed arguments are middle-truncated so an error always fits


class HistoryError(Exception):
    """A model-facing argument or addressing error; ``payload`` is the JSON the model sees."""

    def __init__(self, message: str, **echo: JSONValue) -> None:
        super().__init__(message)
        self.payload: dict[str, JSONValue] = {"error": message, **echo}


def _echo(value: object) -> JSONValue:
    if isinstance(value, str):
        return middle_truncate(value, ECHO_MAX_CHARS)
    if isinstance(value, list):
        return [_echo(v) for v in value[:20]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return middle_truncate(repr(value), ECHO_MAX_CHARS)


@frozen
class Paging:
    cursor: int | str
    """An offset (oldest first, or the published newest-first offset) or a key (``cursors``)."""
    limit: int | None
    recent_first: bool
