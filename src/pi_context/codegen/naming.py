"""Names used by generated code, derived from spec vocabulary."""

from __future__ import annotations

from pi_context.spec.expr import snake
from pi_context.spec.model import VariantAxis


def pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake(name).split("_") if part)


def variant_class(axis: VariantAxis, tag: str) -> str:
    return pascal(axis.name) + pascal(tag)


def event_class(event: str) -> str:
    return pascal(event) + "Event"


def facts_class(event: str) -> str:
    return pascal(event) + "Facts"


def facts_view(event: str) -> str:
    return pascal(event) + "FactsView"


def type_alias(name: str) -> str:
    return pascal(name)


def row_function(row_id: str) -> str:
    return snake(row_id.replace(".", "__"))
