"""``pi-context notes``: inspect the notes homes and migrate legacy note metadata.

``pi-context notes migrate`` previews (dry run) which notes under the notes root still carry
legacy snake_case metadata; ``--apply`` rewrites them. ``pi-context notes homes`` prints where
each scope's home is for a given identity.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.notes.homes import SCOPES, HomeUnavailableError, notes_root
from pi_context.bindings.notes.jail import JailError
from pi_context.bindings.notes.migrate import apply, plan
from pi_context.bindings.notes.tools import homes_for
from pi_context.bindings.tools import ToolContext


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
        help="rename legacy snake_case note metadata to camelCase (dry run unless --apply)",
        description=(
            "Find notes whose metadata uses the legacy snake_case keys (created_at, updated_at, "
            "last_accessed, access_count) and rename them to camelCase. Without --apply nothing "
            "is written."
        ),
    )
    migrate.add_argument("--notes-home", type=Path, help="notes root (default: PI_NOTES_HOME)")
    migrate.add_argument("--apply", action="store_true", help="rewrite (default: preview only)")
    migrate.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    migrate.set_defaults(handler=run_migrate)

    homes = actions.add_parser("homes", help="print each scope's home directory")
    homes.add_argument("--notes-home", type=Path, help="notes root (default: PI_NOTES_HOME)")
    homes.add_argument("--session", type=Path, help="Pi session JSONL file (for the session home)")
    homes.add_argument("--agent", default="pi", help="agent name")
    homes.add_argument("--model", help="model id")
    homes.add_argument("--cwd", type=Path, default=None, help="project root (default: cwd)")
    homes.set_defaults(handler=run_homes)


def run_migrate(args: argparse.Namespace) -> int:
    root = notes_root(args.notes_home)
    if not root.is_dir():
        print(f"pi-context notes migrate: no notes root at {root}; nothing to migrate")
        return 0

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    found = plan(root, progress)
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
        changes = [f"{old} -> {new}" for old, new in rewrite.renamed]
        changes += [f"dropped {key}" for key in rewrite.dropped]
        print(f"{verb} {shown}: {', '.join(changes)}")
    for file, error in found.errors:
        print(f"skipped {file}: {error}", file=sys.stderr)
    count = len(found.items) - failed
    if args.apply:
        print(f"migrated {count} of {found.scanned} notes under {root}")
    else:
        print(f"{len(found.items)} of {found.scanned} notes under {root} need migrating", end="")
        print("; run again with --apply to rewrite them" if found.items else "")
    return 1 if failed else 0


def run_homes(args: argparse.Namespace) -> int:
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
