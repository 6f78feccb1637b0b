"""SQLite without importing ``datetime``: ``sqlite3`` here is the interpreter's C driver.

The public ``sqlite3`` package is that driver (``_sqlite3``: ``connect``, ``Connection``,
``Blob``, the exception classes) plus ``sqlite3/dbapi2.py``, which imports ``datetime`` (and,
through it, ``math``) only to register adapters and converters for date and time values:
about 2 ms of every warm ``pi-context tool`` history call. The history index stores no dates,
so it uses the driver itself (the public package needs the same module, so every interpreter
that has ``sqlite3`` has it). The functions, classes and exceptions are the very objects the
public package re-exports: ``except sqlite3.Error`` anywhere catches what the index raises.
"""

from __future__ import annotations

import _sqlite3 as sqlite3

__all__ = ["sqlite3"]
