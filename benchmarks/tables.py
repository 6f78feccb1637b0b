"""The benchmark tables of README.md and docs/benchmarks/, generated from the result files
the scripts write (``benchmarks/results/<script-stem>.json``, see ``results.py``), and the
drift check that keeps every other table honest.

A generated table sits between two comments that name the scripts whose rows it shows::

    <!-- results: cli_wall core_reduce -->
    ... (generated: do not edit) ...
    <!-- /results -->

Under the table, one line per script gives the date and the machine of its run; a script
without a result file is named as not measured, and no figure of it is shown or claimed.

    python benchmarks/tables.py           # rewrite every generated table
    python benchmarks/tables.py --check   # exit 1 on drift

The check fails when a generated table is not what its result files give, and when any table
with a ``met?`` column in README.md or docs/ (generated or not) says "yes" for a row whose
result file does not record that figure as met (a row is found by its script and its
"measures" text).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import RESULTS, read  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_REGION = re.compile(r"(<!-- results: ([\w\- ]+?) -->\n)(.*?)(<!-- /results -->)", re.DOTALL)
HEADER = "| script | measures | ours | baseline | ratio | target | met? |"


def pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _verdict(met: bool | None) -> str:
    return {True: "yes", False: "**no**", None: "—"}[met]


def load(stem: str, folder: Path = RESULTS) -> dict[str, Any] | None:
    path = folder / f"{stem}.json"
    return read(path) if path.exists() else None


def render(stems: list[str], folder: Path = RESULTS) -> str:
    """The generated table (and its provenance lines) for the scripts ``stems``."""
    lines = [HEADER, "| --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    for stem in stems:
        record = load(stem, folder)
        if record is None:
            notes.append(
                f"- `{stem}.py`: no result file; not measured since the tables were "
                "generated from runs, so no figure of it is claimed here."
            )
            continue
        for r in record["rows"]:
            cells = [
                f"`{record['script']}`",
                r["measures"],
                r["ours"],
                r["baseline"],
                r["ratio"],
                r["target"],
                _verdict(r["met"]),
            ]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        note = f" ({record['note']})" if record.get("note") else ""
        notes.append(f"- `{record['script']}`: {record['date']}, {record['machine']}{note}")
    if len(lines) == 2:  # no script has a result file: no empty table
        return "\n".join(notes) + "\n"
    return "\n".join([*lines, "", *notes]) + "\n"


def regenerate(text: str, folder: Path = RESULTS) -> str:
    return _REGION.sub(lambda m: m.group(1) + render(m.group(2).split(), folder) + m.group(4), text)


def _tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def false_claims(text: str, folder: Path = RESULTS) -> list[str]:
    """Rows of a ``met?`` table in ``text`` that say yes where no result file agrees."""
    found = []
    for table in _tables(text):
        header = [c.lower() for c in table[0]]
        # "met?" is a claim about now; "met on 2026-12-01?" is history, dated, and not checked
        met_col = next(
            (
                i
                for i, c in enumerate(header)
                if c.startswith("met") and not re.search(r"\d{4}-\d{2}-\d{2}", c)
            ),
            None,
        )
        if met_col is None:
            continue
        for cells in table[2:]:
            if len(cells) <= met_col or not cells[met_col].lower().startswith("yes"):
                continue
            if "measures" not in header:
                found.append(f"{cells[0]}: claims met in a table no result file backs")
                continue
            script_col, measures_col = 0, header.index("measures")
            stem = cells[script_col].strip("`").removesuffix(".py")
            record = load(stem, folder)
            measures = cells[measures_col].replace("\\|", "|")
            match = (
                None
                if record is None
                else next((r for r in record["rows"] if r["measures"] == measures), None)
            )
            if match is None:
                found.append(f"{stem}.py / {measures}: claims met, no result row records it")
            elif match["met"] is not True:
                found.append(
                    f"{stem}.py / {measures}: claims met, its result file says "
                    f"{match['ours']} against {match['target']}: not met"
                )
    return found


def check(root: Path = ROOT, folder: Path = RESULTS) -> list[str]:
    problems = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(root)
        if regenerate(text, folder) != text:
            problems.append(f"{name}: a generated table is stale (python benchmarks/tables.py)")
        problems += [f"{name}: {claim}" for claim in false_claims(text, folder)]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on drift, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for problem in problems:
            print(f"benchmarks/tables.py: {problem}", file=sys.stderr)
        return 1 if problems else 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = regenerate(text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
