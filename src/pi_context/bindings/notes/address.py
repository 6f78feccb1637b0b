"""Virtual note paths and glob patterns: pure syntax, no filesystem access.

A virtual path is what the model names a note by (``checkpoint/progress.md``). It must be a
relative, ``/``-separated path whose every segment is a plain name, so that joining it under a
home can never leave that home. The physical containment check (symlinks) lives in ``store``.
"""

from __future__ import annotations

import re
import unicodedata

from pi_context.support.frozen import frozen

MAX_PATH_BYTES = 1024
"""Longest virtual path, in UTF-8 bytes."""

MAX_SEGMENT_BYTES = 255
"""Longest path segment, in UTF-8 bytes (the common filesystem name limit)."""

RESERVED_PREFIX = ".pi-notes"
"""Segments starting with this name the store's own temp and lock files; notes cannot use it."""

NOTE_SUFFIX = ".md"
"""Notes are Markdown files: a path without this suffix gains it (``a/b`` is ``a/b.md``)."""

_CONTROL = re.compile("[\x00-\x1f\x7f]")


class NoteAddressError(ValueError):
    """A virtual path or glob pattern is malformed; the message names what is wrong."""


def _utf8_len(text: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise NoteAddressError("path is not valid Unicode (it contains a lone surrogate)") from exc


def note_path(value: object) -> str:
    """The canonical form of a note path: validated, NFC, ending in ``.md``.

    ``a/b`` and ``a/b.md`` name one file, as in the TypeScript extension; NFC and NFD spellings
    of a name are one note.
    """
    path = validate_path(value)
    canonical = path if path.endswith(NOTE_SUFFIX) else path + NOTE_SUFFIX
    last = canonical.rsplit("/", 1)[-1]
    if _utf8_len(last) > MAX_SEGMENT_BYTES:
        raise NoteAddressError(
            f"note file name {last[:40]!r}… is longer than {MAX_SEGMENT_BYTES} UTF-8 bytes"
        )
    return canonical


def validate_path(value: object) -> str:
    """``value`` in NFC if it is a safe virtual note path, else raise ``NoteAddressError``."""
    if isinstance(value, str) and not value.isascii():
        try:
            value = unicodedata.normalize("NFC", value)
        except UnicodeError as exc:  # pragma: no cover - normalize accepts any str
            raise NoteAddressError("path is not valid Unicode") from exc
    if not isinstance(value, str) or value == "":
        raise NoteAddressError("path must be a non-empty virtual relative path")
    if "\0" in value:
        raise NoteAddressError("path must not contain a NUL character")
    if "\\" in value:
        raise NoteAddressError("path must not contain a backslash; separate segments with /")
    if value.startswith("/"):
        raise NoteAddressError("path must be relative (no leading /)")
    if _CONTROL.search(value):
        raise NoteAddressError("path must not contain control characters")
    size = _utf8_len(value)
    if size > MAX_PATH_BYTES:
        raise NoteAddressError(f"path is {size} UTF-8 bytes; the limit is {MAX_PATH_BYTES}")
    for segment in value.split("/"):
        if segment in ("", ".", ".."):
            shown = "an empty segment" if segment == "" else repr(segment)
            raise NoteAddressError(f"path contains an unsupported component: {shown}")
        if _utf8_len(segment) > MAX_SEGMENT_BYTES:
            raise NoteAddressError(
                f"path segment is longer than {MAX_SEGMENT_BYTES} UTF-8 bytes: {segment[:40]!r}…"
            )
        if segment.startswith(RESERVED_PREFIX):
            raise NoteAddressError(
                f"path segment {segment!r} uses the reserved prefix {RESERVED_PREFIX!r}"
            )
    return value


@frozen
class GlobPattern:
    """A compiled glob: ``*`` and ``?`` stay inside one segment, a whole ``**`` segment crosses.

    ``**`` matches zero or more whole segments, so ``notes/**`` matches everything below
    ``notes`` and ``**/todo.md`` matches ``todo.md`` at any depth.

    Matching never backtracks: the path's segments are walked once per pattern segment, with
    the set of path positions reached so far, and one segment is matched against one pattern
    segment by the greedy star rule. The work is at most (pattern length) x (path length)
    steps, whatever the pattern (issue 31: ``*a*a*a…*b`` or ``**/`` repeated, compiled into a
    backtracking regex, ran for minutes against one ordinary path).
    """

    source: str
    segments: tuple[str, ...]
    """The pattern's segments; ``**`` is the segment that crosses."""

    def matches(self, path: str) -> bool:
        parts = path.split("/")
        count = len(parts)
        reached = [False] * (count + 1)
        reached[0] = True
        for segment in self.segments:
            after = [False] * (count + 1)
            if segment == "**":
                on = False
                for at in range(count + 1):
                    on = reached[at] or (on and parts[at - 1] != "")
                    after[at] = on
            else:
                for at in range(count):
                    if reached[at] and segment_matches(segment, parts[at]):
                        after[at + 1] = True
            if not any(after):
                return False
            reached = after
        return reached[count]


def segment_matches(pattern: str, name: str) -> bool:
    """Whether one segment ``name`` matches one segment glob (``*`` any run, ``?`` one
    character, everything else itself), without backtracking past the last ``*``: at most
    ``len(pattern) * len(name)`` steps."""
    p = n = 0
    star = -1
    resume = 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p, n
            p += 1
        elif p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif star >= 0:
            resume += 1  # the last ``*`` takes one character more; earlier ones stay fixed
            p, n = star + 1, resume
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def compile_glob(pattern: object) -> GlobPattern:
    """Compile a note glob or raise ``NoteAddressError`` naming the problem."""
    if not isinstance(pattern, str) or pattern == "":
        raise NoteAddressError("invalid pattern: it must be a non-empty string")
    pattern = unicodedata.normalize("NFC", pattern)  # paths are compared in NFC
    for bad, what in (("\0", "a NUL character"), ("\\", "a backslash")):
        if bad in pattern:
            raise NoteAddressError(f"invalid pattern: it contains {what}")
    if pattern.startswith("/"):
        raise NoteAddressError("invalid pattern: it must be relative (no leading /)")
    segments = pattern.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            shown = "an empty segment" if segment == "" else repr(segment)
            raise NoteAddressError(f"invalid pattern: it contains {shown}")
        if segment != "**" and "**" in segment:
            raise NoteAddressError(
                f"invalid pattern: '**' must be a whole segment, got {segment!r}"
            )
    return GlobPattern(pattern, tuple(segments))
