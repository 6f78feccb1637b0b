"""The spec language and the spec files.

``load(path)`` turns a YAML spec into a checked :class:`Spec`; ``SPECS_DIR`` holds the
committed specs: the published generations (``reset-control@0.25``, ``@0.26``, ``@0.27``,
``@0.33``, ``@0.34``, ``@a508f68`` and ``@6bcd8b5``, the newest and the default) and
``reset-control@0.26-proposal``.
What a spec implies on its own is analysed here too: ``modelcheck`` (reachability,
invariants and trace properties over the abstraction) and ``diff`` (where two specs decide
differently, with witnesses; ``pi-context diff``).
"""

from __future__ import annotations

import re
from pathlib import Path

from pi_context.spec.errors import Diagnostic, SpecError
from pi_context.spec.loader import load, loads
from pi_context.spec.model import Spec

SPECS_DIR = Path(__file__).parent / "specs"


_NUMBERED = re.compile(r"(\d+(?:\.\d+)*)(.*)")
_REFINES = re.compile(r"^refines:\s*\n\s+spec:\s*(\S+)", re.M)


def spec_paths() -> list[Path]:
    """The committed spec files, each family oldest first: by version number (a suffixed
    version such as ``0.26-proposal`` before its plain one), a spec named by its commit right
    after the spec it refines."""
    paths = {p.stem: p for p in SPECS_DIR.glob("*.yaml")}
    keys: dict[str, tuple[object, ...]] = {}

    def key(stem: str, depth: int = 0) -> tuple[object, ...]:
        if stem in keys:
            return keys[stem]
        family, _, version = stem.partition("@")
        numbered = _NUMBERED.fullmatch(version)
        if numbered is not None:
            number = tuple(int(part) for part in numbered.group(1).split("."))
            found: tuple[object, ...] = (family, number, 1 if not numbered.group(2) else 0)
        else:
            refined = _REFINES.search(paths[stem].read_text(encoding="utf-8"))
            base = refined.group(1) if refined is not None else None
            if base is None or base not in paths or depth > len(paths):
                found = (family, (1_000_000,), version)
            else:
                found = (*key(base, depth + 1), version)
        keys[stem] = found
        return found

    return [paths[stem] for stem in sorted(paths, key=lambda s: (key(s), s))]


class UnknownSpecError(SpecError):
    """A spec id that names no committed spec. There is no file, so no ``file:line:col``."""

    def __init__(self, spec_id: str, known: list[str]) -> None:
        super().__init__([])
        self.spec_id = spec_id
        near = [k for k in known if k.endswith(f"@{spec_id}") or k.split("@")[0] == spec_id]
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
        self.message = f"unknown spec {spec_id!r}{hint} (known: {', '.join(known)})"

    def __str__(self) -> str:
        return self.message


def spec_path(spec_id: str) -> Path:
    """The committed spec file of ``spec_id`` (only a committed id: never a path)."""
    known = [p.stem for p in spec_paths()]
    if spec_id not in known:
        raise UnknownSpecError(spec_id, known)
    return SPECS_DIR / f"{spec_id}.yaml"


__all__ = [
    "SPECS_DIR",
    "Diagnostic",
    "Spec",
    "SpecError",
    "UnknownSpecError",
    "load",
    "loads",
    "spec_path",
    "spec_paths",
]
