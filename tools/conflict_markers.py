"""Fail when a tracked file of the checkout holds a merge-conflict marker.

A conflict left in a file once reached main in README.md and docs/architecture.md with both
halves contradicting each other, and every test passed. This check reads every file git
tracks (text files; binary ones are skipped) and reports each line that opens, splits or
closes a conflict: ``<<<<<<< ``, ``|||||||``, ``>>>>>>> `` at the start of a line, and a
lone ``=======`` inside an opened conflict. Run by CI (``python tools/conflict_markers.py``)
and by ``tests/docs/test_docs_integrity.py``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

_OPEN = "<" * 7
_BASE = "|" * 7
_SPLIT = "=" * 7
_CLOSE = ">" * 7


def _is_marker(line: str, marker: str) -> bool:
    return line == marker or line.startswith(marker + " ")


def markers(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, line) of every conflict marker among ``lines``."""
    inside = False
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if _is_marker(line, _OPEN):
            inside = True
            yield number, line
        elif _is_marker(line, _BASE) or _is_marker(line, _CLOSE):
            inside = not _is_marker(line, _CLOSE) and inside
            yield number, line
        elif inside and line == _SPLIT:
            yield number, line


def tracked(root: Path) -> list[Path]:
    """Every file git tracks under ``root``."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout
    return [root / name for name in out.decode("utf-8", "surrogateescape").split("\0") if name]


def find(root: Path) -> list[str]:
    """``path:line: text`` of every conflict marker in the tracked files under ``root``."""
    found: list[str] = []
    for path in tracked(root):
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue  # deleted in the working tree but not yet from the index
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", "replace").splitlines()
        for number, line in markers(text):
            found.append(f"{path.relative_to(root)}:{number}: {line}")
    return found


def main() -> int:
    root = Path(__file__).resolve().parents[1]
    found = find(root)
    for line in found:
        print(f"conflict marker: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
