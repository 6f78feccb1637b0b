"""The model-facing notes tools: ``notes_write``, ``notes_edit``, ``notes_read``,
``notes_list`` and ``notes_search``.

Each is a plain function from (context, arguments) to a ``ToolResult`` plus a JSON Schema.
A note is named by its address (``note_address``: ``checkpoint.md``, ``@project/plan.md``…)
in the ``path`` argument; ``scope`` stays as an alias that must agree with it. Every result
and listing row carries the note's ``address``, which the tools take back verbatim.
A malformed argument raises ``ToolError`` with a ``{"error", <argument>}`` payload (the
toolkit's dispatcher, ``Tool.run``, delivers it and checks the argument names for every
tool); a well-formed request that cannot be served (``note not found``, an offset past the
end, a legacy note…) returns the same envelope as an error result. Every response fits
``TOOL_OUTPUT_MAX_BYTES``.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence

from pi_context.bindings.notes.address import NoteAddressError, compile_glob
from pi_context.bindings.notes.frontmatter import local_iso
from pi_context.bindings.notes.homes import (
    SCOPES,
    HomeUnavailableError,
    NotesHomes,
    notes_root,
    session_id_from_file,
)
from pi_context.bindings.notes.note_address import (
    ADDRESS_HELP,
    NAMED_HEAD_OF_SCOPE,
    SLUG,
    NoteAddress,
    PatternTarget,
    format_address,
    parse_address,
    parse_pattern,
    with_scope_alias,
)
from pi_context.bindings.notes.query import LineMatch, match_lines
from pi_context.bindings.notes.store import (
    NOTE_MAX_BYTES,
    HomeRead,
    HomeReadError,
    InvalidPathError,
    Note,
    NoteError,
    NoteRecord,
    NoteStore,
    PathEscapeError,
    Refused,
)
from pi_context.bindings.tool_output import (
    READ_LIMIT_CHARS_MAX,
    TOOL_OUTPUT_MAX_BYTES,
    ReadRangeError,
    encode_json,
    fit_json,
    json_bytes,
    page,
    read_window,
)
from pi_context.bindings.tools import JSONValue, Tool, ToolContext, ToolError, ToolResult
from pi_context.gc_pause import gc_paused

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

Args = Mapping[str, JSONValue]

LIST_DEFAULT, LIST_MAX = 100, 1000
FILES_DEFAULT, FILES_MAX = 20, 1000
MATCHES_DEFAULT, MATCHES_MAX = 20, 1000
MATCH_CHARS_DEFAULT, MATCH_CHARS_MAX = 500, 5000
REFUSED_SHOWN = 5


# --- context -------------------------------------------------------------------------------


def homes_for(ctx: ToolContext) -> NotesHomes:
    """The five homes for a tool context (the session id may come from the session file)."""
    session_id = ctx.session_id
    session_error = None
    if session_id is None and ctx.session_path is not None:
        try:
            session_id = session_id_from_file(ctx.session_path)
        except HomeUnavailableError as exc:
            session_error = str(exc)  # only the session home needs it; it surfaces there
    return NotesHomes(
        root=notes_root(ctx.notes_home),
        session_id=session_id,
        project_root=ctx.cwd,
        agent_name=ctx.agent_name,
        model_id=ctx.model_id,
        session_error=session_error,
    )


def store_for(ctx: ToolContext, homes: NotesHomes | None = None) -> NoteStore:
    """The store of ``homes`` (default: this context's), on the host's clock when it has one."""
    chosen = homes_for(ctx) if homes is None else homes
    if ctx.clock is None:
        return NoteStore(chosen)
    return NoteStore(chosen, clock=ctx.clock)


# --- arguments -----------------------------------------------------------------------------


def _fail(message: str, **echo: JSONValue) -> ToolError:
    # An echoed argument can be arbitrarily large; the dispatcher cuts it visibly to the budget.
    return ToolError(message, **echo)


def _scope(args: Args, default: str | None) -> str | None:
    value = args.get("scope")
    if value is None:
        return default
    if not isinstance(value, str) or value not in SCOPES:
        raise _fail(f"scope must be one of {', '.join(SCOPES)}", scope=value)
    return value


def _address(args: Args) -> NoteAddress:
    """The note ``path`` names (an address), with the ``scope`` alias applied."""
    value = args.get("path")
    scope = _scope(args, None)
    try:
        address = parse_address(value)
        assert isinstance(value, str)  # parse_address refuses anything else
        return with_scope_alias(address, value, scope)
    except NoteAddressError as exc:
        raise _fail(str(exc), path=value, **_echo(args, ("scope",))) from exc


def _target(ctx: ToolContext, args: Args, *, writing: bool) -> tuple[NoteStore, NoteAddress]:
    """The store holding the addressed note's home, and the address.

    A named agent or model home (``@agents/<slug>/``) other than the running one can be read
    but not written, as in the extension.
    """
    address = _address(args)
    homes = homes_for(ctx)
    if address.who is not None:
        if writing and address.who != homes.running_slug(address.scope):
            named = f"@{NAMED_HEAD_OF_SCOPE[address.scope]}/{address.who}/"
            raise _fail(
                f"{named} is not your home: writable homes are this session, @project/, "
                "@human/, @self/ and the running @model/ home",
                **_echo(args, ("path", "scope")),
            )
        homes = homes.named(address.scope, address.who)
    store = store_for(ctx, homes)
    _home_scope(store, address.scope)
    return store, address


def address_in(store: NoteStore, scope: str, path: str) -> str:
    """The address listings show for ``path`` in ``scope`` of ``store``'s homes."""
    return format_address(scope, path, store.homes.slug(scope))


def _int(args: Args, name: str, default: int, low: int, high: int | None) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{name} must be an integer", **{name: value})
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise _fail(f"{name} must be {bound}", **{name: value})
    return value


def _bool(args: Args, name: str) -> bool | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _fail(f"{name} must be true or false", **{name: value})
    return value


def _queries(args: Args) -> list[str]:
    value = args.get("query")
    if isinstance(value, str):
        queries = [value]
    elif isinstance(value, list):
        if not value:
            raise _fail("query must be a string or a non-empty array of strings", query=value)
        if not all(isinstance(item, str) for item in value):
            raise _fail("query array elements must be strings", query=value)
        queries = list(value)
    else:
        raise _fail("query must be a string or a non-empty array of strings", query=value)
    if any(item == "" for item in queries):
        raise _fail("an empty query matches everything; search for a literal", query=value)
    return queries


def _pattern(args: Args) -> tuple[PatternTarget | None, Callable[[str], bool] | None]:
    """The homes a pattern names (None: every home) and the glob over paths inside them."""
    value = args.get("pattern")
    if value is None or value == "":
        return None, None  # no filter
    try:
        if not isinstance(value, str):
            return None, compile_glob(value).matches  # names the wrong type
        target = parse_pattern(value)
        glob = compile_glob(target.glob).matches
        if target.who is not None and target.who != "**":
            compile_glob(target.who)  # a malformed name glob is named here
    except NoteAddressError as exc:
        raise _fail(str(exc), pattern=value) from exc
    return (target if target.scope is not None else None), glob


def _home_scope(store: NoteStore, scope: str) -> str:
    try:
        store.home(scope)
    except HomeUnavailableError as exc:
        raise _fail(str(exc), scope=scope) from exc
    return scope


def _named_homes(homes: NotesHomes, scope: str, pattern: str) -> list[str]:
    """Slugs of the existing ``agents/`` or ``models/`` homes whose name matches ``pattern``."""
    accept = compile_glob(pattern).matches
    folder = homes.root / NAMED_HEAD_OF_SCOPE[scope]
    try:
        with os.scandir(folder) as found:
            names = [e.name for e in found if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []  # no such namespace yet: no homes in it
    return sorted(name for name in names if SLUG.match(name) and accept(name))


def _selection(
    ctx: ToolContext, args: Args, target: PatternTarget | None
) -> list[tuple[NoteStore, str]]:
    """The (store, scope) pairs a listing walks: the ``scope`` alias, the pattern's home, or
    every home of this identity; they must agree when both name one."""
    homes = homes_for(ctx)
    scope = _scope(args, None)
    if target is None:
        store = store_for(ctx, homes)
        if scope is not None:
            return [(store, _home_scope(store, scope))]
        return [(store, each) for each in homes.available()]
    assert target.scope is not None
    if scope is not None and scope != target.scope:
        raise _fail(
            f"the pattern names the {target.scope} home but scope is {scope!r}; pass one of "
            "them, or both naming the same home",
            **_echo(args, ("pattern", "scope")),
        )
    if target.who is None:
        store = store_for(ctx, homes)
        return [(store, _home_scope(store, target.scope))]
    if SLUG.match(target.who):
        names = [target.who]
    else:
        names = _named_homes(homes, target.scope, target.who)
    return [(store_for(ctx, homes.named(target.scope, name)), target.scope) for name in names]


def _unavailable(ctx: ToolContext, args: Args, target: PatternTarget | None) -> list[HomeReadError]:
    """The homes a listing or search of every scope leaves out, said as such (a host without
    a session has no session home: the result says so rather than drop it silently)."""
    if target is not None or _scope(args, None) is not None:
        return []
    store = store_for(ctx)
    missing: list[HomeReadError] = []
    for scope in SCOPES:
        try:
            store.home(scope)
        except HomeUnavailableError as exc:
            missing.append(HomeReadError(str(exc), scope=scope))
    return missing


def _echo(args: Args, names: Sequence[str]) -> dict[str, JSONValue]:
    return {name: args[name] for name in names if name in args}


def _error_result(
    message: str, fields: Mapping[str, object], echo: Mapping[str, Any]
) -> ToolResult:
    envelope: dict[str, JSONValue] = {"error": message, **echo}
    for key, value in fields.items():
        envelope.setdefault(key, value)
    return ToolResult(text=fit_json(envelope), is_error=True)


def _note_error(exc: NoteError, args: Args, names: Sequence[str]) -> ToolResult:
    """A store failure as a result; path-shaped failures are argument errors instead."""
    echo = _echo(args, names)
    if isinstance(exc, InvalidPathError | PathEscapeError):
        raise ToolError(exc.message, **echo)
    fields = {k: v for k, v in exc.fields.items() if k != "scope" or "scope" in args}
    return _error_result(exc.message, fields, echo)


# --- rendering ----------------------------------------------------------------------------


def _meta_json(note: Note) -> dict[str, JSONValue]:
    return note.meta.to_json()


def _record_json(record: NoteRecord, address: str) -> dict[str, JSONValue]:
    return {
        "address": address,
        "path": record.path,
        "scope": record.scope,
        "stale": record.meta.stale,
        "size_bytes": record.size_bytes,
        "created_at": local_iso(record.meta.created_at),
        "updated_at": local_iso(record.meta.updated_at),
    }


def _problems(
    failures: Sequence[HomeReadError], refused: Sequence[Refused]
) -> dict[str, JSONValue]:
    """Page-level notices: homes that could not be read and files that are not usable notes."""
    extra: dict[str, JSONValue] = {}
    if failures:
        extra["unreadable_homes"] = [
            {"scope": failure.fields.get("scope"), "error": failure.message} for failure in failures
        ]
        extra["notice"] = (
            "some notes homes could not be read and are missing from this result; "
            "fix the error and call again"
        )
    if refused:
        extra["refused_total"] = len(refused)
        extra["refused"] = [
            {"scope": item.scope, "path": item.path, "reason": item.reason}
            for item in refused[:REFUSED_SHOWN]
        ]
    # Notices share the page with the rows, so they get a quarter of the budget at most.
    fitted: dict[str, JSONValue] = json.loads(fit_json(extra, TOOL_OUTPUT_MAX_BYTES // 4))
    return fitted


# --- notes_write ---------------------------------------------------------------------------


def notes_write(ctx: ToolContext, args: Args) -> ToolResult:
    store, address = _target(ctx, args, writing=True)
    scope, path = address.scope, address.path
    content = args.get("content")
    if not isinstance(content, str):
        raise _fail("content must be a string", path=path)
    stale = _bool(args, "stale")
    try:
        outcome = store.write(scope, path, content, stale=bool(stale))
    except NoteError as exc:
        return _note_error(exc, args, ("path", "scope"))
    note = outcome.note
    result = {
        "address": address_in(store, scope, path),
        "path": path,
        "scope": scope,
        "created": outcome.created,
        "size_bytes": note.size_bytes,
        "meta": _meta_json(note),
    }
    return ToolResult(text=fit_json(result), details=result)


# --- notes_edit ----------------------------------------------------------------------------


def _edits(args: Args) -> list[tuple[str, str]]:
    value = args.get("edits")
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail("edits must be an array of {oldText, newText} objects", edits=value)
    edits: list[tuple[str, str]] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"oldText", "newText"}:
            raise _fail(
                f"edits[{index}] must be an object with exactly oldText and newText",
                edit_index=index,
            )
        old, new = item["oldText"], item["newText"]
        if not isinstance(old, str) or not isinstance(new, str):
            raise _fail(f"edits[{index}].oldText and newText must be strings", edit_index=index)
        if old == "":
            raise _fail(f"edits[{index}].oldText must not be empty", edit_index=index)
        edits.append((old, new))
    return edits


def notes_edit(ctx: ToolContext, args: Args) -> ToolResult:
    store, address = _target(ctx, args, writing=True)
    scope, path = address.scope, address.path
    edits = _edits(args)
    stale = _bool(args, "stale")
    if not edits and stale is None:
        raise _fail("nothing to edit: pass edits, stale, or both", path=path)
    try:
        outcome = store.edit(scope, path, edits, stale=stale)
    except NoteError as exc:
        return _note_error(exc, args, ("path", "scope"))
    note = outcome.note
    result = {
        "address": address_in(store, scope, path),
        "path": path,
        "scope": scope,
        "applied": outcome.applied,
        "size_bytes": note.size_bytes,
        "meta": _meta_json(note),
    }
    return ToolResult(text=fit_json(result), details=result)


# --- notes_read ----------------------------------------------------------------------------


def notes_read(ctx: ToolContext, args: Args) -> ToolResult:
    store, address = _target(ctx, args, writing=False)
    scope, path = address.scope, address.path
    try:
        note = store.read(scope, path)
    except NoteError as exc:
        return _note_error(exc, args, ("path", "scope"))
    created = local_iso(note.meta.created_at)
    updated = local_iso(note.meta.updated_at)
    shown = address_in(store, scope, path)
    try:
        window = read_window(
            note.text,
            name=shown,
            offset_chars=args.get("offset_chars"),
            limit_chars=args.get("limit_chars"),
            suffix=(scope, f"created {created}", f"updated {updated}"),
        )
    except ReadRangeError as exc:
        echo = {"path": path, **_echo(args, ("scope",))}
        fields = {"offset_chars": exc.offset_chars, "total_chars": exc.total_chars}
        return _error_result(str(exc), fields, echo)
    except ValueError as exc:
        raise _fail(str(exc), **_echo(args, ("offset_chars", "limit_chars"))) from exc
    details = {
        "address": shown,
        "path": path,
        "scope": scope,
        "offset_chars": window.offset_chars,
        "limit_chars": window.limit_chars,
        "total_chars": window.total_chars,
        "next_offset_chars": window.next_offset_chars,
        "created_at": created,
        "updated_at": updated,
    }
    return ToolResult(text=window.text, details=details)


# --- notes_list ----------------------------------------------------------------------------


class _LazyRows(Sequence["JSONValue"]):
    """Rows rendered on access: a page touches a few dozen of 10,000 notes, so only those
    are built into records (the order needs only each note's time, path and scope)."""

    def __init__(
        self,
        reads: list[tuple[NoteStore, HomeRead]],
        order: list[int],
        starts: list[int],
    ) -> None:
        self._reads = reads
        self._order = order
        self._starts = starts

    def __len__(self) -> int:
        return len(self._order)

    def _row(self, position: int) -> JSONValue:
        index = self._order[position]
        home = bisect_right(self._starts, index) - 1
        store, read = self._reads[home]
        record = read.record(index - self._starts[home])
        return _record_json(record, address_in(store, record.scope, record.path))

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._row(position) for position in range(len(self._order))[index]]
        return self._row(range(len(self._order))[index])


def _listing(
    reads: list[tuple[NoteStore, HomeRead]], accept: Callable[[str], bool] | None
) -> _LazyRows:
    """Every note of ``reads`` in ``list_order``: newest first, then path, then scope."""
    reads = sorted(reads, key=lambda pair: pair[1].scope)  # concatenated in scope order
    paths: list[str] = []
    updated: list[int] = []
    starts: list[int] = []
    for _store, read in reads:
        starts.append(len(paths))
        paths.extend(read.paths())
        updated.extend(read.updated_at())
    order = list(range(len(paths)))
    if accept is not None:
        order = [index for index in order if accept(paths[index])]
    # Stable sorts with C key functions, least significant key first (scope: concatenation).
    order.sort(key=paths.__getitem__)
    order.sort(key=updated.__getitem__, reverse=True)
    return _LazyRows(reads, order, starts)


def notes_list(ctx: ToolContext, args: Args) -> ToolResult:
    target, accept = _pattern(args)
    selection = _selection(ctx, args, target)
    limit = _int(args, "max_results", LIST_DEFAULT, 1, LIST_MAX)
    cursor = _int(args, "cursor", 0, 0, None)
    reads: list[tuple[NoteStore, HomeRead]] = []
    failures: list[HomeReadError] = _unavailable(ctx, args, target)
    refused: list[Refused] = []
    for store, scope in selection:
        try:
            read = store.read_home(scope, bodies=False)
        except HomeReadError as exc:
            failures.append(exc)
            continue
        reads.append((store, read))
        home_refused = sorted(read.refused, key=lambda r: r.path)
        refused.extend(r for r in home_refused if accept is None or accept(r.path))
    with gc_paused():
        rows = _listing(reads, accept)
    result = page(
        rows,
        cursor,
        "files",
        limit=limit,
        extra=_problems(failures, refused),
        protect=frozenset({"address", "path", "scope"}),
    )
    return ToolResult(text=encode_json(result), details={"total": len(rows)})


# --- notes_search --------------------------------------------------------------------------


def _match_json(match: LineMatch, header_chars: int, max_chars: int) -> dict[str, JSONValue]:
    text = match.text[:max_chars]
    return {
        "line": match.line,
        "offset_chars": match.offset_chars,
        "read_offset_chars": header_chars + match.offset_chars,
        "text": text,
        "truncated": len(text) < len(match.text),
        "total_chars": len(match.text),
    }


def _file_row(
    note: Note,
    address: str,
    matches: list[LineMatch],
    per_file: int,
    max_chars: int,
    fits: Callable[[Any], bool],
) -> dict[str, JSONValue]:
    """One file's row, cut (plain prefixes, then fewer matches) until it fits a page alone."""
    head = {
        "address": address,
        "path": note.path,
        "scope": note.scope,
        "stale": note.meta.stale,
        "created_at": local_iso(note.meta.created_at),
        "updated_at": local_iso(note.meta.updated_at),
        "matches_total": len(matches),
    }
    shown = matches[:per_file]

    def build(count: int, chars: int) -> dict[str, JSONValue]:
        rows = [_match_json(m, note.parsed.header_chars, chars) for m in shown[:count]]
        return {**head, "matches": rows}

    if fits(build(len(shown), max_chars)):
        return build(len(shown), max_chars)
    lo, hi = 0, max_chars  # largest per-match prefix that fits with every match shown
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(build(len(shown), mid)):
            lo = mid
        else:
            hi = mid - 1
    if fits(build(len(shown), lo)):
        return build(len(shown), lo)
    lo, hi = 1, len(shown)  # too many matches even with empty text: show fewer
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(build(mid, 0)):
            lo = mid
        else:
            hi = mid - 1
    return build(lo, 0)


def notes_search(ctx: ToolContext, args: Args) -> ToolResult:
    queries = _queries(args)
    target, accept = _pattern(args)
    selection = _selection(ctx, args, target)
    per_file = _int(args, "max_matches_per_file", MATCHES_DEFAULT, 1, MATCHES_MAX)
    max_files = _int(args, "max_files", FILES_DEFAULT, 1, FILES_MAX)
    max_chars = _int(args, "max_chars_per_match", MATCH_CHARS_DEFAULT, 1, MATCH_CHARS_MAX)
    cursor = _int(args, "cursor", 0, 0, None)
    failures: list[HomeReadError] = _unavailable(ctx, args, target)
    refused: list[Refused] = []
    found: list[tuple[Note, str, list[LineMatch]]] = []
    for store, scope in selection:
        try:
            loaded = store.load(scope, accept, contains=queries)
        except HomeReadError as exc:
            failures.append(exc)
            continue
        refused.extend(loaded.refused)
        found.extend(
            (note, address_in(store, scope, note.path), match_lines(note.body, queries))
            for note in loaded.notes
        )
    found.sort(key=lambda row: (row[0].path, row[0].scope, row[1]))
    extra = _problems(failures, refused)
    widest_cursor = len(str(len(found)))
    # Only the rows a page can reach are rendered; each is cut to fit a page on its own.
    window = found[cursor : cursor + max_files]

    def fits(row: Any) -> bool:
        envelope = {**extra, "files": [row], "next_cursor": int("9" * widest_cursor)}
        return json_bytes(envelope) <= TOOL_OUTPUT_MAX_BYTES

    rows: list[JSONValue] = [None] * len(found)
    for index, (note, address, matches) in enumerate(window, start=cursor):
        rows[index] = _file_row(note, address, matches, per_file, max_chars, fits)
    result = page(rows, cursor, "files", limit=max_files, extra=extra)
    return ToolResult(text=encode_json(result), details={"total_files": len(found)})


# --- registry -------------------------------------------------------------------------------

_SCOPE = {"type": "string", "enum": list(SCOPES)}
_SCOPE_ALIAS = {
    **_SCOPE,
    "description": (
        "Alias kept for older callers: the home of a bare path. With an @ address it must "
        "name the same home."
    ),
}
_PATH = {
    "type": "string",
    "description": (
        "The note's address: checkpoint/progress.md (this session), @project/<path>, "
        "@human/<path>, @self/<path>, @model/<path>, or an address exactly as a listing "
        "shows it."
    ),
}
_PATTERN = {
    "type": "string",
    "description": (
        "Glob over note paths: * and ? stay within one segment, ** crosses folders. Start it "
        "with a home (@project/**, @self/plans/*, @agents/*/MAP.md) to list only that home."
    ),
}
_CURSOR = {
    "type": "integer",
    "minimum": 0,
    "description": "Resume from the previous page's next_cursor. Defaults to 0.",
}


def _guarded(
    run: Callable[[ToolContext, Args], ToolResult],
) -> Callable[[ToolContext, Args], ToolResult]:
    """Any filesystem failure the store did not name still reaches the model as a named error."""

    def guarded(ctx: ToolContext, args: Args) -> ToolResult:
        try:
            return run(ctx, args)
        except NoteError as exc:
            return _error_result(exc.message, exc.fields, _echo(args, ("path", "scope")))
        except OSError as exc:
            message = f"notes filesystem error: {exc.strerror or exc}"
            return _error_result(message, {}, _echo(args, ("path", "scope")))

    guarded.__name__ = run.__name__
    guarded.__doc__ = run.__doc__
    return guarded


def _schema(properties: dict[str, JSONValue], required: Sequence[str]) -> dict[str, JSONValue]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


TOOLS: tuple[Tool, ...] = (
    Tool(
        name="notes_write",
        description=(
            "Create or replace a note with exactly this content. Notes are Markdown files that "
            f"persist across context windows and sessions. {ADDRESS_HELP} stale: true closes "
            "the note (it leaves the boot index but stays readable); writing without stale "
            f"reopens it. Content is limited to {NOTE_MAX_BYTES} UTF-8 bytes."
        ),
        parameters=_schema(
            {
                "path": _PATH,
                "content": {"type": "string", "description": "The complete new note body."},
                "scope": _SCOPE_ALIAS,
                "stale": {"type": "boolean", "description": "Close the note. Defaults to false."},
            },
            ("path", "content"),
        ),
        handler=_guarded(notes_write),
        sequential=True,
    ),
    Tool(
        name="notes_edit",
        description=(
            "Edit an existing note in place: each oldText must occur exactly once and is "
            "replaced by newText, in order, all or nothing. Pass only stale to close (true) or "
            "reopen (false) a note without touching its content. Reports how many edits "
            f"applied. {ADDRESS_HELP}"
        ),
        parameters=_schema(
            {
                "path": _PATH,
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "minLength": 1},
                            "newText": {"type": "string"},
                        },
                        "required": ["oldText", "newText"],
                        "additionalProperties": False,
                    },
                    "description": "Exact-text replacements; optional for metadata-only edits.",
                },
                "stale": {"type": "boolean", "description": "Set or clear the stale flag."},
                "scope": _SCOPE_ALIAS,
            },
            ("path",),
        ),
        handler=_guarded(notes_edit),
        sequential=True,
    ),
    Tool(
        name="notes_read",
        description=(
            "Read a character window of a note file, metadata block first. The first line is a "
            "bracketed header naming the delivered range, the total length and where to "
            "continue; the window follows verbatim. A negative offset_chars counts back from "
            f"the end, so -200 reads the last 200 characters. {ADDRESS_HELP}"
        ),
        parameters=_schema(
            {
                "path": _PATH,
                "scope": _SCOPE_ALIAS,
                "offset_chars": {
                    "type": "integer",
                    "description": "Window start; negative counts from the end. Defaults to 0.",
                },
                "limit_chars": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": READ_LIMIT_CHARS_MAX,
                    "description": f"Most characters returned. Defaults to {READ_LIMIT_CHARS_MAX}.",
                },
            },
            ("path",),
        ),
        handler=_guarded(notes_read),
    ),
    Tool(
        name="notes_list",
        description=(
            "List notes across the homes (or one home), most recently updated first, each with "
            "its address (pass it back as given), stale flag, size and timestamps. Page with "
            "cursor."
        ),
        parameters=_schema(
            {
                "pattern": _PATTERN,
                "scope": {**_SCOPE, "description": "Only this home (an alias of an @ pattern)."},
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": LIST_MAX,
                    "description": f"Page size. Defaults to {LIST_DEFAULT}.",
                },
                "cursor": _CURSOR,
            },
            (),
        ),
        handler=_guarded(notes_list),
    ),
    Tool(
        name="notes_search",
        description=(
            "Case-sensitive literal search of note bodies, line by line. query is a string or "
            "an array of strings matched as OR. Files come in path order; each match names its "
            "line, its offset_chars in the body and read_offset_chars to pass to notes_read "
            "with the file's address. Page with cursor."
        ),
        parameters=_schema(
            {
                "query": {
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1},
                            "minItems": 1,
                        },
                    ],
                    "description": "Literal text, or several literals of which any may match.",
                },
                "pattern": _PATTERN,
                "scope": {**_SCOPE, "description": "Only this home (an alias of an @ pattern)."},
                "max_matches_per_file": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MATCHES_MAX,
                    "description": f"Matches shown per file. Defaults to {MATCHES_DEFAULT}.",
                },
                "max_files": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": FILES_MAX,
                    "description": f"Files per page. Defaults to {FILES_DEFAULT}.",
                },
                "max_chars_per_match": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MATCH_CHARS_MAX,
                    "description": (
                        f"Characters shown per matching line. Defaults to {MATCH_CHARS_DEFAULT}."
                    ),
                },
                "cursor": _CURSOR,
            },
            ("query",),
        ),
        handler=_guarded(notes_search),
    ),
)
