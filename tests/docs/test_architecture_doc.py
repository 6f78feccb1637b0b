"""docs/architecture.md stays true to the code: every path and name of its "Where does X
live" table exists, and its diagram shows every package of ``pi_context``.

The table's rule, as the doc states it: in the "where" column each code span is either a path
(under ``src/pi_context/`` unless it starts with a top-level folder of the checkout; ``*``
stands for every generated package) or a name defined in the module of the path before it
(``Class.member`` for a member; a dataclass field counts). A ``pi-context COMMAND`` span,
in either column, must be a command of the CLI. Any other span in the "where" column is an
error, so nothing there goes unchecked. Both renderings of the diagram (the Mermaid block and
its text version) must name every subpackage one and two levels below ``pi_context``, so a
package that is added, renamed or dropped fails here until the doc says so; new modules
inside a package do not. The README's layout table is held to its paths and the top-level
packages the same way.

Each check also runs against a small planted mistake, so a check that could not fail would
be caught here.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO / "src" / "pi_context"
DOC = REPO / "docs" / "architecture.md"
README = REPO / "README.md"
TABLE_HEADING = "Where does X live"
FLOW_HEADING = "How one reset request flows"
FLOW = ("Host", "Runtime", "Handle", "Generated reducer", "Host action", "Session")

_SPAN = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_FILE = re.compile(r"\.(?:py|pyi|yaml|md|mjs|ts|json|toml)$")
_COMMAND = re.compile(r"pi-context ([a-z][\w-]*)(?: .*)?")


# --- reading the doc -----------------------------------------------------------------------


def section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section (up to the next heading of that level)."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no '## {heading}' section"
    return match.group(1)


def table(body: str) -> list[list[str]]:
    """The cells of the first Markdown table in ``body``, header and rule left out."""
    lines = [line for line in body.splitlines() if line.startswith("|")]
    assert len(lines) > 2, "no table"
    assert set(lines[1].replace("|", "").split()) <= {"---", ":---", "---:"}, lines[1]
    return [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines[2:]]


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)


# --- resolving what a span names -----------------------------------------------------------


def places(span: str) -> list[Path]:
    """What a path span names: under the package, or else from the checkout's root; ``*``
    matches. Raises ``LookupError`` when it names nothing, or something in both places."""
    pattern = span.rstrip("/")
    found: dict[Path, list[Path]] = {}
    for base in (PACKAGE_DIR, REPO):
        hits = sorted(base.glob(pattern)) if "*" in pattern else [base / pattern]
        hits = [hit for hit in hits if hit.exists() and (hit.is_dir() or not span.endswith("/"))]
        if hits:
            found[base] = hits
    if not found:
        raise LookupError(f"`{span}` names no file or folder")
    if len(found) > 1:
        raise LookupError(f"`{span}` is ambiguous: it is under src/pi_context/ and the checkout")
    [hits] = found.values()
    return hits


def module_name(path: Path) -> str | None:
    """The importable module a path is, or None (not Python, or outside the package)."""
    if not path.is_relative_to(PACKAGE_DIR):
        return None
    if path.is_dir():
        if not (path / "__init__.py").exists():
            return None
        path = path / "__init__.py"
    elif path.suffix != ".py":
        return None
    parts = ("pi_context", *path.relative_to(PACKAGE_DIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def defines(owner: object, name: str) -> bool:
    """``owner`` has ``name``: an attribute, or a class's annotated field (a dataclass field
    without a default is no class attribute)."""
    if hasattr(owner, name):
        return True
    return inspect.isclass(owner) and any(
        name in inspect.get_annotations(klass) for klass in owner.__mro__
    )


def has_dotted(module: ModuleType, dotted: str) -> bool:
    owner: object = module
    parts = dotted.split(".")
    for index, part in enumerate(parts):
        if not defines(owner, part):
            return False
        if not hasattr(owner, part):
            return index == len(parts) - 1  # a field: nothing can be looked up below it
        owner = getattr(owner, part)
    return True


@cache
def commands() -> frozenset[str]:
    from pi_context.cli import build_parser

    parser = build_parser(lazy=True)
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return frozenset(sub.choices)


def command_problem(span: str) -> str | None:
    match = _COMMAND.fullmatch(span)
    if match and match.group(1) not in commands():
        return f"`{span}`: `pi-context` has no command {match.group(1)!r}"
    return None


@dataclass
class Where:
    """What one "where" cell names."""

    paths: list[str]
    problems: list[str]


def check_where(cell: str) -> Where:
    checked = Where([], [])
    modules: list[str] | None = None  # the modules of the last path; None: not Python
    last = ""
    for span in _SPAN.findall(cell):
        if _COMMAND.fullmatch(span):
            if problem := command_problem(span):
                checked.problems.append(problem)
        elif "/" in span or _FILE.search(span):
            checked.paths.append(span)
            last = span
            try:
                found = places(span)
            except LookupError as error:
                checked.problems.append(str(error))
                modules = []  # already reported: its names are not looked up
                continue
            names = [module_name(path) for path in found]
            modules = None if None in names else [n for n in names if n is not None]
        elif _NAME.fullmatch(span):
            if not last:
                checked.problems.append(f"`{span}` comes before any path")
            elif modules is None:
                checked.problems.append(f"`{span}` follows `{last}`, which is no Python module")
            for name in modules or ():
                try:
                    module = importlib.import_module(name)
                except ImportError as error:
                    checked.problems.append(f"`{last}` does not import: {error}")
                    continue
                if not has_dotted(module, span):
                    checked.problems.append(f"`{span}` is not defined in {name} (`{last}`)")
        else:
            checked.problems.append(f"`{span}` is neither a path nor a name")
    return checked


def table_problems(rows: list[list[str]]) -> Iterator[str]:
    for row in rows:
        if len(row) != 2:
            yield f"row {row!r} does not have two cells"
            continue
        what, where = row
        for span in _SPAN.findall(what):
            if problem := command_problem(span):
                yield f"{what}: {problem}"
        checked = check_where(where)
        if not checked.paths:
            yield f"{what}: names no path"
        yield from (f"{what}: {problem}" for problem in checked.problems)


# --- which packages a diagram must show ----------------------------------------------------


def subpackages(depth: int = 2) -> list[str]:
    """Every package directly under ``pi_context`` and one level below, as ``a`` or ``a/b``."""
    found = []
    for init in sorted(PACKAGE_DIR.rglob("__init__.py")):
        parts = init.parent.relative_to(PACKAGE_DIR).parts
        if 1 <= len(parts) <= depth:
            found.append("/".join(parts))
    return found


def missing_packages(diagram: str, packages: list[str]) -> list[str]:
    """The packages whose folder name (``session/`` for ``bindings/session``) the diagram
    never writes."""
    return [
        package
        for package in packages
        if not re.search(rf"(?<![\w-]){re.escape(package.rsplit('/', 1)[-1])}/", diagram)
    ]


def diagrams(text: str) -> tuple[str, str]:
    """The one Mermaid block of the doc and the text version right after it."""
    [mermaid] = fenced(text, "mermaid")
    after = text.split(mermaid + "```\n", 1)[1].lstrip("\n")
    assert after.startswith("```text\n"), "the Mermaid block is not followed by its text version"
    return mermaid, fenced(after, "text")[0]


# --- the doc -------------------------------------------------------------------------------


def doc_rows() -> list[list[str]]:
    return table(section(DOC.read_text(encoding="utf-8"), TABLE_HEADING))


def test_the_where_table_names_only_what_exists() -> None:
    rows = doc_rows()
    assert len(rows) >= 30, "the table lost its rows"
    problems = list(table_problems(rows))
    assert not problems, "docs/architecture.md, 'Where does X live':\n" + "\n".join(problems)


def test_the_where_table_says_each_concept_once() -> None:
    concepts = [row[0] for row in doc_rows()]
    assert len(concepts) == len(set(concepts))


def flow_problems(body: str) -> list[str]:
    """The flow's numbered steps are the stations of ``FLOW`` in order, and each names only
    paths and names that exist (the "where" cells' rule)."""
    steps = re.findall(r"^\d+\. \*\*([^*]+)\*\*:(.*?)(?=^\d+\. |\Z)", body, re.M | re.S)
    problems = []
    if tuple(name for name, _ in steps) != FLOW:
        problems.append(f"the steps are {[name for name, _ in steps]}, not {list(FLOW)}")
    for name, text in steps:
        checked = check_where(" ".join(text.split()))
        if not checked.paths:
            problems.append(f"{name}: names no path")
        problems += [f"{name}: {problem}" for problem in checked.problems]
    return problems


def test_the_reset_request_flow_names_only_what_exists() -> None:
    assert flow_problems(section(DOC.read_text(encoding="utf-8"), FLOW_HEADING)) == []


def test_a_wrong_flow_is_reported() -> None:
    body = (
        "1. **Host**: `integrations/loop.py` `HostLoop`.\n"
        "2. **Runtime**: `bindings/runtime/runtime.py` `Runtime.turn_ended`.\n"
    )
    assert flow_problems(body) == [
        f"the steps are ['Host', 'Runtime'], not {list(FLOW)}",
        "Runtime: `Runtime.turn_ended` is not defined in pi_context.bindings.runtime.runtime"
        " (`bindings/runtime/runtime.py`)",
    ]


@pytest.mark.parametrize("rendering", ["mermaid", "text"])
def test_the_diagram_shows_every_package(rendering: str) -> None:
    mermaid, text = diagrams(DOC.read_text(encoding="utf-8"))
    packages = subpackages()
    assert {"spec", "statemachine", "bindings"} <= set(packages)
    missing = missing_packages(mermaid if rendering == "mermaid" else text, packages)
    assert not missing, f"the {rendering} diagram does not show {missing}"


def test_the_readme_layout_names_only_what_exists() -> None:
    rows = table(section(README.read_text(encoding="utf-8"), "Layout"))
    paths = [span for row in rows for span in _SPAN.findall(row[0])]
    absent = [path for path in paths if not (REPO / path.rstrip("/")).exists()]
    assert not absent, f"README's layout names {absent}"
    listed = " ".join(paths)
    missing = [p for p in subpackages(depth=1) if f"src/pi_context/{p}/" not in listed]
    assert not missing, f"README's layout does not list {missing}"


# --- each check against a planted mistake ---------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "complaint"),
    [
        ("`statemachine/reset_control.py` `ResetControl`, `NoSuchHandle`", "`NoSuchHandle` is not"),
        ("`bindings/runtime/control.py` `Step.cause`, `Step.no_field`", "`Step.no_field` is not"),
        ("`statemachine/generated/*/types.py` `EFFECT_HOST`, `EFFECT_NONE`", "`EFFECT_NONE`"),
        ("`bindings/session/no_such_module.py`", "names no file"),
        ("`statemachine/generator.py` `generate`", "names no file"),
        ("`bindings/runtime/` folder written as a file: `bindings/tools.py/`", "names no file"),
        ("`Runtime` before its module `bindings/runtime/runtime.py`", "before any path"),
        ("`bindings-ts/adapter.mjs` `main`", "no Python module"),
        ("`docs/architecture.md` `Architecture`", "no Python module"),
        ("`pi-context frobnicate`", "no command 'frobnicate'"),
        ("`bindings/tools.py` `Tool.run()`", "neither a path nor a name"),
    ],
)
def test_a_planted_mistake_in_a_where_cell_is_reported(cell: str, complaint: str) -> None:
    problems = check_where(cell).problems
    assert any(complaint in problem for problem in problems), problems


def test_the_planted_cells_are_otherwise_clean() -> None:
    """The planted cells above fail for their mistake alone: the same cells put right pass."""
    for cell in (
        "`statemachine/reset_control.py` `ResetControl`, `reset_control`",
        "`bindings/runtime/control.py` `Step.cause`, `Step.meaning`, `Control`",
        "`statemachine/generated/*/types.py` `EFFECT_HOST`, `ROW_CAUSE`",
        "`bindings-ts/adapter.mjs`, `docs/architecture.md`, `bindings/runtime/`",
        "`pi-context verify`, `__init__.py` `Runtime`, `bindings/runtime/` `Runtime`",
    ):
        assert check_where(cell).problems == [], cell


def test_an_ambiguous_path_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg" / "spec").mkdir(parents=True)
    (tmp_path / "spec").mkdir()
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGE_DIR", tmp_path / "pkg")
    assert "ambiguous" in check_where("`spec/`").problems[0]


def test_a_row_without_a_path_is_reported() -> None:
    problems = list(table_problems([["the reducer", "somewhere generated"]]))
    assert problems == ["the reducer: names no path"]


def test_a_package_missing_from_a_diagram_is_reported() -> None:
    diagram = "spec/ → statemachine/ → codegen/ → bindings/session/"
    packages = ["spec", "statemachine", "codegen", "bindings", "bindings/notes"]
    assert missing_packages(diagram, packages) == ["bindings/notes"]
    # a name inside another word is no mention: "bindings-ts/" does not show "bindings/"
    assert missing_packages("bindings-ts/ · nospec/", ["bindings", "spec"]) == [
        "bindings",
        "spec",
    ]
