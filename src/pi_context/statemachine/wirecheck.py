"""Validation helpers for wire values; errors name the JSON path that was wrong."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

_S = TypeVar("_S", bound=str)


class WireError(ValueError):
    """A JSON value that does not have the spec's shape; the message names where."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def _show(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def want_object(
    obj: object,
    path: str,
    *,
    required: tuple[str, ...] = (),
    exact: tuple[str, ...] | None = None,
    optional: tuple[str, ...] = (),
) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise WireError(path, f"expected an object, got {_show(obj)}")
    keys = exact if exact is not None else required
    for key in keys:
        if key not in obj:
            raise WireError(path, f"missing {key!r}")
    if exact is not None:
        extra = [k for k in obj if k not in exact and k not in optional]
        if extra:
            expected = ", ".join((*exact, *optional))
            raise WireError(path, f"unexpected key {extra[0]!r} (expected {expected})")
    return obj


def want_bool(obj: object, path: str) -> bool:
    if not isinstance(obj, bool):
        raise WireError(path, f"expected true or false, got {_show(obj)}")
    return obj


def want_enum(obj: object, path: str, values: tuple[_S, ...]) -> _S:
    for value in values:
        if obj == value and isinstance(obj, str):
            return value
    allowed = ", ".join(repr(v) for v in values)
    raise WireError(path, f"expected one of {allowed}, got {_show(obj)}")


def want_text(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    """An optional text: absent (the key left out) or a string."""
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise WireError(f"{path}.{key}", f"expected a string (or no {key!r}), got {_show(value)}")
    return value


def with_text(record: dict[str, Any], key: str, value: str | None) -> dict[str, Any]:
    """``record`` with the optional text ``key`` when it is present (absent: left out)."""
    if value is not None:
        record[key] = value
    return record


def want_id(obj: object, path: str) -> str:
    if not isinstance(obj, str):
        raise WireError(path, f"expected a string id, got {_show(obj)}")
    return obj
