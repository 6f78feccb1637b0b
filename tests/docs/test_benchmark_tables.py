"""Benchmark figures come from runs: ``benchmarks/results.py`` writes one result file per
script, ``benchmarks/tables.py`` generates the README's and docs/benchmarks' tables from those
files, and its check fails when a table claims "met" for a figure its result file records as
missed (or records not at all), or when a generated table is stale.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


results = _load("results")
tables = _load("tables")


def _checkout(tmp_path: Path, page: str, rows: list[dict[str, object]]) -> Path:
    """A checkout with README.md ``page`` and one result file for ``demo_script.py``."""
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text(page, encoding="utf-8")
    results.write("demo_script.py", rows, folder=root / "results")
    return root


def test_write_records_the_documented_shape(tmp_path: Path) -> None:
    path = results.write(
        "/somewhere/benchmarks/demo_script.py",
        [
            results.row(
                "a", "a thing", "1 s", baseline="2 s", ratio="0.5×", target="≤ 1 s", met=True
            ),
            results.row("b", "info only", "3"),
        ],
        folder=tmp_path,
    )
    assert path == tmp_path / "demo_script.json"
    record = json.loads(path.read_text())
    assert set(record) == {"script", "date", "machine", "note", "rows"}
    assert record["script"] == "demo_script.py"
    assert record["rows"][0] == {
        "id": "a",
        "measures": "a thing",
        "ours": "1 s",
        "baseline": "2 s",
        "ratio": "0.5×",
        "target": "≤ 1 s",
        "met": True,
    }
    assert record["rows"][1]["met"] is None
    assert results.read(path) == record
    assert "CPUs" in record["machine"] and "Python" in record["machine"]


def test_write_refuses_rows_it_cannot_trace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a target"):
        results.row("x", "no target", "1", met=True)
    one = results.row("x", "m", "1")
    with pytest.raises(ValueError, match="duplicate"):
        results.write("s.py", [one, one], folder=tmp_path)
    with pytest.raises(ValueError, match="lacks"):
        results.write("s.py", [{"id": "x"}], folder=tmp_path)
    assert not list(tmp_path.iterdir())


def test_a_generated_table_shows_each_row_with_date_and_machine(tmp_path: Path) -> None:
    row = results.row("a", "a thing", "1 s", target="≤ 2 s", met=True)
    page = "# x\n\n<!-- results: demo_script missing_script -->\n<!-- /results -->\n"
    root = _checkout(tmp_path, page, [row])
    text = tables.regenerate(page, root / "results")
    assert "| `demo_script.py` | a thing | 1 s |  |  | ≤ 2 s | yes |" in text
    record = json.loads((root / "results" / "demo_script.json").read_text())
    assert f"`demo_script.py`: {record['date']}, {record['machine']}" in text
    assert "`missing_script.py`: no result file" in text
    assert tables.false_claims(text, root / "results") == []
    (root / "README.md").write_text(text, encoding="utf-8")
    assert tables.check(root, root / "results") == []


def test_the_drift_check_fails_on_a_claim_the_result_file_contradicts(tmp_path: Path) -> None:
    missed = results.row("conf", "default conformance run", "4.66 s", target="≤ 3 s", met=False)
    claim = (
        "| script | measures | ours | baseline | ratio | target | met? |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        "| `demo_script.py` | default conformance run | 2.1 s | | | ≤ 3 s | yes |\n"
    )
    root = _checkout(tmp_path, claim, [missed])
    problems = tables.check(root, root / "results")
    assert problems == [
        "README.md: demo_script.py / default conformance run: claims met, its result file "
        "says 4.66 s against ≤ 3 s: not met"
    ]
    # a claim no result row records, and a met? table that names no script, fail as well
    unknown = claim.replace("default conformance run", "something never run")
    assert "no result row records it" in tables.false_claims(unknown, root / "results")[0]
    loose = "| benchmark | ours | met? |\n| --- | --- | --- |\n| fast | 1 s | yes |\n"
    assert tables.false_claims(loose, root / "results") == [
        "fast: claims met in a table no result file backs"
    ]
    # a dated verdict is history, not a claim about now
    dated = loose.replace("met?", "met on 2026-12-01?")
    assert tables.false_claims(dated, root / "results") == []


def test_the_drift_check_fails_on_a_stale_generated_table(tmp_path: Path) -> None:
    row = results.row("a", "a thing", "1 s", target="≤ 2 s", met=True)
    page = "<!-- results: demo_script -->\n| old | table |\n<!-- /results -->\n"
    root = _checkout(tmp_path, page, [row])
    assert tables.check(root, root / "results") == [
        "README.md: a generated table is stale (python benchmarks/tables.py)"
    ]


def test_the_committed_tables_match_the_committed_result_files() -> None:
    assert tables.check() == []
