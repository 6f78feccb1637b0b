"""``pi-context session show FILE``: inspect a Pi session file as Pi would see it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.session import Session, SessionError
from pi_context.bindings.session.jsonl import encode
from pi_context.bindings.session.tree import TreeNode
from pi_context.bindings.session.windows import window_spans

_PREVIEW = 72


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "session",
        help="inspect Pi session files",
        description="Inspect Pi session JSONL files.",
    )
    sub = parser.add_subparsers(dest="session_command", required=True)
    show = sub.add_parser(
        "show",
        help="print branch, context, projection, name and tree of a session",
        description=(
            "Print, for the file's own leaf or --leaf, the branch ids, context entry ids, "
            "projection (messages, thinking level, model), session name and tree."
        ),
    )
    show.add_argument("file", type=Path, help="Pi session JSONL file")
    show.add_argument("--leaf", help="entry id to use as the leaf (default: the file's own)")
    show.add_argument("--json", action="store_true", help="print the view as JSON (fixture shape)")
    show.set_defaults(handler=run_show)
    from ._session_report import add_report

    add_report(sub)


def run_show(args: argparse.Namespace) -> int:
    try:
        session = Session.open(args.file, readonly=True)
        view = {"leaf": args.leaf or "file", **session.view(args.leaf)}
    except SessionError as exc:
        print(f"pi-context session: {exc}", file=sys.stderr)
        return 1
    for problem in session.problems:
        print(f"warning: {problem.render(session.path)}", file=sys.stderr)
    if args.json:
        sys.stdout.write(encode(view) + "\n")
    else:
        sys.stdout.write(render(session, view))
    return 0


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


def render(session: Session, view: dict[str, Any]) -> str:
    lines = [f"session {session.session_id}  ({session.path})"]
    lines.append(f"name: {view['sessionName'] or '-'}")
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
    lines.extend(_tree_lines(session.tree(), set(view["branchIds"])))
    return "\n".join(lines) + "\n"


def _tree_lines(roots: list[TreeNode], on_branch: set[str]) -> list[str]:
    out: list[str] = []
    # A chain stays at one indent; the children of a fork are indented and marked "├".
    Frame = tuple[TreeNode, int, bool, frozenset[int]]
    stack: list[Frame] = [(r, 0, False, frozenset()) for r in reversed(roots)]
    while stack:
        node, depth, forked, ancestors = stack.pop()
        label = f" [{node.label}]" if node.label is not None else ""
        mark = "●" if node.id in on_branch else "○"
        lead = "  " * depth + ("├ " if forked else "  " if depth else "")
        out.append(f"  {lead}{mark} {node.id}{label}  {_preview(node.entry)}")
        if id(node) in ancestors:
            continue  # only duplicate ids can make a node its own ancestor
        fork = len(node.children) > 1
        inner = ancestors | {id(node)} if fork else ancestors
        for child in reversed(node.children):
            stack.append((child, depth + 1 if fork else depth, fork, inner))
    return out
