"""The note file format: a ``---`` metadata block, one blank line, then the body.

    ---
    origin: self
    status: active
    stale: false
    createdAt: 2026-03-01T09:15:02.117+01:00
    updatedAt: 2026-03-01T09:20:40.003+01:00
    lastAccessed: 2026-03-01T09:20:40.003+01:00
    accessCount: 2
    ---

    body text…

Keys are camelCase, in the order the TypeScript extension writes them (``origin``,
``status``, ``stale``, the timestamps, ``accessCount``, then any other key), so a note is the
same file whichever side wrote it. Timestamps are local ISO 8601 with an explicit numeric
offset (never
``Z``) and milliseconds, so a human reads local time and a parser recovers the exact instant.
Parsing never fails: a missing or malformed value falls back to a finite value (the caller
passes the file's mtime) and is reported in ``malformed``. Lines this module does not know are
kept verbatim so a rewrite never drops someone else's metadata. The pre-0.21 snake_case keys
are reported in ``legacy_keys``; the store refuses such notes until ``pi-context notes
migrate`` renames them.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime, timedelta

from pi_context.support.frozen import frozen

FENCE = "---"
ORIGIN_DEFAULT = "self"

LEGACY_KEYS: dict[str, str] = {
    "created_at": "createdAt",
    "updated_at": "updatedAt",
    "last_accessed": "lastAccessed",
    "access_count": "accessCount",
}
"""Snake_case keys written by older releases, and the camelCase key each became."""

LEGACY_DROPPED_KEYS = frozenset({"scope"})
"""Older releases also wrote the scope; the home directory is the scope now, so it is dropped."""

KNOWN_KEYS = (
    "origin",
    "status",
    "stale",
    "createdAt",
    "updatedAt",
    "lastAccessed",
    "accessCount",
)
STATUS_DEFAULT = "active"
_BARE = re.compile(r"[A-Za-z0-9_.+\-:/]+")
_YAML_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "~"})


def yaml_scalar(value: str) -> str:
    """A metadata value as the extension writes it: bare when safe, else JSON-quoted."""
    if _BARE.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}")
# The closing fence: a line that is exactly ``---`` (a trailing CR tolerated).
_CLOSE = re.compile(r"^---\r?$", re.M)
# datetime covers years 1..9999; keep a day of slack for any local offset.
MIN_MS = (datetime(1, 1, 2, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
MAX_MS = (datetime(9999, 12, 30, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)


ISO_HELD = 4096
"""Stamps ``local_iso`` remembers (per local time zone) before it starts over."""
_iso_held: dict[int, str] = {}
_iso_zone: list[object] = [None]


def zone() -> tuple[object, ...]:
    """What the local time zone depends on (the ``TZ`` variable and what ``time.tzset`` last
    found): a text made from a stamp in one zone is not reused in another."""
    return (os.environ.get("TZ"), time.timezone, time.altzone, time.daylight, time.tzname)


def local_iso(epoch_ms: int) -> str:
    """``epoch_ms`` as local ISO 8601 with milliseconds and an explicit offset (never ``Z``),
    remembered for the local time zone (a listing shows the same stamps call after call)."""
    now = zone()
    if _iso_zone[0] != now:
        _iso_held.clear()
        _iso_zone[0] = now
    text = _iso_held.get(epoch_ms)
    if text is None:
        if len(_iso_held) >= ISO_HELD:
            _iso_held.clear()
        text = _iso_held[epoch_ms] = _local_iso(epoch_ms)
    return text


def _local_iso(epoch_ms: int) -> str:
    ms = min(max(epoch_ms, MIN_MS), MAX_MS)
    instant = _EPOCH + timedelta(milliseconds=ms)
    local = instant.astimezone()
    text = local.isoformat(timespec="milliseconds")
    if text.endswith("Z"):  # defensive: isoformat does not emit Z, but never let one through
        text = text[:-1] + "+00:00"
    return text


def parse_iso(value: str) -> int | None:
    """Epoch milliseconds of an ISO 8601 timestamp that names its offset, else ``None``."""
    text = value.strip()
    if not text or len(text) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        return None  # an instant needs its offset; a bare wall-clock time is ambiguous
    if parsed.microsecond % 1000 == 0:
        # Whole milliseconds (what we write): the float is within 1e-6 of an integer.
        return round(parsed.timestamp() * 1000)
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def is_canonical_iso(value: str) -> bool:
    return _ISO.fullmatch(value) is not None


@frozen
class NoteMeta:
    origin: str
    stale: bool
    created_at: int
    updated_at: int
    last_accessed: int
    access_count: int
    status: str = STATUS_DEFAULT

    @classmethod
    def stored(
        cls,
        origin: str,
        stale: bool,
        created_at: int,
        updated_at: int,
        last_accessed: int,
        access_count: int,
        status: str,
    ) -> NoteMeta:
        """The same value as ``NoteMeta(...)``, built without the frozen class's guarded
        ``__setattr__`` per field: a snapshot of 50,000 notes builds one per note."""
        meta = object.__new__(cls)
        fields = meta.__dict__
        fields["origin"] = origin
        fields["stale"] = stale
        fields["created_at"] = created_at
        fields["updated_at"] = updated_at
        fields["last_accessed"] = last_accessed
        fields["access_count"] = access_count
        fields["status"] = status
        return meta

    @staticmethod
    def new(now_ms: int, *, stale: bool = False, origin: str = ORIGIN_DEFAULT) -> NoteMeta:
        return NoteMeta(origin, stale, now_ms, now_ms, now_ms, 0)

    def to_json(self) -> dict[str, object]:
        return {
            "origin": self.origin,
            "stale": self.stale,
            "created_at": local_iso(self.created_at),
            "updated_at": local_iso(self.updated_at),
            "last_accessed": local_iso(self.last_accessed),
            "access_count": self.access_count,
        }


@frozen
class ParsedNote:
    meta: NoteMeta
    body: str
    header_chars: int
    """Characters before the body: a body offset plus this is the offset in the whole file."""
    has_frontmatter: bool
    legacy_keys: tuple[str, ...]
    malformed: tuple[str, ...]
    extra_lines: tuple[str, ...]
    """Metadata lines this module does not own, kept verbatim in order."""


def _split(text: str) -> tuple[list[str], str, int] | None:
    """(metadata lines, body, header length) or ``None`` when there is no metadata block."""
    if text.startswith(FENCE + "\n"):
        start = 4
    elif text.startswith(FENCE + "\r\n"):
        start = 5
    else:
        return None
    close = _CLOSE.search(text, start)
    if close is None:
        return None  # never closed: treat the whole file as body
    block = text[start : close.start()]
    lines = [line.rstrip("\r") for line in block.split("\n")[:-1]] if block else []
    end = close.end()
    end = end + 1 if text.startswith("\n", end) else end
    # One blank line separates the block from the body; it belongs to the header.
    if text.startswith("\r\n", end):
        end += 2
    elif text.startswith("\n", end):
        end += 1
    return lines, text[end:], end


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_note(text: str, fallback_ms: int) -> ParsedNote:
    """Parse a note file. Never raises: bad metadata degrades to ``fallback_ms`` and defaults."""
    split = _split(text)
    if split is None:
        meta = NoteMeta(ORIGIN_DEFAULT, False, fallback_ms, fallback_ms, fallback_ms, 0)
        return ParsedNote(meta, text, 0, False, (), ("frontmatter",), ())
    lines, body, header_chars = split
    values: dict[str, str] = {}
    legacy: list[str] = []
    extra: list[str] = []
    malformed: list[str] = []
    for line in lines:
        key, colon, value = line.partition(":")
        key = key.rstrip(" \t")
        if colon and key in KNOWN_KEYS:
            # The first occurrence wins; a repeated known key carries no meaning of its own.
            values.setdefault(key, value)
            continue
        if colon and key in LEGACY_KEYS:
            legacy.append(key)
        extra.append(line)

    def timestamp(key: str, default: int) -> int:
        raw = values.get(key)
        parsed = None if raw is None else parse_iso(_unquote(raw))
        if parsed is None and raw is not None and raw.strip().isascii() and raw.strip().isdigit():
            parsed = int(raw.strip())  # the extension also accepts epoch milliseconds
        if parsed is None or not MIN_MS <= parsed <= MAX_MS:
            malformed.append(key)
            return default
        return parsed

    created = timestamp("createdAt", fallback_ms)
    updated = timestamp("updatedAt", fallback_ms)
    accessed = timestamp("lastAccessed", updated)
    stale_raw = values.get("stale", "false").strip().lower()
    if stale_raw not in ("true", "false"):
        malformed.append("stale")
    count_raw = values.get("accessCount", "0").strip()
    count = int(count_raw) if count_raw.isascii() and count_raw.isdigit() else -1
    if not 0 <= count < 2**53:
        malformed.append("accessCount")
        count = 0
    origin = _unquote(values.get("origin", ORIGIN_DEFAULT)) or ORIGIN_DEFAULT
    status = _unquote(values.get("status", STATUS_DEFAULT)) or STATUS_DEFAULT
    meta = NoteMeta(origin, stale_raw == "true", created, updated, accessed, count, status)
    return ParsedNote(meta, body, header_chars, True, tuple(legacy), tuple(malformed), tuple(extra))


def _origin_value(origin: str) -> str:
    # Keep the block line-oriented whatever a caller passed.
    return " ".join(origin.split()) or ORIGIN_DEFAULT


CRUMPLED_KEY = "crumpledAt"
"""The newest extension's mark of a crumpled note: when it was crumpled (local ISO 8601). A
crumpled note leaves the boot index, listings and searches but stays readable by address;
``notes_list``/``notes_search`` with ``wastebasket`` show only crumpled notes. The key is kept
among the extra lines, so a rewrite by either side keeps it where it was."""

ORIGINS = ("user", "self", "external")
"""Where a note's content came from, as the newest contract names it."""


def crumpled_at(extra_lines: tuple[str, ...]) -> str | None:
    """The ``crumpledAt`` value of a note's extra metadata lines, ``None`` when not crumpled.
    A crumpled mark with an empty value still marks the note (its time is shown as given)."""
    for line in extra_lines:
        key, colon, value = line.partition(":")
        if colon and key.rstrip(" \t") == CRUMPLED_KEY:
            return _unquote(value)
    return None


def with_crumpled(extra_lines: tuple[str, ...], when_ms: int | None) -> tuple[str, ...]:
    """``extra_lines`` crumpled at ``when_ms`` (an existing mark keeps its original time), or
    smoothed (every ``crumpledAt`` line removed) when ``when_ms`` is ``None``."""
    if when_ms is None:
        return tuple(
            line
            for line in extra_lines
            if line.partition(":")[0].rstrip(" \t") != CRUMPLED_KEY or ":" not in line
        )
    if crumpled_at(extra_lines) is not None:
        return extra_lines
    return (*extra_lines, f"{CRUMPLED_KEY}: {yaml_scalar(local_iso(when_ms))}")


def render_header(meta: NoteMeta, extra_lines: tuple[str, ...] = ()) -> str:
    lines = [
        FENCE,
        f"origin: {_origin_value(meta.origin)}",
        f"status: {_origin_value(meta.status)}",
        f"stale: {'true' if meta.stale else 'false'}",
        f"createdAt: {local_iso(meta.created_at)}",
        f"updatedAt: {local_iso(meta.updated_at)}",
        f"lastAccessed: {local_iso(meta.last_accessed)}",
        f"accessCount: {meta.access_count}",
        *extra_lines,
        FENCE,
        "",
    ]
    return "\n".join(lines) + "\n"


def render_note(meta: NoteMeta, body: str, extra_lines: tuple[str, ...] = ()) -> str:
    """The whole file: metadata block, one blank line, body (an empty body ends ``---\\n\\n``)."""
    return render_header(meta, extra_lines) + body
