"""A dataclass instance as a JSON object, one member per field, for the ``to_json`` methods
of records whose JSON form is their fields: in field order, named in camelCase or as the
field is, tuples as lists, and chosen fields left out while they are ``None``. A record
whose JSON is just that (camelCase, nothing left out) inherits ``to_json`` from
``FieldsJSON``."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any


def camel(name: str) -> str:
    """``source_ids`` -> ``sourceIds``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@cache
def _keys(
    cls: type, snake: bool, renamed: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    names = dict(renamed)
    return tuple(
        (f.name, names.get(f.name) or (f.name if snake else camel(f.name)))
        for f in dataclasses.fields(cls)
    )


def json_fields(
    value: Any,
    *,
    snake: bool = False,
    renamed: Mapping[str, str] | None = None,
    omit_none: Collection[str] = (),
) -> dict[str, Any]:
    """``value``'s fields as JSON members: keys in camelCase (``snake``: the field names), or
    as ``renamed`` says; a field named in ``omit_none`` is left out while it is ``None``."""
    out: dict[str, Any] = {}
    kind: Any = type(value)
    for name, key in _keys(kind, snake, tuple(sorted((renamed or {}).items()))):
        field_value = getattr(value, name)
        if field_value is None and name in omit_none:
            continue
        out[key] = list(field_value) if isinstance(field_value, tuple) else field_value
    return out


class FieldsJSON:
    """A dataclass's ``to_json``: ``json_fields`` with its defaults."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return json_fields(self)
