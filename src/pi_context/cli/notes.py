"""``pi-context notes``: inspect the notes homes, migrate old notes, sweep temp files.

``pi-context notes migrate`` previews (dry run) what it would do: move notes from the earlier
``~/.pi/agent/notes`` layout into the shared ``~/.agents/notes`` layout, and rename legacy
snake_case metadata; ``--apply`` does it. ``pi-context notes homes`` prints where each scope's
home is for a given identity. ``pi-context notes sweep`` removes temp files of killed writers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_context.bindings.notes.homes import SCOPES, HomeUnavailableError, notes_root
from pi_context.bindings.notes.jail import JailError, sweep_home
from pi_context.bindings.notes.migrate import (
    Plan,
    Rewrite,
    apply,
    homes_under,
    plan,
    preview,
    remove_emptied,
)
from pi_context.bindings.notes.relayout import (
    LayoutPlan,
    RootsOverlapError,
    apply_move,
    legacy_root,
    plan_layout,
)
from pi_context.bindings.notes.tools import homes_for
from pi_context.bindings.tools import ToolContext
from pi_context.support import identity

from ._options import add_notes_home, add_quiet, check_paths, fail


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "notes",
        help="inspect notes homes and migrate legacy note metadata",
        description="Inspect the notes homes and migrate legacy note metadata.",
    )
    actions = parser.add_subparsers(dest="notes_command", metavar="ACTION")
    actions.required = True

    migrate = actions.add_parser(
        "migrate",
        help="move notes out of the earlier layout, rename legacy metadata (dry run by default)",
        description=(
            "Move notes from the earlier ~/.pi/agent/notes layout into the shared layout, "
            "removing the folders that empties, and rename the legacy snake_case metadata keys "
            "(created_at, updated_at, last_accessed, access_count) to camelCase, in the notes "
            "already there and in those moved. Without --apply nothing is written: the dry run "
            "lists every move and every rename --apply would make."
        ),
    )
    add_notes_home(migrate)
    migrate.add_argument(
        "--from",
        dest="old_root",
        type=Path,
        help="the earlier layout's root to move notes from (default: ~/.pi/agent/notes)",
    )
    migrate.add_argument(
        "--project",
        type=Path,
        action="append",
        default=[],
        help="a project directory whose old project home should move (repeatable; cwd is tried)",
    )
    migrate.add_argument(
        "--model",
        action="append",
        default=[],
        help="a model id whose old hashed model home should move (repeatable)",
    )
    migrate.add_argument("--apply", action="store_true", help="rewrite (default: preview only)")
    add_quiet(migrate, "no progress lines on stderr")
    migrate.set_defaults(handler=run_migrate)

    homes = actions.add_parser(
        "homes",
        help="print each scope's home directory",
        description=(
            "Print the notes root and, for each scope (global, agent, model, project, session), "
            "the folder its notes live in for the given identity: --agent, --model, --cwd (the "
            "project) and --session (the session home; without it the session scope is "
            "unavailable). Reads nothing but the session file's header and creates nothing."
        ),
    )
    add_notes_home(homes)
    homes.add_argument(
        "--session", type=Path, metavar="FILE", help="Pi session JSONL file (for the session home)"
    )
    homes.add_argument("--agent", default="pi", help="agent name")
    homes.add_argument("--model", help="model id")
    homes.add_argument("--cwd", type=Path, default=None, help="project root (default: cwd)")
    homes.set_defaults(handler=run_homes)

    sweep = actions.add_parser("sweep", help="remove temp files left by killed note writers")
    add_notes_home(sweep)
    sweep.set_defaults(handler=run_sweep)


def run_layout(
    args: argparse.Namespace, root: Path, progress: Callable[[str], None]
) -> tuple[int, LayoutPlan | None]:
    """Move notes out of the earlier layout: how many moves failed, and the plan (``None``
    when there is no earlier layout)."""
    old_root = (args.old_root or legacy_root()).absolute()
    if not old_root.is_dir():
        return 0, None
    projects = [*args.project, Path.cwd()]
    try:
        found = plan_layout(old_root, root, projects, args.model, progress)
    except RootsOverlapError as exc:
        if args.old_root is not None:
            raise  # named on the command line: refused, exit 1
        # The default earlier root is the notes root itself (``~/.pi/agent`` linked to
        # ``~/.agents`` shares one folder): there is nothing to move, and nothing is removed.
        print(f"skipped the earlier layout: {exc.message}", file=sys.stderr)
        return 0, None
    verb = "moving" if args.apply else "would move"
    failed = 0
    for item in found.files:
        assert item.move.new is not None
        old = "/".join((*item.move.old, item.old_path))
        new = "/".join((*item.move.new, item.new_path))
        outcome = ""
        if args.apply:
            try:
                outcome = apply_move(found, item)
            except JailError as exc:
                failed += 1
                print(f"left {old_root}/{old}: {exc.message}", file=sys.stderr)
                continue
        note = f" ({outcome})" if outcome and outcome != "moved" else ""
        print(f"{verb} {old_root}/{old} -> {root}/{new}{note}")
    for where, why in found.left:
        print(f"left {old_root}/{where}: {why}", file=sys.stderr)
    moved = len(found.files) - failed
    if args.apply:
        print(f"moved {moved} of {len(found.files)} notes from {old_root} to {root}")
        if not identity.overlap(old_root, root):
            emptied = remove_emptied(old_root)
            if emptied.removed:
                print(f"removed {len(emptied.removed)} emptied folders of the earlier layout")
            if emptied.left and found.files:
                print(f"{old_root} keeps what could not move (listed above)")
    else:
        print(f"{len(found.files)} notes under {old_root} would move to {root}")
    return failed + (1 if args.apply and found.left else 0), found


def run_migrate(args: argparse.Namespace) -> int:
    bad = check_paths(
        "notes migrate",
        ("--from", args.old_root, "dir"),
        *(("--project", project, "dir") for project in args.project),
    )
    if bad is not None:
        return bad
    root = notes_root(args.notes_home)

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    try:
        layout_failed, layout = run_layout(args, root, progress)
    except JailError as exc:
        return fail("notes migrate", exc.message, 1)
    pending = layout if layout is not None and not args.apply else None
    status = run_metadata(args, root, progress, pending)
    return 1 if layout_failed or status else 0


def run_metadata(
    args: argparse.Namespace,
    root: Path,
    progress: Callable[[str], None],
    moving: LayoutPlan | None = None,
) -> int:
    """Rename legacy metadata under ``root``; in a dry run, also preview it for the notes
    ``moving`` would place there (as --apply renames them right after moving them)."""
    if not root.is_dir() and not (moving and moving.files):
        print(f"pi-context notes migrate: no notes root at {root}; nothing to migrate")
        return 0
    found = plan(root, progress) if root.is_dir() else Plan(root, [], 0, [])
    verb = "migrating" if args.apply else "would migrate"
    failed = 0
    for item in found.items:
        shown = f"{item.home.relative_to(root)}/{item.path}"
        rewrite = item.rewrite
        if args.apply:
            try:
                done = apply(item)
            except (OSError, UnicodeDecodeError, JailError) as exc:
                failed += 1
                print(f"failed {shown}: {exc}", file=sys.stderr)
                continue
            if done is None:
                continue  # someone migrated it meanwhile
            rewrite = done
        print(f"{verb} {shown}: {_changes(rewrite)}")
    scanned, count = found.scanned, len(found.items)
    for move in moving.files if moving is not None else ():
        assert moving is not None and move.move.new is not None
        source = moving.old_root.joinpath(*move.move.old, *move.old_path.split("/"))
        shown = "/".join((*move.move.new, move.new_path))
        scanned += 1
        previewed = preview(source)
        if isinstance(previewed, str):
            print(f"skipped {source}: {previewed}", file=sys.stderr)
        elif previewed is not None:
            count += 1
            print(f"would migrate {shown} (once moved): {_changes(previewed)}")
    for file, error in found.errors:
        print(f"skipped {file}: {error}", file=sys.stderr)
    if args.apply:
        print(f"migrated {count - failed} of {scanned} notes under {root}")
    else:
        print(f"{count} of {scanned} notes under {root} need migrating", end="")
        print("; run again with --apply to rewrite them" if count else "")
    return 1 if failed else 0


def _changes(rewrite: Rewrite) -> str:
    changes = [f"{old} -> {new}" for old, new in rewrite.renamed]
    changes += [f"dropped {key}" for key in rewrite.dropped]
    return ", ".join(changes)


def run_homes(args: argparse.Namespace) -> int:
    bad = check_paths(
        "notes homes", ("--session", args.session, "file"), ("--cwd", args.cwd, "dir")
    )
    if bad is not None:
        return bad
    context = ToolContext(
        session_path=args.session,
        notes_home=args.notes_home,
        cwd=args.cwd or Path.cwd(),
        agent_name=args.agent,
        model_id=args.model,
    )
    homes = homes_for(context)
    print(f"root     {notes_root(args.notes_home)}")
    for scope in SCOPES:
        try:
            print(f"{scope:<8} {homes.home(scope)}")
        except HomeUnavailableError as exc:
            print(f"{scope:<8} (unavailable: {exc})")
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    bad = check_paths("notes sweep", ("--notes-home", args.notes_home, "dir"))
    if bad is not None:
        return bad
    root = notes_root(args.notes_home)
    removed = 0
    for home in homes_under(root):
        try:
            removed += sweep_home(root, home.relative_to(root).parts)
        except JailError as exc:
            print(f"skipped {home}: {exc.message}", file=sys.stderr)
    print(f"removed {removed} stale temp file(s) under {root}")
    return 0
