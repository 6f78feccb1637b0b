"""Prints how many documentation snippets the run executed and parsed."""

from __future__ import annotations

import sys

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = next(
        (
            module.SNIPPET_COUNTS
            for name, module in list(sys.modules.items())
            if name.endswith("test_snippets") and hasattr(module, "SNIPPET_COUNTS")
        ),
        None,
    )
    if counts and (counts["run"] or counts["parsed"]):
        terminalreporter.write_line(
            f"docs snippets: {counts['run']} run, {counts['parsed']} checked to parse "
            "(no-run, each saying why in its fence info)"
        )
