"""How the notes tools read their arguments and reach the store: the homes and store of a
tool context, each argument checked into its value (a malformed one raises ``ToolError``), the
error envelope, and the JSON of a note's metadata and a listing row."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence

from pi_context.bindings.notes.address import NoteAddressError, compile_glob
from pi_context.bindings.notes.frontmatter import ORIGINS, local_iso
from pi_context.bindings.notes.homes import (
    SCOPES,
    HomeUnavailableError,
    NotesHomes,
    notes_root,
    session_id_from_file,
)
from pi_context.bindings.notes.note_address import (
    NAMED_HEAD_OF_SCOPE,
    SLUG,
    NoteAddress,
    PatternTarget,
    format_address,
    parse_address,
    parse_pattern,
    with_scope_alias,
)
from pi_context.bindings.notes.records import Note, NoteRecord, Refused
from pi_context.bindings.notes.store import (
    HomeReadError,
    InvalidPathError,
    NoteError,
    NoteStore,
    PathEscapeError,
)
from pi_context.bindings.tool_output import (
    TOOL_OUTPUT_MAX_BYTES,
    fit_json,
)
from pi_context.bindings.tools import JSONValue, ToolContext, ToolError, ToolResult

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


ARGUMENT_CODES = {
    "path": "invalid_address",
    "address": "invalid_address",
    "rename_to": "invalid_address",
    "pattern": "invalid_pattern",
    "query": "invalid_query",
    "offset_chars": "invalid_offset",
    "origin": "invalid_origin",
    "scope": "invalid_scope",
}
"""The published refusal code of a malformed argument (``invalid_argument`` for the rest)."""


def envelope(message: str, code: str, details: Mapping[str, Any]) -> dict[str, JSONValue]:
    """The newest contract's error result: ``{error, code, details?}`` (no empty details)."""
    body: dict[str, JSONValue] = {"error": message, "code": code}
    if details:
        body["details"] = dict(details)
    return body


def _fail(message: str, code: str | None = None, /, **echo: JSONValue) -> ToolError:
    """A malformed argument, named by its code and echoed in ``details``. An echoed argument
    can be arbitrarily large; the dispatcher cuts it visibly to the budget."""
    if code is None:
        code = next((ARGUMENT_CODES[k] for k in echo if k in ARGUMENT_CODES), "invalid_argument")
    return ToolError(message, envelope(message, code, echo))


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
    homes = store.homes
    return format_address(scope, path, homes.slug(scope), homes.running_slug(scope))


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


def _origin(args: Args) -> str | None:
    """``origin``: where the content came from (user, self or external); ``None`` if absent."""
    value = args.get("origin")
    if value is None:
        return None
    if not isinstance(value, str) or value not in ORIGINS:
        raise _fail(f"origin must be one of {', '.join(ORIGINS)}", origin=value)
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
    message: str, fields: Mapping[str, object], echo: Mapping[str, Any], code: str = "refused"
) -> ToolResult:
    details: dict[str, Any] = dict(echo)
    for key, value in fields.items():
        details.setdefault(key, value)
    return ToolResult(text=fit_json(envelope(message, code, details)), is_error=True)


def _note_error(exc: NoteError, args: Args, names: Sequence[str]) -> ToolResult:
    """A store failure as a result; path-shaped failures are argument errors instead."""
    echo = _echo(args, names)
    if isinstance(exc, InvalidPathError | PathEscapeError):
        raise _fail(exc.message, exc.code, **echo)
    fields = {k: v for k, v in exc.fields.items() if k != "scope" or "scope" in args}
    return _error_result(exc.message, fields, echo, exc.code)


# --- rendering ----------------------------------------------------------------------------


def _meta_json(note: Note) -> dict[str, JSONValue]:
    return note.meta.to_json()


def record_json(record: NoteRecord, address: str) -> dict[str, JSONValue]:
    row: dict[str, JSONValue] = {
        "address": address,
        "path": record.path,
        "scope": record.scope,
        "stale": record.meta.stale,
        "size_bytes": record.size_bytes,
        "created_at": local_iso(record.meta.created_at),
        "updated_at": local_iso(record.meta.updated_at),
    }
    if record.crumpled_at is not None:
        row["crumpled_at"] = record.crumpled_at
    return row


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
