"""Code for a spec that has no committed package: generated, imported and wrapped in the one
handle for this process.

``reset_control`` takes what ``pi_context.statemachine.reset_control.reset_control`` takes (a
spec id, a spec file, a loaded ``Spec``) and returns the committed handle whenever the spec's
bytes match a committed package; otherwise it generates the spec's Python package into a
temporary directory, imports it under a private name and hands it to the handle (origin
``FRESH``). The same spec bytes give the same handle for the rest of the process.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from pi_context.spec import SpecError
from pi_context.spec.model import Spec
from pi_context.statemachine import reset_control as handle
from pi_context.statemachine.reset_control import FRESH, NotGenerated, ResetControl

_fresh_by_sha: dict[str, ResetControl] = {}
_counter = 0


def reset_control(spec: str | Path | Spec = handle.DEFAULT_SPEC) -> ResetControl:
    """The committed core of ``spec`` when there is one, else code generated for this
    process. An unknown id or a broken file raises ``SpecError`` as the handle does."""
    try:
        return handle.reset_control(spec)
    except NotGenerated as missing:
        found = _fresh_by_sha.get(missing.spec.sha256)
        if found is None:
            found = _fresh(missing.spec)
            _fresh_by_sha[missing.spec.sha256] = found
        return found


def _fresh(spec: Spec) -> ResetControl:
    global _counter
    _counter += 1
    root = Path(tempfile.mkdtemp(prefix="pi-context-gen-"))
    try:
        return _import_fresh(spec, root, f"_pi_context_gen_{_counter}")
    finally:
        # every module is imported (and kept in sys.modules): the files are not needed again
        shutil.rmtree(root, ignore_errors=True)


def _import_fresh(spec: Spec, root: Path, package: str) -> ResetControl:
    from pi_context.codegen.python import python_files

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
    modules = {m: importlib.import_module(f"{package}.{m}") for m in handle.MODULES}
    return ResetControl(module, modules, FRESH, spec=spec)
