"""Helpers for the public-API tests: code blocks of the docs and mypy on host scripts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def python_blocks(doc: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return re.findall(r"^```python\n(.*?)^```$", doc.read_text(encoding="utf-8"), re.S | re.M)


def run_mypy(
    script: Path, cache: Path, *more: Path, options: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on one host script (and ``more`` files), as the host would run it
    (installed package); ``options`` go to mypy before the files."""
    config = cache.parent / "mypy.ini"
    config.write_text("[mypy]\n")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(cache),
            "--config-file",
            str(config),
            *options,
            str(script),
            *(str(path) for path in more),
        ],
        capture_output=True,
        text=True,
        cwd=script.parent,
        timeout=600,
    )
