"""``pi-context cache``: what our cache holds (``info``), and removing it (``prune``, ``clear``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="show, prune or clear the cache (history indexes, notes caches, hypothesis files)",
        description=(
            "The cache ($PI_CONTEXT_CACHE_DIR, else $XDG_CACHE_HOME/pi-context, else "
            "~/.cache/pi-context) holds one history index per session file (the text of its "
            "items), one notes cache per notes home (its notes' metadata and bodies) and the "
            "hypothesis files of verify and conformance runs. Each entry records the file it "
            "belongs to; an entry whose file is gone is pruned."
        ),
    )
    actions = parser.add_subparsers(dest="cache_command", metavar="ACTION")
    actions.required = True
    info = actions.add_parser("info", help="the cache's folder, size and entries")
    info.add_argument("--json", action="store_true", help="print the entries as JSON")
    info.set_defaults(handler=run_info)
    prune = actions.add_parser(
        "prune", help="remove the entries whose session, home or spec is gone"
    )
    prune.set_defaults(handler=run_prune)
    clear = actions.add_parser("clear", help="remove every entry")
    clear.add_argument(
        "--logs",
        action="store_true",
        help="also remove the operation logs and their lock files (the state folder's "
        "operations/, $PI_CONTEXT_STATE_DIR, else $XDG_STATE_HOME/pi-context, else "
        "~/.local/state/pi-context)",
    )
    clear.set_defaults(handler=run_clear)


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _source(entry: Any) -> str:
    return ", ".join(s.path for s in entry.sources) or "(none recorded)"


def run_info(args: argparse.Namespace) -> int:
    from pi_context.support.cache import KINDS, entries
    from pi_context.support.cache_dir import cache_root

    found = list(entries())
    logs = _logs()
    if args.json:
        body = {
            "root": str(cache_root()),
            "operation_logs": {
                "folder": str(_log_folder()),
                "files": [str(path) for path, _ in logs],
                "bytes": sum(size for _, size in logs),
            },
            "bytes": sum(e.bytes for e in found),
            "entries": [
                {
                    "kind": e.kind,
                    "path": str(e.path),
                    "state": e.state,
                    "bytes": e.bytes,
                    "files": e.files,
                    "sources": [s.path for s in e.sources],
                }
                for e in found
            ],
        }
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    total = sum(e.bytes for e in found)
    print(f"cache: {cache_root()}  ({_size(total)} in {len(found)} entries)")
    print()
    print("| kind | entries | size | to prune | holds |")
    print("| --- | ---: | ---: | ---: | --- |")
    for kind in KINDS.values():
        mine = [e for e in found if e.kind == kind.name]
        stale = sum(1 for e in mine if not e.live)
        size = _size(sum(e.bytes for e in mine))
        print(f"| {kind.name} | {len(mine)} | {size} | {stale} | {kind.holds} |")
    if found:
        print()
        for e in found:
            print(f"{e.kind:<10} {e.state:<15} {_size(e.bytes):>10}  {e.path.name}  {_source(e)}")
    if any(not e.live for e in found):
        print("\n`pi-context cache prune` removes the entries not live")
    print()
    print(
        f"operation logs: {_log_folder()}  ({_size(sum(size for _, size in logs))} in "
        f"{len(logs)} files, locks included; kept 3 × 2 MiB per session; "
        "`pi-context cache clear --logs` removes them)"
    )
    return 0


def _log_folder() -> Any:
    from pi_context.bindings.operations.log import log_dir

    return log_dir()


def _logs() -> list[tuple[Any, int]]:
    """(path, bytes) of every operation log, rotation and lock file."""
    import os

    from pi_context.bindings.operations.log import log_files

    found = []
    for path in log_files():
        try:
            found.append((path, os.lstat(path).st_size))
        except FileNotFoundError:
            continue
    return found


def _report(sweep: Any, verb: str) -> int:
    """Print what stayed and why (stderr); the exit status: 1 when anything stayed."""
    for entry, why in sweep.left:
        print(f"left {entry.kind} {entry.path.name}: {why}", file=sys.stderr)
    if sweep.left:
        kept = _size(sum(e.bytes for e, _why in sweep.left))
        print(f"{len(sweep.left)} entries ({kept}) stayed; {verb} again once they are free")
    return 1 if sweep.left else 0


def run_prune(args: argparse.Namespace) -> int:
    from pi_context.support.cache import prune_report
    from pi_context.support.cache_dir import cache_root

    sweep = prune_report()
    for e in sweep.removed:
        print(f"removed {e.kind} {e.path.name} ({e.state}: {_source(e)})")
    freed = _size(sum(e.bytes for e in sweep.removed))
    print(f"pruned {len(sweep.removed)} entries ({freed}) from {cache_root()}")
    return _report(sweep, "prune")


def run_clear(args: argparse.Namespace) -> int:
    from pi_context.support.cache import clear_report
    from pi_context.support.cache_dir import cache_root

    sweep = clear_report()
    for e in sweep.removed:
        print(f"removed {e.kind} {e.path.name} ({_source(e)})")
    freed = _size(sum(e.bytes for e in sweep.removed))
    total = len(sweep.removed) + len(sweep.left)
    count = f"all {total}" if not sweep.left else f"{len(sweep.removed)} of {total}"
    print(f"removed {count} entries ({freed}) from {cache_root()}")
    if args.logs:
        from pi_context.bindings.operations.log import remove_logs

        gone = remove_logs()
        print(f"removed {len(gone)} operation log and lock files from {_log_folder()}")
    return _report(sweep, "clear")
