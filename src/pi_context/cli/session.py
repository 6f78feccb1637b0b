"""``pi-context session show FILE``: inspect a Pi session file as Pi would see it (and, from
sibling modules, ``session report``, ``session panel`` and ``session export``)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.dialect import describe_dialects, dialects_in
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.outline import OutlineRow, outline_json
from pi_context.bindings.session.windows import window_spans
from pi_context.support.gc_pause import gc_paused

from ._options import FAILURE, check_paths, fail

_PREVIEW = 72
_SHOWN = 5  # problems of one kind, ids, or lines listed before the rest is counted
_MAX_INDENT = 16  # nested forks drawn as indentation
_BIG_FILE = 16 * 2**20  # files that take a few seconds: say what is happening


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "session",
        help="inspect Pi session files",
        description="Inspect Pi session JSONL files.",
    )
    sub = parser.add_subparsers(dest="session_command", required=True)
    show = sub.add_parser(
        "show",
        help="print branch, windows, context, projection, name and tree of a session",
        description=(
            "Print, for the file's own leaf or --leaf, the branch (entry by entry, in sections "
            "per context window), which entries are in context, the projection (messages, "
            "thinking level, model), the session name, the dialect of the extension's entries "
            "(notesoup, pi-context, mixed or none) and the whole entry tree."
        ),
    )
    show.add_argument("file", type=Path, help="Pi session JSONL file")
    show.add_argument("--leaf", help="entry id to use as the leaf (default: the file's own)")
    show.add_argument("--json", action="store_true", help="print the view as JSON (fixture shape)")
    show.set_defaults(handler=run_show)
    from ._session_panel import add_panel
    from ._session_report import add_report

    add_report(sub)
    add_panel(sub)


def run_show(args: argparse.Namespace) -> int:
    with gc_paused():  # a short-lived command over many acyclic values (see gc_paused)
        return _show(args)


def _progress(message: str) -> None:
    # Only for a person watching: piped or captured stderr stays exactly the warnings.
    if sys.stderr.isatty():
        print(f"pi-context session show: {message}", file=sys.stderr, flush=True)


def _show(args: argparse.Namespace) -> int:
    bad = check_paths("session show", ("FILE", args.file, "file"))
    if bad is not None:
        return bad
    try:
        size = args.file.stat().st_size if args.file.is_file() else 0
        if size >= _BIG_FILE:
            _progress(f"reading {args.file} ({size / 2**20:.0f} MiB) ...")
        session = Session.open(args.file, readonly=True, lazy=False)  # it reads every entry
        if size >= _BIG_FILE:
            _progress(f"{len(session.entries):,} entries read; building the views ...")
    except SessionError as exc:
        return fail("session show", exc, FAILURE)
    try:
        view = {"leaf": args.leaf or "file", **session.view(args.leaf, tree=False)}
    except SessionError as exc:  # the file is read: what is wrong is --leaf
        if args.leaf is None:
            return fail("session show", exc, FAILURE)
        return fail("session show", f"--leaf {args.leaf}: no such entry in {args.file}")
    for warning in _warnings(session):
        print(f"warning: {_CONTROL.sub(_escape, warning)}", file=sys.stderr)
    rows = session.outline()
    if args.json:
        branch = session.branch(view["leafId"]) if view["leafId"] else []
        view["windows"] = [
            {"windowId": s.window_id, "markerId": s.marker_id, "start": s.start, "end": s.end}
            for s in window_spans(branch, session.session_id)
        ]
        view["tree"] = outline_json(rows)
        view["dialect"] = describe_dialects(dialects_in(session.entries))
        sys.stdout.write(encode(view) + "\n")
    else:
        sys.stdout.write(render(session, view, rows))
    return 0


def _warnings(session: Session) -> list[str]:
    """Load problems in file order, at most a few of each kind, so that a hostile file cannot
    bury the terminal: repeated ids become one line, other kinds a count of the rest."""
    out: list[str] = []
    shown: dict[str, int] = {}
    skipped: dict[str, list[int | None]] = {}
    for problem in session.problems:
        if problem.kind == "duplicate-id":
            if not shown.get(problem.kind):
                out.append(_duplicates_warning(session))
            shown[problem.kind] = 1
        elif shown.get(problem.kind, 0) < _SHOWN:
            out.append(problem.render(session.path))
            shown[problem.kind] = shown.get(problem.kind, 0) + 1
        else:
            skipped.setdefault(problem.kind, []).append(problem.line)
    for kind, lines in skipped.items():
        out.append(f"{session.path}: {kind}: {len(lines)} more like this ({_lines_text(lines)})")
    return out


def _duplicates_warning(session: Session) -> str:
    repeated = session.duplicate_ids()
    items = [
        f"{entry_id} ({_lines_text(lines)})" for entry_id, lines in list(repeated.items())[:_SHOWN]
    ]
    more = f", and {len(repeated) - _SHOWN} more" if len(repeated) > _SHOWN else ""
    count = f"{len(repeated)} id{'s' if len(repeated) != 1 else ''}"
    return (
        f"{session.path}: duplicate-id: {count} written more than once; the last entry of each "
        f"wins and is shown once: {', '.join(items)}{more}"
    )


def _lines_text(lines: list[int | None]) -> str:
    known = [str(line) for line in lines if line is not None]
    head = ", ".join(known[:_SHOWN])
    tail = f", … {len(known) - _SHOWN} more" if len(known) > _SHOWN else ""
    return f"line{'s' if len(known) != 1 else ''} {head}{tail}"


def _preview(entry: dict[str, Any]) -> str:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return "message (malformed)"
        if message.get("role") == "bashExecution":
            return f"bashExecution: $ {_short(str(message.get('command', '')))}"
        return f"{message.get('role')}: {_text(message.get('content'))}"
    if kind == "custom_message":
        hidden = "" if entry.get("display") else " (hidden)"
        return f"custom_message {entry.get('customType')}{hidden}: {_text(entry.get('content'))}"
    if kind == "custom":
        return f"custom {entry.get('customType')} {_short(encode(entry.get('data')))}"
    if kind == "compaction":
        keep = entry.get("firstKeptEntryId")
        kept = "retain-none" if keep == entry.get("id") else f"keep from {keep}"
        return f"compaction ({kept}): {_short(str(entry.get('summary', '')))}"
    if kind == "branch_summary":
        return f"branch_summary from {entry.get('fromId')}: {_short(str(entry.get('summary', '')))}"
    if kind == "context_edit":
        replacement = entry.get("replacement")
        what = "remove" if replacement is None else "replace"
        return f"context_edit {what} {entry.get('targetId')}"
    if kind == "label":
        return f"label {entry.get('targetId')} = {entry.get('label')!r}"
    if kind == "session_info":
        return f"session_info name={entry.get('name')!r}"
    if kind == "model_change":
        return f"model_change {entry.get('provider')}/{entry.get('modelId')}"
    if kind == "thinking_level_change":
        return f"thinking_level_change {entry.get('thinkingLevel')}"
    return str(kind)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return _short(content)
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type')}]")
        return _short(" ".join(parts))
    return ""


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


def render(session: Session, view: dict[str, Any], rows: list[OutlineRow]) -> str:
    lines = [f"session {session.session_id}  ({session.path})"]
    lines.append(f"name: {view['sessionName'] or '-'}")
    lines.append(f"dialect: {describe_dialects(dialects_in(session.entries))}")
    leaf = view["leafId"]
    lines.append(f"leaf: {leaf or '-'}" + ("" if view["leaf"] == "file" else " (--leaf)"))
    projection = view["projection"]
    model = projection.get("model")
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "-"
    lines.append(f"model: {model_text}   thinking: {projection.get('thinkingLevel', '-')}")
    lines.append(f"messages in projection: {len(projection['messages'])}")
    branch = session.branch(leaf) if leaf else []
    in_context = set(view["contextEntryIds"])
    spans = window_spans(branch, session.session_id)
    lines.append("")
    lines.append(f"branch ({len(branch)} entries; * = in context):")
    for span in spans:
        current = " (active)" if span is spans[-1] else ""
        lines.append(f"  ══ window {span.window_id}{current} ══")
        for entry in branch[span.start : span.end]:
            mark = "*" if entry["id"] in in_context else " "
            lines.append(f"  {mark} {entry['id']}  {_preview(entry)}")
    lines.append("")
    lines.append("tree:")
    lines.extend(_tree_lines(rows, set(view["branchIds"])))
    return "\n".join([_CONTROL.sub(_escape, line) for line in lines]) + "\n"


# Control characters from a file (ids, labels, previews) must not drive the terminal or split a
# row: C0 and C1 controls, DEL, line/paragraph separators and bidirectional overrides are escaped;
# so are lone surrogates (half an emoji, as Node writes it), which no UTF-8 output can carry.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _tree_lines(rows: list[OutlineRow], on_branch: set[str]) -> list[str]:
    # A chain without forks stays at one indent, however long; the children of a fork are
    # indented and marked "├", the last of them "└". Past _MAX_INDENT nested forks the indent
    # stops growing and the nesting is written as a number, so a deep file cannot make the
    # output quadratic.
    out: list[str] = []
    in_cycles = False
    for row in rows:
        if row.cycle and not in_cycles:
            in_cycles = True
            out.append(
                "  ↺ not in Pi's tree (their parents run in a cycle; cut at its first line):"
            )
        label = f" [{row.node.label}]" if row.node.label is not None else ""
        mark = "●" if row.id in on_branch else "○"
        branch = ("└ " if row.last else "├ ") if row.forked else "  " if row.forks else ""
        if row.forks <= _MAX_INDENT:
            lead = "  " * row.forks + branch
        else:
            lead = "  " * _MAX_INDENT + f"»{row.forks} " + (branch or "  ")
        cut = f"  ↺ cycle of {row.cycle}" if row.cycle else ""
        out.append(f"  {lead}{mark} {row.id}{label}  {_preview(row.node.entry)}{cut}")
    return out
