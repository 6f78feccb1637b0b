"""The one place a benchmark script records what it measured.

Every script in ``benchmarks/`` ends by calling :func:`write` with its rows; the figures in
README.md and docs/benchmarks/ are generated from the files it writes
(``python benchmarks/tables.py``), never typed by hand. A file is
``benchmarks/results/<script-stem>.json``::

    {"script": "cli_wall.py", "date": "2026-12-04T22:10:00Z",
     "machine": "Linux x86_64, 2 CPUs, Python 3.11.7, load average 3.1 2.8 2.5",
     "note": "...",
     "rows": [{"id": "help", "measures": "`pi-context --help`", "ours": "0.036 s",
               "baseline": "python -c 'import argparse' 0.030 s", "ratio": "1.20×",
               "target": "≤ 0.1 s", "met": true}]}

``ours``, ``baseline``, ``ratio`` and ``target`` are display text (units differ per row);
``met`` is the script's own verdict, computed from the numbers it measured (``null`` for a
row that has no target). A table may claim "yes" only where its result file says ``true``.

Use from a script in this folder (run as ``python benchmarks/NAME.py``, so this folder is on
``sys.path``)::

    from results import row, write
    write(__file__, [row("help", "`pi-context --help`", f"{o:.3f} s", target="≤ 0.1 s",
                         met=o <= 0.1)])
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
FIELDS = ("id", "measures", "ours", "baseline", "ratio", "target", "met")


def row(
    id: str,
    measures: str,
    ours: str,
    *,
    baseline: str = "",
    ratio: str = "",
    target: str = "",
    met: bool | None = None,
) -> dict[str, Any]:
    """One measured figure: ``id`` is stable across runs (the tables find the row by it)."""
    if met is not None and not target:
        raise ValueError(f"row {id!r}: a verdict (met) needs a target")
    return {
        "id": id,
        "measures": measures,
        "ours": ours,
        "baseline": baseline,
        "ratio": ratio,
        "target": target,
        "met": None if met is None else bool(met),
    }


def machine() -> str:
    """What the figures were measured on, without naming the host: OS, CPU count, Python
    and (when Node is about) Node, and the load average at the end of the run."""
    parts = [
        f"{platform.system()} {platform.machine()}",
        f"{os.cpu_count()} CPUs",
        f"Python {platform.python_version()}",
    ]
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        parts.append(f"load average {load}")
    except OSError:
        pass
    return ", ".join(parts)


def write(
    script: str, rows: list[dict[str, Any]], *, note: str = "", folder: Path | None = None
) -> Path:
    """Write ``rows`` measured by ``script`` (its ``__file__``) to
    ``benchmarks/results/<stem>.json`` (or under ``folder``), replacing the file of an
    earlier run; return the path. Says on stderr where it wrote."""
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate row ids in {script}: {ids}")
    for r in rows:
        missing = [f for f in FIELDS if f not in r]
        if missing:
            raise ValueError(f"row {r.get('id')!r} lacks {missing}: build it with row()")
    stem = Path(script).stem
    target = (folder or RESULTS) / f"{stem}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "script": f"{stem}.py",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "note": note,
        "rows": rows,
    }
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, target)
    print(f"results: {target}", file=sys.stderr)
    return target


def read(path: Path) -> dict[str, Any]:
    """A result file, checked for the shape above (ValueError naming the file otherwise)."""
    record = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(record, dict) or not isinstance(record.get("rows"), list):
        raise ValueError(f"{path}: not a benchmark result file (no rows)")
    for key in ("script", "date", "machine"):
        if not isinstance(record.get(key), str):
            raise ValueError(f"{path}: {key!r} missing")
    for r in record["rows"]:
        if not isinstance(r, dict) or any(f not in r for f in FIELDS):
            raise ValueError(f"{path}: a row lacks one of {FIELDS}: {r!r}")
        if r["met"] not in (True, False, None):
            raise ValueError(f"{path}: row {r['id']!r}: met must be true, false or null")
    return record
