"""The spec language and the spec files.

``load(path)`` turns a YAML spec into a checked :class:`Spec`; ``SPECS_DIR`` holds the
committed specs: the published generations (``reset-control@0.25``, ``@0.26``, ``@0.27``,
``@0.33`` and ``@0.34``, the newest and the default) and ``reset-control@0.26-proposal``.
"""

from __future__ import annotations

from pathlib import Path

from pi_context.spec.errors import Diagnostic, SpecError
from pi_context.spec.loader import load, loads
from pi_context.spec.model import Spec

SPECS_DIR = Path(__file__).parent / "specs"


def spec_paths() -> list[Path]:
    return sorted(SPECS_DIR.glob("*.yaml"))


def spec_path(spec_id: str) -> Path:
    path = SPECS_DIR / f"{spec_id}.yaml"
    if not path.is_file():
        known = ", ".join(p.stem for p in spec_paths())
        raise SpecError([Diagnostic_for(spec_id, known)])
    return path


def Diagnostic_for(spec_id: str, known: str) -> Diagnostic:  # noqa: N802
    from pi_context.spec.model import Loc

    return Diagnostic(Loc(spec_id, 1, 1), f"unknown spec {spec_id!r} (known: {known})")


__all__ = [
    "SPECS_DIR",
    "Diagnostic",
    "Spec",
    "SpecError",
    "load",
    "loads",
    "spec_path",
    "spec_paths",
]
