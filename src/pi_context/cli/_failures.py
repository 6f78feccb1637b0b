"""One line for a named failure that reaches a command's top (issue 25: a full disk under
``pi-context demo`` ended in a traceback).

A command that fails for a reason with a name — the disk, a path that is not what it should
be, a session or note or spec that cannot be used, input past a stated limit — says so on
one line of stderr and exits 1. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


def _named() -> tuple[type[BaseException], ...]:
    # Imported only when a command has already failed: start-up never pays for them.
    from pi_context.bindings.handoff.errors import HandoffError
    from pi_context.bindings.history.query import HistoryError
    from pi_context.bindings.notes.errors import NoteError
    from pi_context.bindings.session.errors import SessionError
    from pi_context.spec.errors import SpecError
    from pi_context.support.jsonlimits import JSONLimitError

    return (SessionError, NoteError, HistoryError, HandoffError, SpecError, JSONLimitError)


def describe(error: BaseException) -> str | None:
    """The one line for ``error`` when it is a named failure, else ``None``."""
    if isinstance(error, OSError):  # the disk, a FIFO, a missing folder, a lock wait...
        reason = error.strerror or str(error) or type(error).__name__
        where = error.filename if error.filename is not None else None
        return f"{where}: {reason}" if where is not None else reason
    if isinstance(error, RecursionError):
        return "input nests too deeply to read"
    if isinstance(error, MemoryError):
        return "out of memory"
    try:
        named = _named()
    except Exception:  # a broken install: the traceback of the original error says more
        return None
    if isinstance(error, named):
        return " ".join(str(error).split("\n")) or type(error).__name__
    return None
