"""What each notes tool does: ``notes_write``, ``notes_edit``, ``notes_read``, ``notes_list``
and ``notes_search``, each a function from (context, arguments) to a ``ToolResult`` that fits
``TOOL_OUTPUT_MAX_BYTES``."""

from __future__ import annotations

import json
from collections.abc import Callable

from pi_context.bindings.notes import (
    columns,
    list_cursor,
    list_merge,
    resident,
    search_cursor,
    walks,
)
from pi_context.bindings.notes.frontmatter import ORIGIN_DEFAULT, local_iso
from pi_context.bindings.notes.note_address import NoteAddress
from pi_context.bindings.notes.query import LineMatch, match_lines
from pi_context.bindings.notes.records import HomeRead, Note, Refused, WriteOutcome, note_of
from pi_context.bindings.notes.store import (
    HomeReadError,
    NoteError,
    NoteStore,
)
from pi_context.bindings.notes.tool_args import (
    FILES_DEFAULT,
    FILES_MAX,
    LIST_DEFAULT,
    LIST_MAX,
    MATCH_CHARS_DEFAULT,
    MATCH_CHARS_MAX,
    MATCHES_DEFAULT,
    MATCHES_MAX,
    Args,
    _bool,
    _echo,
    _error_result,
    _fail,
    _int,
    _meta_json,
    _note_error,
    _origin,
    _pattern,
    _problems,
    _queries,
    _selection,
    _target,
    _unavailable,
    address_in,
)
from pi_context.bindings.tool_output import (
    TOOL_OUTPUT_MAX_BYTES,
    ReadRangeError,
    encode_json,
    fit_json,
    json_bytes,
    page,
    read_window,
)
from pi_context.bindings.tools import JSONValue, ToolContext, ToolResult
from pi_context.support.clock import now_ms
from pi_context.support.gc_pause import gc_paused

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any


# --- notes_write ---------------------------------------------------------------------------


def notes_write(ctx: ToolContext, args: Args) -> ToolResult:
    store, address = _target(ctx, args, writing=True)
    scope, path = address.scope, address.path
    content = args.get("content")
    if not isinstance(content, str):
        raise _fail("content must be a string", "invalid_argument", path=path)
    stale = _bool(args, "stale")
    # As published, a write records the origin it is given, self when none is.
    origin = _origin(args) or ORIGIN_DEFAULT
    return _written(
        store,
        address,
        args,
        "created",
        lambda: store.write(scope, path, content, stale=bool(stale), origin=origin),
    )


def _outcome(outcome: WriteOutcome) -> str:
    """The published write outcome: created, overwrote or uncrumpled."""
    if outcome.created:
        return "created"
    return "uncrumpled" if outcome.uncrumpled else "overwrote"


def _written(
    store: NoteStore,
    address: NoteAddress,
    args: Args,
    counted: str,
    write: Callable[[], WriteOutcome],
) -> ToolResult:
    """Run ``write`` and report the note it wrote, with the outcome's ``counted`` field
    (``created`` or ``applied``)."""
    try:
        outcome = write()
    except NoteError as exc:
        return _note_error(exc, args, ("path", "scope"))
    note = outcome.note
    scope, path = note.scope, note.path
    result: dict[str, JSONValue] = {
        "address": address_in(store, scope, path),
        "path": path,
        "scope": scope,
        counted: getattr(outcome, counted),
    }
    if counted == "created":
        result["outcome"] = _outcome(outcome)
    else:
        result["change_kind"] = outcome.change_kind
    if outcome.renamed_from is not None:
        result["rename_from"] = address_in(store, address.scope, outcome.renamed_from)
        result["rename_to"] = result["address"]
        result["replaced_crumpled_target"] = outcome.replaced_crumpled
    result["size_bytes"] = note.size_bytes
    result["meta"] = _meta_json(note)
    if note.crumpled_at is not None:
        result["crumpled_at"] = note.crumpled_at
    return ToolResult(text=fit_json(result), details=result)


# --- notes_update (and notes_edit, its earlier name) ----------------------------------------


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


def _rename_to(ctx: ToolContext, args: Args, store: NoteStore) -> NoteAddress | None:
    """The address ``rename_to`` names (``None`` when absent or empty, as published), in one
    of the homes this identity may write."""
    value = args.get("rename_to")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _fail("rename_to must be a note address", rename_to=value)
    target = _target(ctx, {"path": value}, writing=True)[1]
    if target.who is not None:  # the running agent's or model's home by its slug: @self/@model
        target = NoteAddress(target.scope, target.path, None)
    return target


def notes_update(ctx: ToolContext, args: Args) -> ToolResult:
    """Body edits, a metadata change (origin, crumpled; stale from the earlier contract) or,
    alone, a move to ``rename_to``."""
    store, address = _target(ctx, args, writing=True)
    scope, path = address.scope, address.path
    edits = _edits(args)
    stale = _bool(args, "stale")
    origin = _origin(args)
    crumpled = _bool(args, "crumpled")
    replace_all = bool(_bool(args, "replace_all"))
    target = _rename_to(ctx, args, store)
    if target is not None:
        if edits or origin is not None or crumpled is not None or replace_all or stale is not None:
            raise _fail(
                "rename_to is used alone: do not combine it with edits, origin, crumpled, "
                "replace_all or stale",
                "invalid_scope",
                path=path,
            )
        return _written(
            store,
            address,
            args,
            "applied",
            lambda: store.rename(scope, path, target.scope, target.path),
        )
    if not edits and stale is None and origin is None and crumpled is None:
        raise _fail(
            "nothing to edit: pass edits, origin or crumpled (a metadata-only update), or "
            "rename_to alone",
            "nothing_to_do",
            path=path,
        )
    return _written(
        store,
        address,
        args,
        "applied",
        lambda: store.edit(
            scope,
            path,
            edits,
            stale=stale,
            origin=origin,
            crumpled=crumpled,
            replace_all=replace_all,
        ),
    )


notes_edit = notes_update
"""The earlier name of ``notes_update`` (its arguments are a subset of the newest ones)."""


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
        return _error_result(str(exc), fields, echo, "invalid_offset")
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


def _page_size(args: Args, name: str, default: int, maximum: int) -> int:
    """The page size in ``name`` or in ``limit`` (the newest contract's name); both only
    when they agree."""
    size = _int(args, name, default, 1, maximum)
    if "limit" in args and args["limit"] is not None:
        limit = _int(args, "limit", default, 1, maximum)
        if name in args and args[name] is not None and size != limit:
            raise _fail(f"limit and {name} differ; pass one of them", limit=limit, **{name: size})
        return limit
    return size


def notes_list(ctx: ToolContext, args: Args) -> ToolResult:
    target, accept = _pattern(args)
    selection = _selection(ctx, args, target)
    limit = _page_size(args, "max_results", LIST_DEFAULT, LIST_MAX)
    wastebasket = bool(_bool(args, "wastebasket"))
    cursor = _list_cursor(args)
    reads: list[tuple[NoteStore, HomeRead]] = []
    failures: list[HomeReadError] = _unavailable(ctx, args, target)
    refused: list[Refused] = []
    with resident.one_call():  # one barrier for every home this call reads
        for store, scope in selection:
            try:
                read = store.read_home(scope, bodies=False)
            except HomeReadError as exc:
                failures.append(exc)
                continue
            reads.append((store, read))
            home_refused = sorted(read.refused, key=lambda r: r.path)
            refused.extend(r for r in home_refused if accept is None or accept(r.path))
    chosen = json.dumps(
        [
            args.get("pattern"),
            [[str(store.homes.root), scope] for store, scope in selection],
            wastebasket,
        ],
        ensure_ascii=False,
        default=str,
    )
    clock = selection[0][0].clock if selection else now_ms
    root = selection[0][0].homes.root if selection else None
    with gc_paused():
        reads.sort(key=lambda pair: pair[1].scope)  # concatenated in scope order
        scopes = [read.scope for _store, read in reads]
        homes = [columns.list_columns(read) for _store, read in reads]
        if accept is None:  # a resident host: as last time, or moved on by the changed notes
            made = list_merge.merged(chosen, scopes, homes, wastebasket)
        else:
            made = list_merge.Merged(chosen, scopes, homes, wastebasket, accept)
        listing = list_merge.cursor_listing(made)
        try:
            walk = list_cursor.resume(listing, cursor, chosen, clock(), root, limit)
        except list_cursor.CursorError as exc:
            raise _fail(str(exc), cursor=cursor) from None
    rows = list_merge.PageRows([store for store, _read in reads], made, walk.indices)
    # The widest cursor this page can end with: the one after any row it may hold.
    widest = walk.widest(min(len(rows), limit + 1))
    result = page(
        rows,
        0,
        "files",
        limit=limit,
        extra={**_problems(failures, refused), "crumpled_excluded": made.excluded},
        protect=frozenset({"address", "path", "scope"}),
        cursor_of=walk.cursor_of,
        cursor_bytes=widest,
        size_of=rows.size,
    )
    if walk.started is not None and result["next_cursor"] is not None and root is not None:
        name, order = walk.started
        walks.record(root, name, chosen, order, listing.texts)
    return ToolResult(text=encode_json(result), details={"total": len(listing.order)})


def _list_cursor(args: Args) -> int | str:
    value = args.get("cursor")
    if isinstance(value, str):
        return value
    return _int(args, "cursor", 0, 0, None)


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
    head: dict[str, JSONValue] = {
        "address": address,
        "path": note.path,
        "scope": note.scope,
        "stale": note.meta.stale,
        "created_at": local_iso(note.meta.created_at),
        "updated_at": local_iso(note.meta.updated_at),
        "matches_total": len(matches),
    }
    if note.crumpled_at is not None:
        head["crumpled_at"] = note.crumpled_at
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


def _search_order(
    homes: list[tuple[NoteStore, str, columns.SearchHits]], wastebasket: bool
) -> tuple[list[tuple[int, int]], int]:
    """Every live hit (or, with ``wastebasket``, every crumpled one) as (home, position), by
    path, then scope, then address; and how many the other side left out."""
    found: list[tuple[int, int]] = []
    paths: list[str] = []
    scopes: list[str] = []
    excluded = 0
    for home, (_store, scope, hits) in enumerate(homes):
        kept = [at for at, mark in enumerate(hits.crumpled) if mark == wastebasket]
        excluded += 0 if wastebasket else len(hits.crumpled) - len(kept)
        found.extend(zip([home] * len(kept), kept, strict=True))
        paths.extend(map(hits.paths.__getitem__, kept))
        scopes.extend([scope] * len(kept))
    order = list(range(len(found)))
    if len({scope for _store, scope, _hits in homes}) < len(homes):
        # Several homes of one scope (named agents' homes): the address tells them apart.
        addresses = [
            address_in(homes[home][0], homes[home][1], paths[at])
            for at, (home, _position) in enumerate(found)
        ]
        order.sort(key=addresses.__getitem__)
    # Stable sorts with C key functions, least significant key first; each home's hits are
    # already in path order, so the sorts merge runs.
    order.sort(key=scopes.__getitem__)
    order.sort(key=paths.__getitem__)
    return [found[index] for index in order], excluded


def _search_keys(
    homes: list[tuple[NoteStore, str, columns.SearchHits]], wastebasket: bool
) -> tuple[list[tuple[int, int]], int, list[tuple[str, str]]]:
    """``_search_order``, and each hit's (scope, path) in that order."""
    found, excluded = _search_order(homes, wastebasket)
    scopes = [scope for _store, scope, _hits in homes]
    paths = [hits.paths for _store, _scope, hits in homes]
    return found, excluded, [(scopes[home], paths[home][at]) for home, at in found]


def notes_search(ctx: ToolContext, args: Args) -> ToolResult:
    queries = _queries(args)
    target, accept = _pattern(args)
    selection = _selection(ctx, args, target)
    per_file = _int(args, "max_matches_per_file", MATCHES_DEFAULT, 1, MATCHES_MAX)
    max_files = _page_size(args, "max_files", FILES_DEFAULT, FILES_MAX)
    wastebasket = bool(_bool(args, "wastebasket"))
    max_chars = _int(args, "max_chars_per_match", MATCH_CHARS_DEFAULT, 1, MATCH_CHARS_MAX)
    cursor = _int(args, "cursor", 0, 0, None)
    failures: list[HomeReadError] = _unavailable(ctx, args, target)
    refused: list[Refused] = []
    homes: list[tuple[NoteStore, str, columns.SearchHits]] = []
    with resident.one_call():  # one barrier for every home this call reads
        for store, scope in selection:
            try:
                read = store.read_home(scope, accept, bodies=True, contains=queries)
            except HomeReadError as exc:
                failures.append(exc)
                continue
            refused.extend(read.refused)
            homes.append((store, scope, columns.search_hits(read)))
    request = json.dumps(
        [
            queries,
            args.get("pattern"),
            [[str(s.homes.root), sc] for s, sc in selection],
            wastebasket,
        ],
        ensure_ascii=False,
    )
    # Every hit by (home, position in its path order); only a page's rows are built below.
    with gc_paused():  # a query that many notes hold: no collection while its keys are made
        if len({scope for _store, scope, _hits in homes}) < len(homes):
            found, excluded, keys = _search_keys(homes, wastebasket)  # addresses: per caller
        else:  # the same hits as last time (nothing they hold changed): the order made then
            key = (request, *(scope for _store, scope, _hits in homes))
            held = [(hits.paths, hits.crumpled) for _store, _scope, hits in homes]
            made = columns.held(key, held, lambda: _search_keys(homes, wastebasket))
            found, excluded, keys = made
    extra = {**_problems(failures, refused), "crumpled_excluded": excluded}
    root = selection[0][0].homes.root if selection else None
    walk = search_cursor.resume(keys, cursor, request, root)
    widest_cursor = len(str(max(walk.length, len(found))))

    def fits(row: Any) -> bool:
        envelope = {**extra, "files": [row], "next_cursor": int("9" * widest_cursor)}
        return json_bytes(envelope) <= TOOL_OUTPUT_MAX_BYTES

    # Only the rows a page can reach are rendered; each is cut to fit a page on its own.
    rows: list[JSONValue] = [None] * len(walk.indices)
    for at, index in enumerate(walk.indices[:max_files]):
        home, position = found[index]
        store, scope, hits = homes[home]
        path, entry = hits.entries[position]
        note = note_of(scope, path, entry)
        matches = match_lines(note.body, queries)
        address = address_in(store, scope, path)
        rows[at] = _file_row(note, address, matches, per_file, max_chars, fits)
    result = page(
        rows,
        0,
        "files",
        limit=max_files,
        extra=extra,
        cursor_of=walk.positions.__getitem__,
        cursor_bytes=widest_cursor,
    )
    if walk.started is not None and result["next_cursor"] is not None and root is not None:
        walks.record(root, walk.started[0], request, walk.started[1])
    return ToolResult(text=encode_json(result), details={"total_files": len(found)})
