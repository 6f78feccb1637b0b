"""Spec diagnostics: every problem is reported as ``file:line:col: message``."""

from __future__ import annotations

from dataclasses import dataclass

from pi_context.spec.model import Loc


@dataclass(frozen=True)
class Diagnostic:
    loc: Loc
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}"


class SpecError(Exception):
    """One or more problems in a spec file."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))
