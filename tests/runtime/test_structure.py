"""The runtime package, read as source: it names no spec vocabulary, and its modules import
each other (and the rest of pi_context) without a circle. Both checks are built from the
source with ``ast`` and from the committed specs, so a new spec or module is checked too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context.spec import load, spec_paths
from pi_context.spec.model import EnumAxis, EnumType, Spec, VariantAxis

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pi_context"
RUNTIME = PACKAGE / "bindings" / "runtime"
HANDOFF = PACKAGE / "bindings" / "handoff"
# The handoff orchestration the runtime drives (through its host port), held to the same rule.
HANDOFF_RUNTIME = ("controller.py", "run.py", "api.py")

PENDING: dict[str, str] = {}
"""Runtime modules whose spec vocabulary is another helper's open work: each must still hold
some (this test says when the exemption can go) and is checked against nothing else."""


# --- spec vocabulary -------------------------------------------------------------------------


def _host_interface(spec: Spec) -> set[str]:
    """What a host says to the reducer: event names, fact names and event field values."""
    words: set[str] = set()
    for event in spec.events:
        words.add(event.name)
        for f in (*event.fields, *event.facts):
            words.add(f.name)
            if isinstance(f.type, EnumType):
                words.update(f.type.values)
    return words


def vocabulary(family: str = "reset-control") -> dict[str, str]:
    """Every word the reducer answers with or keeps in its state, across the committed specs
    of ``family``: axis values and variant tags, variant field values, effect names, row ids
    and spec ids (word -> where it comes from). Words a host reports in events are not."""
    words: dict[str, str] = {}
    for path in spec_paths():
        spec = load(path)
        if spec.name != family:
            continue
        interface = _host_interface(spec)
        found: dict[str, str] = {spec.id: "spec id"}
        for axis in spec.axes:
            if isinstance(axis, EnumAxis):
                found.update((v, f"{axis.name} value") for v in axis.type.values)
            elif isinstance(axis, VariantAxis):
                for variant in axis.variants:
                    found[variant.tag] = f"{axis.name} variant"
                    for f in variant.fields:
                        if isinstance(f.type, EnumType):
                            found.update((v, f"{axis.name}.{f.name} value") for v in f.type.values)
        found.update((e.name, "effect") for e in spec.effects)
        found.update((r.id, "row id") for r in spec.rows)
        for word, kind in found.items():
            if word not in interface:
                words.setdefault(word, f"{spec.id} {kind}")
    return words


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    # attribute docstrings: a bare string statement (after an assignment)
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if not isinstance(statements, list):
                continue
            for statement in statements:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    ids.add(id(statement.value))
    return ids


def string_literals(path: Path) -> Iterator[tuple[int, str]]:
    """(line, value) of every string constant in ``path`` that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _runtime_modules() -> list[Path]:
    return sorted(RUNTIME.rglob("*.py")) + [HANDOFF / name for name in HANDOFF_RUNTIME]


def test_the_vocabulary_is_read_from_the_specs() -> None:
    words = vocabulary()
    for word in ("tool-requested", "pending-spent", "commit-boundary", "turn_end.hard-reserve"):
        assert word in words, word
    assert "reset-control@0.27" in words and "none" in words
    assert "manual" not in words, "close_out's source is what the host reports"


PI_WIRE: dict[str, str] = {
    "stop": "the stopReason of a Pi assistant message that ended normally (0.34's effect of the "
    "same name is read only through its host action)",
}
"""Words of Pi's own message format that a spec also uses: the runtime reads Pi's messages,
so these are allowed as Pi's values (each says why)."""


def _vocabulary_for(path: Path) -> dict[str, str]:
    """Every runtime module is held to the reset-control specs it drives; the handoff
    modules to the handoff spec as well. Pi's own message words are not the spec's."""
    words = vocabulary()
    if path.parent == HANDOFF:
        words = {**vocabulary("handoff"), **words}
    return {word: kind for word, kind in words.items() if word not in PI_WIRE}


@pytest.mark.parametrize("path", _runtime_modules(), ids=lambda p: p.name)
def test_the_runtime_writes_no_spec_vocabulary(path: Path) -> None:
    words = _vocabulary_for(path)
    found = [
        f"{path.name}:{line}: {value!r} ({words[value]})"
        for line, value in string_literals(path)
        if value in words
    ]
    if path.name in PENDING:
        assert found, f"{path.name} is clean now: drop it from PENDING ({PENDING[path.name]})"
        return
    assert found == [], "\n".join(found)


def test_the_check_finds_vocabulary(tmp_path: Path) -> None:
    """Break it: a module comparing a phase and an effect name is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""A docstring may say tool-requested."""\n'
        "def f(step):\n"
        "    return step.effect == 'commit-boundary' or step.row == 'turn_end.tool-commit'\n"
    )
    words = vocabulary()
    assert [v for _, v in string_literals(bad) if v in words] == [
        "commit-boundary",
        "turn_end.tool-commit",
    ]


# --- import circles --------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "generated" not in p.parts}


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """Every module ``path`` imports, anywhere in it (top level, functions, TYPE_CHECKING),
    with the packages an import from outside them initialises on the way."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            targets = [origin]
            targets += [f"{origin}.{alias.name}" for alias in node.names]
        for target in targets:
            if target not in known:
                continue
            found.add(target)
            parts = target.split(".")
            for cut in range(1, len(parts)):
                parent = ".".join(parts[:cut])
                if parent in known and not name.startswith(parent + ".") and parent != name:
                    found.add(parent)  # importing from outside a package runs its __init__
    found.discard(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_runs_through_the_runtime_package() -> None:
    known = _modules()
    graph = {name: imports_of(path, known) for name, path in known.items()}
    runtime = "pi_context.bindings.runtime"
    touching = [c for c in cycles(graph) if any(m.startswith(runtime) for m in c)]
    assert touching == [], touching


def test_the_circle_check_finds_a_circle() -> None:
    """Break it: a façade and a collaborator that imports it back (under TYPE_CHECKING)."""
    assert cycles({"a.runtime": {"a.commands"}, "a.commands": {"a.runtime"}}) == [
        ["a.commands", "a.runtime"]
    ]
    known = _modules()
    handoff = HANDOFF / "controller.py"
    edges = imports_of(handoff, known)
    assert "pi_context.bindings.runtime.ports" in edges  # TYPE_CHECKING imports count
    assert "pi_context.bindings.runtime.runtime" not in edges
