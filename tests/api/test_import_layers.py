"""The package's dependency rules, read from the source (``ast`` over ``src/pi_context``).

Every ``import`` counts: at module level, inside functions (a lazy import is still a
dependency) and under ``if TYPE_CHECKING`` (a type is one too). The rules:

* the layers, bottom to top: ``support`` → ``spec`` → ``statemachine`` → ``bindings`` →
  ``codegen`` → ``testing`` → ``checks`` → the entry points (``cli``, ``mcp``,
  ``integrations``, ``demo``) and the package's front page (``pi_context/__init__``). A module
  imports only its own layer and the layers below it (no upward arrow), and every module
  belongs to a layer;
* ``statemachine`` (the handle, the generated packages, the ``transitions`` machine, the
  patterns) imports only ``spec``, ``transitions`` and the standard library;
* nothing outside ``statemachine`` imports a generated package: code reaches one through the
  handle (``statemachine.reset_control``) or the typed accessor (``statemachine.typed``);
* the pure core — the generated packages and the ``wirecheck`` module they use — does no
  I/O and imports nothing that does, counting the package ``__init__`` modules Python runs
  on the way; the spec language's semantics (model, expressions, interpreter, abstraction)
  imports no I/O module and nothing outside itself;
* generated code imports only its own package (and ``wirecheck``, the one support module
  generated wire code is written against);
* storage bindings (sessions, notes, history) never import the runtime, the handoff, the
  integrations, the MCP server or the command line;
* the package imports with no import circle.

Each rule is also run against a small planted violation, so a rule that could not fail
would be caught here.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "pi_context"
GENERATED = "pi_context.statemachine.generated"
WIRECHECK = "pi_context.statemachine.wirecheck"
SPEC_SEMANTICS = (
    "pi_context.spec.model",
    "pi_context.spec.expr",
    "pi_context.spec.interpret",
    "pi_context.spec.abstraction",
    "pi_context.spec.errors",
    "pi_context.spec.scope",
)
STORAGE = (
    "pi_context.bindings.session",
    "pi_context.bindings.notes",
    "pi_context.bindings.history",
)
ABOVE_STORAGE = (
    "pi_context.bindings.runtime",
    "pi_context.bindings.handoff",
    "pi_context.integrations",
    "pi_context.mcp",
    "pi_context.cli",
)
# The layers, bottom to top: a module may import its own layer and those below.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("support", ("pi_context.support",)),
    ("spec", ("pi_context.spec",)),
    ("statemachine", ("pi_context.statemachine",)),
    ("bindings", ("pi_context.bindings",)),
    ("codegen", ("pi_context.codegen",)),
    ("testing", ("pi_context.testing",)),
    ("checks", ("pi_context.checks",)),
    (
        "entry points",
        (
            "pi_context.cli",
            "pi_context.mcp",
            "pi_context.integrations",
            "pi_context.demo",
            "pi_context.__main__",
            "pi_context",  # the front page (this module only): its names reach every layer
        ),
    ),
)
STATEMACHINE = "pi_context.statemachine"
STATEMACHINE_MAY_IMPORT = ("pi_context.spec", STATEMACHINE)
STATEMACHINE_THIRD_PARTY = frozenset({"transitions"})
# Standard-library modules that reach files, processes, sockets, the terminal or the
# import system; a pure module imports none of them.
IO_MODULES = frozenset(
    {
        "asyncio",
        "fcntl",
        "glob",
        "http",
        "importlib",
        "io",
        "logging",
        "mmap",
        "multiprocessing",
        "os",
        "pathlib",
        "pkgutil",
        "select",
        "selectors",
        "shutil",
        "signal",
        "socket",
        "sqlite3",
        "subprocess",
        "sys",
        "tempfile",
        "threading",
        "urllib",
    }
)
IO_BUILTINS = frozenset({"open", "print", "input", "exec", "eval", "__import__"})


@dataclass(frozen=True)
class Import:
    target: str  # the module imported (a submodule when ``from pkg import mod``)
    line: int


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module

    def parents(self) -> Iterator[str]:
        """The packages Python runs before this module (``a.b.c``: ``a``, ``a.b``)."""
        parts = self.name.split(".")
        for n in range(1, len(parts)):
            yield ".".join(parts[:n])


def read_modules(root: Path = SRC) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found[name] = Module(name, path, is_package, tree)
    return found


def imports_of(
    module: Module, known: Mapping[str, Module] | Iterable[str], *, at_import: bool = False
) -> list[Import]:
    """Every import of ``module``, resolved (relative ones too); with ``at_import``, only
    those Python runs when it imports the module (not in functions, not for type checking)."""
    names = set(known)
    out: list[Import] = []
    for node in _run_at_import(module.tree) if at_import else ast.walk(module.tree):
        if isinstance(node, ast.Import):
            out += [Import(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.name.split(".")
                if not module.is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.append(Import(full if full in names else target, node.lineno))
    return out


def _run_at_import(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements Python runs when it imports a module: module level, minus function
    and class bodies' insides and ``if TYPE_CHECKING:`` blocks."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        yield node
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                pending += node.body
            pending += node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody
            for handler in node.handlers:
                pending += handler.body


def io_uses(module: Module, found: list[Import] | None = None, *, calls: bool = True) -> list[str]:
    """I/O modules imported (of ``found``, else all) and I/O builtins called, with lines."""
    problems = [
        f"{module.name}:{imp.line} imports {imp.target}"
        for imp in (imports_of(module, ()) if found is None else found)
        if imp.target.split(".")[0] in IO_MODULES
    ]
    if not calls:
        return problems
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in IO_BUILTINS
        ):
            problems.append(f"{module.name}:{node.lineno} calls {node.func.id}()")
    return problems


def internal(target: str) -> bool:
    return target == PACKAGE or target.startswith(PACKAGE + ".")


def graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for imp in imports_of(module, modules):
            target = imp.target
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]  # ``from pkg.mod import name``
            if target in modules and target != name:
                edges[name].add(target)
    return edges


def circles(edges: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(frozenset(group))
    return found


# ---------------------------------------------------------------- the rules


def layer_of(name: str) -> int | None:
    """The index in ``LAYERS`` of the module ``name`` (its longest matching prefix)."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = name == prefix or (prefix != PACKAGE and name.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def layer_violations(modules: Mapping[str, Module]) -> list[str]:
    """Every module in a layer, and no import of a layer above the importer's."""
    problems: list[str] = []
    for name, module in modules.items():
        own = layer_of(name)
        if own is None:
            problems.append(f"{name} belongs to no layer")
            continue
        for imp in imports_of(module, modules):
            if not internal(imp.target):
                continue
            target = layer_of(imp.target)
            if target is not None and target > own:
                problems.append(
                    f"{name}:{imp.line} ({LAYERS[own][0]}) imports {imp.target}"
                    f" ({LAYERS[target][0]}, above)"
                )
    return problems


def generated_access_violations(modules: Mapping[str, Module]) -> list[str]:
    """No module outside ``statemachine`` imports ``statemachine.generated`` (or below)."""
    problems: list[str] = []
    for name, module in modules.items():
        if name == STATEMACHINE or name.startswith(STATEMACHINE + "."):
            continue
        for imp in imports_of(module, modules):
            if imp.target == GENERATED or imp.target.startswith(GENERATED + "."):
                problems.append(f"{name}:{imp.line} imports {imp.target}")
    return problems


def statemachine_violations(modules: Mapping[str, Module]) -> list[str]:
    """``statemachine`` imports only ``spec``, itself, ``transitions`` and the stdlib."""
    problems: list[str] = []
    for name, module in modules.items():
        if not (name == STATEMACHINE or name.startswith(STATEMACHINE + ".")):
            continue
        for imp in imports_of(module, modules):
            top = imp.target.split(".")[0]
            if internal(imp.target):
                if not imp.target.startswith(STATEMACHINE_MAY_IMPORT):
                    problems.append(f"{name}:{imp.line} imports {imp.target}")
            elif not (
                top in sys.stdlib_module_names
                or top == "__future__"
                or top in STATEMACHINE_THIRD_PARTY
            ):
                problems.append(f"{name}:{imp.line} imports {imp.target}")
    return problems


def pure_core_violations(modules: Mapping[str, Module]) -> list[str]:
    """The pure core and everything it reaches: no I/O, and no I/O in what Python runs on
    the way (the enclosing packages' ``__init__`` at import time)."""
    roots = [n for n in modules if n == GENERATED or n.startswith(GENERATED + ".")]
    roots.append(WIRECHECK)
    seen: set[str] = set()
    queue = [(name, False) for name in roots]
    problems: list[str] = []
    while queue:
        name, as_parent = queue.pop()
        if (name, as_parent) in seen or name not in modules:
            continue
        seen.add((name, as_parent))
        module = modules[name]
        found = imports_of(module, modules, at_import=as_parent)
        problems += io_uses(module, found, calls=not as_parent)
        queue += [(parent, True) for parent in module.parents()]
        for imp in found:
            if internal(imp.target):
                queue.append((imp.target, False))
    return problems


def spec_semantics_violations(modules: Mapping[str, Module]) -> list[str]:
    problems: list[str] = []
    for name in SPEC_SEMANTICS:
        module = modules[name]
        problems += io_uses(module)
        for imp in imports_of(module, modules):
            if internal(imp.target) and imp.target not in SPEC_SEMANTICS:
                problems.append(f"{name}:{imp.line} imports {imp.target}")
    return problems


def generated_violations(modules: Mapping[str, Module]) -> list[str]:
    problems: list[str] = []
    for name, module in modules.items():
        if not name.startswith(GENERATED + "."):
            continue
        own = ".".join(name.split(".")[:4])  # pi_context.statemachine.generated.<package>
        for imp in imports_of(module, modules):
            top = imp.target.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            if imp.target == WIRECHECK or imp.target == own or imp.target.startswith(own + "."):
                continue
            problems.append(f"{name}:{imp.line} imports {imp.target}")
    return problems


def storage_violations(modules: Mapping[str, Module]) -> list[str]:
    problems: list[str] = []
    for name, module in modules.items():
        if not name.startswith(STORAGE):
            continue
        for imp in imports_of(module, modules):
            if imp.target.startswith(ABOVE_STORAGE):
                problems.append(f"{name}:{imp.line} imports {imp.target}")
    return problems


# ---------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return read_modules()


def test_the_source_is_read(modules: dict[str, Module]) -> None:
    """The rules below see the whole package (a wrong root would make them vacuous)."""
    assert f"{GENERATED}.reset_control_0_27.reducer" in modules
    assert "pi_context.bindings.runtime.runtime" in modules
    assert len(modules) > 150


def test_every_module_imports_only_its_layer_and_below(modules: dict[str, Module]) -> None:
    assert layer_violations(modules) == []


def test_the_statemachine_imports_only_spec_transitions_and_stdlib(
    modules: dict[str, Module],
) -> None:
    assert statemachine_violations(modules) == []


def test_only_the_statemachine_imports_generated_code(modules: dict[str, Module]) -> None:
    assert generated_access_violations(modules) == []


def test_the_pure_core_does_no_io(modules: dict[str, Module]) -> None:
    assert pure_core_violations(modules) == []


def test_the_spec_semantics_are_pure(modules: dict[str, Module]) -> None:
    assert spec_semantics_violations(modules) == []


def test_generated_code_imports_only_its_own_package(modules: dict[str, Module]) -> None:
    assert generated_violations(modules) == []


def test_storage_bindings_never_import_the_runtime(modules: dict[str, Module]) -> None:
    assert storage_violations(modules) == []


def test_no_import_circle(modules: dict[str, Module]) -> None:
    assert circles(graph(modules)) == []


# ---------------------------------------------------------------- the rules can fail


def _planted(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    """The real package plus planted files (relative to ``src/pi_context``)."""
    modules = read_modules()
    for rel, text in files.items():
        path = tmp_path / PACKAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name, module in read_modules(tmp_path).items():
        modules[name] = module
    return modules


def test_each_rule_catches_a_planted_violation(tmp_path: Path) -> None:
    planted = _planted(
        tmp_path,
        {
            "statemachine/generated/reset_control_0_27/extra.py": (
                "from pathlib import Path\nfrom pi_context.spec import load\n"
            ),
            "spec/expr.py": "import os\nfrom pi_context.spec.loader import load\n",
            "bindings/notes/leak.py": "from pi_context.bindings.runtime.runtime import Runtime\n",
            "spec/circle_a.py": "from pi_context.spec import circle_b\n",
            "spec/circle_b.py": "def f():\n    from pi_context.spec import circle_a\n",
        },
    )
    core = pure_core_violations(planted)
    assert any("extra:1 imports pathlib" in p for p in core)
    assert any("loader" in p and "imports pathlib" in p for p in core)  # reached through spec
    assert any("expr:1 imports os" in p for p in spec_semantics_violations(planted))
    assert any("imports pi_context.spec" in p for p in generated_violations(planted))
    assert storage_violations(planted) == [
        "pi_context.bindings.notes.leak:1 imports pi_context.bindings.runtime.runtime"
    ]
    found = circles(graph(planted))
    assert frozenset({"pi_context.spec.circle_a", "pi_context.spec.circle_b"}) in found


def test_the_layer_rules_catch_planted_violations(tmp_path: Path) -> None:
    planted = _planted(
        tmp_path,
        {
            "support/up.py": "def f():\n    from pi_context.spec import load\n",
            "spec/up.py": "from pi_context.statemachine.reset_control import reset_control\n",
            "statemachine/up.py": "from pi_context.codegen.python import python_files\n",
            "bindings/up.py": "from pi_context.checks.suite import verify_spec\n",
            "codegen/up.py": "from pi_context.testing import faults\n",
            "checks/up.py": "from pi_context.cli import console\n",
            "stray.py": "x = 1\n",
        },
    )
    found = layer_violations(planted)
    assert sorted(p for p in found if ":" in p and ".up:" in p) == [
        "pi_context.bindings.up:1 (bindings) imports pi_context.checks.suite (checks, above)",
        "pi_context.checks.up:1 (checks) imports pi_context.cli (entry points, above)",
        "pi_context.codegen.up:1 (codegen) imports pi_context.testing.faults (testing, above)",
        "pi_context.spec.up:1 (spec) imports pi_context.statemachine.reset_control"
        " (statemachine, above)",
        "pi_context.statemachine.up:1 (statemachine) imports pi_context.codegen.python"
        " (codegen, above)",
        "pi_context.support.up:2 (support) imports pi_context.spec (spec, above)",
    ]
    assert "pi_context.stray belongs to no layer" in found
    # every planted file is caught, and nothing of the real package
    assert len(found) == 7


def test_the_generated_access_rule_catches_planted_violations(tmp_path: Path) -> None:
    planted = _planted(
        tmp_path,
        {
            "bindings/handoff/direct.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from pi_context.statemachine.generated.handoff_0_6_auto import types\n"
                "from pi_context.statemachine.typed import handoff_0_6_auto\n"
            ),
            "statemachine/inside.py": (
                "from pi_context.statemachine.generated.handoff_0_6 import types\n"
            ),
        },
    )
    assert generated_access_violations(planted) == [
        "pi_context.bindings.handoff.direct:3 imports"
        " pi_context.statemachine.generated.handoff_0_6_auto.types"
    ]


def test_the_statemachine_rule_catches_planted_violations(tmp_path: Path) -> None:
    planted = _planted(
        tmp_path,
        {
            "statemachine/extra.py": (
                "import yaml\nimport transitions\nimport json\n"
                "from pi_context.support import writes\n"
                "from pi_context.spec.model import Spec\n"
            ),
        },
    )
    assert statemachine_violations(planted) == [
        "pi_context.statemachine.extra:1 imports yaml",
        "pi_context.statemachine.extra:4 imports pi_context.support.writes",
    ]


def test_type_checking_and_relative_imports_count(tmp_path: Path) -> None:
    planted = _planted(
        tmp_path,
        {
            "bindings/history/typed.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from ..runtime import runtime\n"
            ),
        },
    )
    assert storage_violations(planted) == [
        "pi_context.bindings.history.typed:3 imports pi_context.bindings.runtime.runtime"
    ]
