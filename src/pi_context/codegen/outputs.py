"""Everything `pi-context generate` writes, keyed by path relative to the source root.

Targets: ``python`` (the generated packages), ``docs`` (the reference pages),
``typescript`` (the TypeScript binding's modules) and ``quint`` (one Quint module per spec,
for an independent checker). ``--check`` compares instead of
writing, which is how CI catches generated files that drifted from their spec.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pi_context.codegen.host_facts import PATH as HOST_FACTS_PATH
from pi_context.codegen.host_facts import host_facts_module
from pi_context.codegen.python import python_files
from pi_context.codegen.typed import PATH as TYPED_PATH
from pi_context.codegen.typed import typed_module
from pi_context.spec.model import Spec

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/pi_context
SOURCE_ROOT = PACKAGE_DIR.parents[1]  # the checkout (holds pyproject.toml)

Target = Callable[[list[Spec]], dict[str, str]]


def _python(specs: list[Spec]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        for rel, source in python_files(spec).items():
            out[f"src/pi_context/statemachine/generated/{rel}"] = source
    out["src/pi_context/statemachine/generated/__init__.py"] = (
        '"""Generated reset-control packages, one per spec (see `pi-context generate`)."""\n'
    )
    out[TYPED_PATH] = typed_module(specs)
    out[HOST_FACTS_PATH] = host_facts_module(specs)
    return out


def _docs(specs: list[Spec]) -> dict[str, str]:
    from pi_context.codegen.docs import render, restored_invariants
    from pi_context.spec.diff import diff_specs, render_markdown

    by_id = {s.id: s for s in specs}
    out: dict[str, str] = {}
    for spec in specs:
        mutation = SOURCE_ROOT / "docs" / spec.name / f"mutation-{spec.version}.md"
        summary = None
        if mutation.is_file():
            summary = f"See [the mutation report](mutation-{spec.version}.md)."
        differences = None
        base = by_id.get(spec.refines.spec) if spec.refines else None
        if base is not None:
            differences = render_markdown(diff_specs(base, spec), heading="##")
            differences += "\n" + restored_invariants(base, spec)
        out[f"docs/{spec.name}/{spec.version}.md"] = render(
            spec, mutation=summary, differences=differences
        )
    return out


def targets() -> dict[str, Target]:
    from pi_context.codegen.quint import quint_outputs
    from pi_context.codegen.typescript import typescript_outputs

    return {
        "python": _python,
        "docs": _docs,
        "typescript": typescript_outputs,
        "quint": quint_outputs,
    }


def render_outputs(specs: list[Spec], names: Iterable[str]) -> dict[str, str]:
    available = targets()
    out: dict[str, str] = {}
    for name in names:
        out.update(available[name](specs))
    return out


def drifted(files: dict[str, str], root: Path = SOURCE_ROOT) -> list[str]:
    """Paths whose committed content differs from what generation produces."""
    bad: list[str] = []
    for rel, content in sorted(files.items()):
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            bad.append(rel)
    return bad


def stale(files: dict[str, str], names: Iterable[str], root: Path = SOURCE_ROOT) -> list[str]:
    """Generated Python files on disk that no spec produces any more."""
    if "python" not in names:
        return []
    gen_dir = root / "src/pi_context/statemachine/generated"
    present = {str(p.relative_to(root)) for p in gen_dir.rglob("*.py")}
    return sorted(present - set(files))


def write(files: dict[str, str], root: Path = SOURCE_ROOT) -> list[str]:
    changed: list[str] = []
    for rel, content in sorted(files.items()):
        path = root / rel
        if path.is_file() and path.read_text(encoding="utf-8") == content:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        changed.append(rel)
    return changed
