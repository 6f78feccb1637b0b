"""Run a typed event through generated code while recording which lazy facts it reads."""

from __future__ import annotations

import dataclasses
from typing import Any

from pi_context.spec.expr import snake
from pi_context.spec.model import Spec


class ConsultationRecorder:
    """Wraps plain facts; records the first read of each lazy fact (spec names)."""

    def __init__(self, facts: Any, lazy: dict[str, str]) -> None:
        self._facts = facts
        self._lazy = lazy  # python attribute -> spec name
        self.consulted: list[str] = []

    def __getattr__(self, attribute: str) -> Any:
        name = self._lazy.get(attribute)
        if name is not None and name not in self.consulted:
            self.consulted.append(name)
        return getattr(self._facts, attribute)


def lazy_attributes(spec: Spec) -> dict[str, dict[str, str]]:
    return {e.name: {snake(f.name): f.name for f in e.facts if f.lazy} for e in spec.events}


def recorded(event: Any, lazy: dict[str, str]) -> tuple[Any, ConsultationRecorder | None]:
    """A copy of ``event`` whose facts record lazy reads (or the event itself)."""
    facts = getattr(event, "facts", None)
    if facts is None:
        return event, None
    recorder = ConsultationRecorder(facts, lazy)
    return dataclasses.replace(event, facts=recorder), recorder
