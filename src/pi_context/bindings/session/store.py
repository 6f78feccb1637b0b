"""Reading and writing session files: the only module here that touches the filesystem.

Loading never writes. Writing follows Pi (exclusive create of a new file, then one append per
entry) plus the durability policy documented in ``docs/sessions.md``.
"""

from __future__ import annotations

import io
import os
from array import array
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path

from pi_context.support.frozen import field, record
from pi_context.support.gc_pause import gc_paused
from pi_context.support.jsonlimits import SHORTEST_TOO_DEEP, deeper_than, depth_error
from pi_context.support.regular import NotRegularFile, bounded_reader, open_regular, read_regular

from .dialect import dialects_in
from .errors import Problem, SessionError
from .jsonl import JSONLineError, js_trim, js_truthy, parse

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from .marks import Marks
    from .runs import Clean

BOM = b"\xef\xbb\xbf"


class Durability(Enum):
    """When writes are forced to stable storage (see docs/sessions.md)."""

    ALWAYS = "always"  # fsync after every append
    BOUNDARY = "boundary"  # fsync file creation, rewrites and explicit checkpoints (default)
    NONE = "none"  # never fsync (tests, benchmarks, throwaway sessions)


@record
class RawFile:
    """What a session file holds, before any interpretation as a tree.

    ``values`` are Pi's ``fileEntries``: every truthy parsed JSON value, except that an entry
    line whose shape was read (``decoders.Shape``) is held as its bytes until it is decoded
    (``lazy.py``; ``decode_value`` decodes one); ``kinds`` holds each value's ``type``;
    ``lines`` the 1-based line of each (a parallel array: a tuple and an int object per entry
    cost ~25 MiB at 400k entries).
    """

    size: int
    values: list[Any] = field(default_factory=list)
    kinds: list[Any] = field(default_factory=list)
    lines: array[int] = field(default_factory=lambda: array("q"))
    problems: list[Problem] = field(default_factory=list)
    unterminated: bool = False  # last line has no "\n": the next write must start one
    clean: Clean | None = None  # the entries' index, gathered while parsing (see runs.py)
    shared: dict[str, str] = field(default_factory=dict)  # strings the values share (share.py)
    marked: list[int] = field(default_factory=list)
    """With ``marks``: the values after the header that a reader must look at (see
    ``read_raw``), in order."""


def decode_value(raw: RawFile, index: int) -> Any:
    """``raw.values[index]``, decoded (and kept decoded) if it was held as its line."""
    value = raw.values[index]
    if type(value) is bytes:
        raw.values[index] = value = line_decoder(raw.shared)(value)
    return value


def line_decoder(shared: dict[str, str]) -> Callable[[bytes], dict[str, Any]]:
    """The decoder of the lines a clean load kept undecoded, their repeated values shared
    through ``shared`` as a load shares them (``share.py``). The load checked each line's UTF-8,
    depth and JSON syntax (the typed read checks the syntax of what it skips), so the fast
    decoder takes it or the careful parse does (a lone surrogate escape, a number beyond a
    double), and neither reports a problem the load did not."""
    from .decoders import DECODE_PLAIN, FAST_DECODE_ERRORS
    from .share import share_keys, share_values

    def decode_kept(line: bytes) -> dict[str, Any]:
        try:
            value = DECODE_PLAIN(line)
        except FAST_DECODE_ERRORS:
            torn = not line.endswith(b"\n")
            value = parse_chunk(line if torn else line[:-1], 0, torn, [])
            if type(value) is dict:
                value = share_keys(value, shared)
        if type(value) is not dict:  # pragma: no cover - the load checked it
            raise ValueError("a session line no longer decodes as the object it was loaded as")
        share_values(value, shared)
        return value

    return decode_kept


def read_raw(path: Path, *, lazy: bool = True, marks: Marks | None = None) -> RawFile:
    """Parse a file as Pi does (decode with replacement, split on "\\n", skip what fails).

    Only a regular file is read (a FIFO or a device is refused before any read), and only the
    bytes it held when it was opened. The file is streamed line by line; with ``lazy``, an
    entry line whose shape reads cleanly is kept as its bytes, decoded when first read
    (``lazy.py``), else every line is decoded now (for a caller that reads every entry).

    With ``marks`` (``marks.py``), ``marked`` lists the values after the header that a
    reader must look at: every value decoded now, and each kept line that a searched string
    or pattern starts in or that the test for its type accepts."""
    fd, info = _open_session(path, os.O_RDONLY, "read")
    watch = None if marks is None else marks.watch
    try:
        with bounded_reader(fd, info.st_size, watch=watch) as handle, gc_paused():
            return _parse_lines(handle, lazy, marks)
    except OSError as exc:
        raise SessionError(f"cannot read session file: {exc.strerror or exc}", path) from exc


def parse_raw(data: bytes, *, lazy: bool = True) -> RawFile:
    with gc_paused():
        return _parse_lines(io.BytesIO(data), lazy)


def _parse_lines(lines: Iterable[bytes], lazy: bool = True, marks: Marks | None = None) -> RawFile:
    """The loop of a load: once per line, so its per-line work is kept to local names and no
    Python call on the common path but the shape read.

    The common line is an entry whose shape (``decoders.Shape``: type, id, parentId, whether
    the message is an object) reads cleanly and whose bytes are valid UTF-8: it is kept as its
    bytes. Any other line (the header, a label, a line the shape read refuses) is decoded
    whole, as Pi's loader would (``parse_chunk`` for what the fast decoder refuses)."""
    from .decoders import DECODE_PLAIN, FAST_DECODE_ERRORS, READ_SHAPE, read_shape_of_escaped
    from .runs import Clean
    from .share import share_keys, share_values

    raw = RawFile(size=0)
    values, kinds, numbers, problems = raw.values, raw.kinds, raw.lines, raw.problems
    add_marked = raw.marked.append
    starts: list[int] = [] if marks is None else marks.starts  # grows as the file is read
    tests = {} if marks is None else marks.by_kind
    at = 0  # the first of ``starts`` not before the current line
    add_value, add_kind, add_number = values.append, kinds.append, numbers.append
    decode, read_shape, errors = DECODE_PLAIN, READ_SHAPE, FAST_DECODE_ERRORS
    size = 0
    number = 0
    line = b"\n"
    shared = raw.shared
    keep = shared.setdefault
    previous_id: str | None = None
    # While the entries stay clean (see runs.py), what Session._load needs is gathered here,
    # while each entry is at hand: a second pass over 100k entries costs ~80 ms of cache misses.
    gathered = Clean()
    by_id, heads = gathered.by_id, gathered.heads
    head_parents, labels = gathered.head_parents, gathered.labels
    clean: Clean | None = gathered
    count = 0  # values kept so far (value 0 is the header)
    for number, line in enumerate(lines, 1):  # noqa: B007 - the last line is inspected below
        size += len(line)
        shape = None
        # Nesting past the limit takes an opening and a closing bracket per level: a shorter
        # line that parses is within it (one that does not is left to ``parse_chunk``, which
        # checks the depth itself).
        deep = len(line) > SHORTEST_TOO_DEEP and deeper_than(line)
        if lazy and count and not deep:
            try:
                shape = read_shape(line)
            except errors:
                if b"\\u" in line:
                    shape = read_shape_of_escaped(line)
            if shape is not None:
                kind = shape.type
                if kind == "label" or kind == "session":
                    shape = None  # decoded whole: the load reads labels, and reports headers
                elif not line.isascii():
                    try:
                        line.decode("utf-8")
                    except UnicodeDecodeError:
                        shape = None  # the careful parse reports it
        value: Any
        if shape is not None:
            value = line
            if type(kind) is str:
                kind = keep(kind, kind)
            parent = shape.parentId
            entry_id = shape.id
            message = shape.message is not None
        else:
            try:
                if deep:
                    raise depth_error()
                value = decode(line)
            except errors:
                if number == 1 and line.startswith(BOM):
                    what = "line starts with a UTF-8 byte-order mark; Pi cannot parse it"
                    problems.append(Problem("bom", 1, what))
                torn = not line.endswith(b"\n")  # only the last line can lack its newline
                body = line if torn else line[:-1]
                parsed = parse_chunk(body, number, torn, problems)
                if parsed is SKIPPED:
                    continue
                value = parsed
                if type(value) is dict:
                    value = share_keys(value, shared)
            if type(value) is dict:
                kind = share_values(value, shared)
                # Most entries are children of the line before: share that id string too.
                parent = value.get("parentId")
                if previous_id is not None and parent == previous_id:
                    value["parentId"] = previous_id
                entry_id = value.get("id")
                message = type(value.get("message")) is dict
            elif not js_truthy(value):
                text = _text(line.rstrip(b"\n")).strip()
                problems.append(Problem("not-an-object", number, f"skipped JSON {text!r}"))
                continue
            else:
                kind = None
                if count:
                    clean = None
                add_value(value)
                add_kind(kind)
                add_number(number)
                count += 1
                continue
        chained = previous_id is not None and parent == previous_id
        previous_id = entry_id if type(entry_id) is str else None
        if clean is not None and count:
            if not previous_id or kind == "session" or (kind == "message" and not message):
                clean = None
            else:
                if kind == "label":
                    labels.append(value)
                by_id[previous_id] = count - 1
                if not chained or count == 1:  # the first entry's line before is the header
                    heads.append(count - 1)
                    head_parents.append(parent)
        if marks is not None and count:
            while starts[at] < size - len(line):
                at += 1
            if (
                shape is None
                or starts[at] < size
                or (type(kind) is str and (test := tests.get(kind)) is not None and test(line))
            ):
                add_marked(count)
        add_value(value)
        add_kind(kind)
        add_number(number)
        count += 1
    if clean is not None:
        clean.size = max(count - 1, 0)
    raw.clean = clean
    raw.size = size
    raw.unterminated = number > 0 and not line.endswith(b"\n")
    return raw


SKIPPED: Any = object()


def _text(chunk: bytes) -> str:
    return chunk.decode("utf-8", "replace")


def parse_chunk(chunk: bytes, number: int, torn: bool, problems: list[Problem]) -> Any:
    """The careful path for one line the fast decoder refused, as Pi's loader treats it: bad
    UTF-8 decoded with replacement (and reported), blank lines skipped, an unparsable last line
    without a newline is a torn tail, any other unparsable line is reported and skipped."""
    try:
        line = chunk.decode("utf-8")
    except UnicodeDecodeError:
        line = _text(chunk)
        if not torn:
            problems.append(
                Problem("invalid-utf8", number, "invalid UTF-8 bytes decoded as U+FFFD")
            )
    if not js_trim(line):
        return SKIPPED
    try:
        return parse(line)
    except JSONLineError as exc:
        if torn:
            problems.append(
                Problem("torn-tail", number, f"incomplete last line skipped ({len(line)} chars)")
            )
        else:
            problems.append(Problem("invalid-json", number, f"skipped: {exc}"))
        return SKIPPED


def is_header(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") == "session"
        and isinstance(value.get("id"), str)
    )


def file_dialects(path: Path) -> tuple[str, ...]:
    """The dialects of the extension's entries in a session file, in order of first appearance
    (``dialect.dialects_in``), streamed: only lines naming a dialect are decoded, so a large
    file costs one pass and no more memory than its longest such line. Unreadable lines are
    skipped here (``Session.open`` reports them); ``OSError``/``NotRegularFile`` propagate."""
    fd, info = open_regular(path)
    seen: list[str] = []
    with bounded_reader(fd, info.st_size) as reader:
        for line in reader:
            # A JSON writer may escape "/" as "\/": look for the prefix without it.
            if b"notesoup" not in line and b"pi-context" not in line:
                continue
            value = parse_chunk(line, 0, True, [])
            for dialect in dialects_in((value,)):
                if dialect not in seen:
                    seen.append(dialect)
    return tuple(seen)


# ---------------------------------------------------------------------------------------------
# writing


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # some filesystems cannot open directories; the file itself is synced
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_exclusive(path: Path, data: bytes, *, sync: bool) -> None:
    """Create ``path`` (it must not exist) holding ``data``: all of it, or no file at all."""
    from pi_context.support.writes import create_whole  # here: reading sessions writes nothing

    _readable(data, path)
    try:
        create_whole(path, data, sync=sync)
    except FileExistsError as exc:
        raise SessionError("session file already exists; refusing to overwrite it", path) from exc
    except OSError as exc:
        raise SessionError(f"cannot create session file: {exc.strerror or exc}", path) from exc
    if sync:
        _fsync_dir(path.parent)


def _readable(data: bytes, path: Path) -> None:
    """Refuse to write a line that no reader here would read back."""
    if deeper_than(data):
        raise SessionError(f"an entry {depth_error()}; it would not be read back", path)


def _open_existing(path: Path, flags: int) -> tuple[int, os.stat_result]:
    return _open_session(path, flags, "open", "session file disappeared; refusing to append")


def _open_session(
    path: Path, flags: int, verb: str, missing: str | None = None
) -> tuple[int, os.stat_result]:
    """``open_regular``, its failures as ``SessionError``; a missing file raises
    ``FileNotFoundError`` unless ``missing`` says what it means. (A directory opened
    read-only is refused as not a regular file: "is a directory, not a session file".)"""
    try:
        return open_regular(path, flags)
    except FileNotFoundError as exc:
        if missing is None:
            raise
        raise SessionError(missing, path) from exc
    except NotRegularFile as exc:
        raise SessionError(f"is {exc.kind}, not a session file", path) from exc
    except OSError as exc:
        raise SessionError(f"cannot {verb} session file: {exc.strerror or exc}", path) from exc


def ends_with_newline(path: Path) -> bool:
    """Whether the file is empty or its last byte is "\\n" (false: a torn line to terminate)."""
    fd, info = _open_existing(path, os.O_RDONLY)
    try:
        return info.st_size == 0 or os.pread(fd, 1, info.st_size - 1) == b"\n"
    finally:
        os.close(fd)


def append(path: Path, data: bytes, *, sync: bool) -> None:
    """Append ``data`` whole, or not at all (the file must exist: Pi never re-creates it).

    A failed write (a full disk) is taken back before the error is raised, so the file never
    keeps part of a line."""
    from pi_context.support.writes import append_whole

    fd, _info = _open_existing(path, os.O_WRONLY | os.O_APPEND)
    try:
        append_whole(fd, data, sync=sync)
    except OSError as exc:
        raise SessionError(f"cannot append to session file: {exc.strerror or exc}", path) from exc
    finally:
        os.close(fd)


def rewrite(
    path: Path, data: bytes, *, backup_suffix: str | None, sync: bool = True
) -> Path | None:
    """Replace ``path`` atomically (temp file + rename); keep the old bytes under a backup name.

    Returns the backup path, if one was written.
    """
    backup: Path | None = None
    if backup_suffix is not None and path.exists():
        backup = _free_name(path.with_name(path.name + backup_suffix))
        try:
            create_exclusive(backup, read_regular(path), sync=sync)
        except OSError as exc:
            raise SessionError(f"cannot back up session file: {exc.strerror or exc}", path) from exc
    temp = _free_name(path.with_name(f".{path.name}.tmp"))
    create_exclusive(temp, data, sync=sync)
    try:
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise SessionError(f"cannot replace session file: {exc.strerror or exc}", path) from exc
    if sync:
        _fsync_dir(path.parent)
    return backup


def _free_name(candidate: Path) -> Path:
    if not candidate.exists():
        return candidate
    for n in range(1, 10_000):
        numbered = candidate.with_name(f"{candidate.name}.{n}")
        if not numbered.exists():
            return numbered
    raise SessionError("no free backup name", candidate)
