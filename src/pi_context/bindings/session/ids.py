"""Session ids, entry ids and clocks as Pi makes them, and Pi's default session folders."""

from __future__ import annotations

import os
import re
import secrets
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pi_context.bindings.addresses import SESSION_ID_MAX_CHARS

from .errors import SessionError

Entry = dict[str, Any]
Clock = Callable[[], "int | float | datetime"]
UuidSource = Callable[[], str]

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")


def _check_session_id(session_id: str) -> None:
    """Refuse a custom id the binding would write into a new header: Pi's pattern, and at most
    ``SESSION_ID_MAX_CHARS`` (the id names the notes folder and every window id)."""
    if not SESSION_ID_PATTERN.match(session_id):
        raise SessionError(
            f"invalid session id {session_id[:80]!r}: use letters, digits, '.', '_' and '-', "
            "starting and ending with a letter or digit"
        )
    if len(session_id) > SESSION_ID_MAX_CHARS:
        raise SessionError(
            f"session id is {len(session_id)} characters; the limit is {SESSION_ID_MAX_CHARS}"
        )


def _default_uuid() -> str:
    return str(uuid.uuid4())


def uuidv7(ms: int, random_bytes: bytes | None = None) -> str:
    """A UUIDv7 string for ``ms`` (Pi's session id format)."""
    rand = bytearray(random_bytes if random_bytes is not None else secrets.token_bytes(10))
    value = bytearray(ms.to_bytes(6, "big")) + rand[:10]
    value[6] = 0x70 | (value[6] & 0x0F)
    value[8] = 0x80 | (value[8] & 0x3F)
    hexed = value.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def default_agent_dir() -> Path:
    env = os.environ.get("PI_CODING_AGENT_DIR")
    if env:
        return Path(os.path.expanduser(env)).resolve()
    return Path.home() / ".pi" / "agent"


def default_session_dir(cwd: Path, agent_dir: Path | None = None) -> Path:
    """Pi's per-project directory: ``<agent>/sessions/--<cwd with / \\ : as ->--``."""
    resolved = os.path.abspath(os.fspath(cwd))
    safe = re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", resolved))
    return (agent_dir or default_agent_dir()) / "sessions" / f"--{safe}--"


def seeded_uuids(seed: int) -> UuidSource:
    """A deterministic UUID source for tests (``random.Random(seed)`` based)."""
    import random

    rng = random.Random(seed)
    return lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _to_ms(value: int | float | datetime) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return int(value)
