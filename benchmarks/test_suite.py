"""How long the whole test suite takes and how many tests it runs, measured, so the README's
figures come from a run and not from memory.

Runs ``pytest`` once in a fresh process (the same command CI runs; pass ``--junit FILE`` to
record an existing run's JUnit XML instead, e.g. one CI wrote with ``pytest --junitxml``),
counts passed / failed / skipped from the JUnit report and records the wall time. No
baseline: the figure is what a contributor waits for.

    python benchmarks/test_suite.py [--junit FILE] [-- PYTEST-ARGS...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from results import row, write

ROOT = Path(__file__).resolve().parents[1]


def counts(junit: Path) -> tuple[int, int, int, float]:
    """(passed, failed, skipped, seconds) of a JUnit XML report."""
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    seconds = sum(float(s.get("time", 0)) for s in suites)
    return tests - failed - skipped, failed, skipped, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--junit", type=Path, help="record this JUnit XML instead of running")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args()
    if args.junit is not None:
        passed, failed, skipped, seconds = counts(args.junit)
        how = f"recorded from {args.junit.name}"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            junit = Path(tmp) / "junit.xml"
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *args.pytest_args],
                cwd=ROOT,
                check=False,
            )
            seconds = time.perf_counter() - started
            passed, failed, skipped, _ = counts(junit)
        how = "one run of `pytest`, wall time"
    print(f"{passed} passed, {failed} failed, {skipped} skipped in {seconds:.0f} s")
    write(
        __file__,
        [
            row(
                "suite",
                "the whole test suite (`pytest`)",
                f"{passed:,} passed, {skipped} skipped, {failed} failed; {seconds / 60:.0f} min",
                target="0 failed",
                met=failed == 0,
            )
        ],
        note=how,
    )
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
