"""Find the generated package for a spec: the committed one when it matches the spec's
hash, otherwise code generated on the fly (so ``verify --spec FILE`` works on any file)."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pi_context.spec import SpecError, load, spec_path, spec_paths
from pi_context.spec.model import Spec
from pi_context.statemachine.generator import python_files

_GENERATED_PACKAGE = "pi_context.statemachine.generated"


@dataclass(frozen=True)
class Generated:
    """The generated modules of one spec."""

    spec: Spec
    types: Any
    wire: Any
    reducer: Any
    machine: Any
    origin: str  # "committed" or "generated for this run"


_cache: dict[str, Generated] = {}
_counter = 0


def resolve_spec(ref: str) -> Spec:
    """A spec id (``reset-control@0.26``) or a path to a spec file."""
    path = Path(ref)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return load(path)
    return load(spec_path(ref))


def committed_specs() -> list[Spec]:
    return [load(p) for p in spec_paths()]


def generated(spec: Spec) -> Generated:
    if spec.sha256 in _cache:
        return _cache[spec.sha256]
    result = _committed(spec) or _fresh(spec)
    _cache[spec.sha256] = result
    return result


def _committed(spec: Spec) -> Generated | None:
    name = f"{_GENERATED_PACKAGE}.{spec.module_name}"
    try:
        types = importlib.import_module(f"{name}.types")
    except ModuleNotFoundError:
        return None
    if getattr(types, "SPEC_SHA256", None) != spec.sha256:
        return None
    return Generated(
        spec,
        types,
        importlib.import_module(f"{name}.wire"),
        importlib.import_module(f"{name}.reducer"),
        importlib.import_module(f"{name}.machine"),
        "committed",
    )


def _fresh(spec: Spec) -> Generated:
    global _counter
    _counter += 1
    root = Path(tempfile.mkdtemp(prefix="pi-context-gen-"))
    try:
        return _import_fresh(spec, root, f"_pi_context_gen_{_counter}")
    finally:
        # every module is imported (and kept in sys.modules): the files are not needed again
        shutil.rmtree(root, ignore_errors=True)


def _import_fresh(spec: Spec, root: Path, package: str) -> Generated:
    for rel, source in python_files(spec, formatted=False).items():
        target = root / package / Path(rel).relative_to(spec.module_name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source, encoding="utf-8")
    init = root / package / "__init__.py"
    module_spec = importlib.util.spec_from_file_location(
        package, init, submodule_search_locations=[str(init.parent)]
    )
    if module_spec is None or module_spec.loader is None:
        raise SpecError([])
    module: ModuleType = importlib.util.module_from_spec(module_spec)
    sys.modules[package] = module
    module_spec.loader.exec_module(module)
    return Generated(
        spec,
        importlib.import_module(f"{package}.types"),
        importlib.import_module(f"{package}.wire"),
        importlib.import_module(f"{package}.reducer"),
        importlib.import_module(f"{package}.machine"),
        "generated for this run",
    )
