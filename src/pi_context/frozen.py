"""Frozen value classes, as ``@dataclass(frozen=True)`` makes them, without importing
``dataclasses``.

``dataclasses`` imports ``inspect`` (and ``ast``, ``dis``, ``tokenize``), about 12 ms here,
and building each class costs a few hundred microseconds more. A ``pi-context tool
notes_list`` call is a fresh process of roughly 100 ms, so the notes and tool modules use
this decorator instead. A class made by it behaves as the frozen dataclass would: the same
``__init__`` signature (positional or keyword, defaults, ``field(default_factory=...)``),
equality between instances of the same class field by field, a hash of the fields, the same
``repr``, ``__match_args__``, and assignment or deletion of a field raises
``AttributeError``. ``replace`` is ``dataclasses.replace``. The tests hold each of these
against a real frozen dataclass. Not supported (the classes using it need none of them):
``__post_init__``, ``InitVar``, ``ClassVar`` fields, ordering, ``__slots__``, and
inheriting fields from a base class.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")

__all__ = ["FrozenError", "field", "frozen", "replace"]


class FrozenError(AttributeError):
    """A field of a frozen instance was assigned or deleted."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


_NO_VALUE = object()
"""Stands for "argument not given" where a field has a default factory."""


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is made by ``default_factory`` for each instance."""
    return _Factory(default_factory)  # type: ignore[return-value]


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenError(f"cannot delete field {name!r}")


def _make(cls: type[T]) -> type[T]:
    names = tuple(cls.__dict__.get("__annotations__", {}))
    for base in cls.__mro__[1:]:
        if "__frozen_fields__" in base.__dict__:
            raise TypeError(f"{cls.__name__}: inheriting frozen fields is not supported")
    namespace: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    params: list[str] = []
    lines: list[str] = []
    for name in names:
        default = cls.__dict__.get(name, _NO_VALUE)
        if isinstance(default, _Factory):
            namespace[f"_make_{name}"] = default.make
            params.append(f"{name}=_NO_VALUE")
            lines.append(f"    if {name} is _NO_VALUE:\n        {name} = _make_{name}()")
            delattr(cls, name)  # as dataclasses does: no class attribute for a factory
        elif default is not _NO_VALUE:
            namespace[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
    # Fields go straight into the instance dict: the class's own __setattr__ refuses them.
    lines.append("    fields = self.__dict__")
    lines.extend(f"    fields[{name!r}] = {name}" for name in names)
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines) + "\n"
    if not names:
        source = "def __init__(self):\n    pass\n"
    exec(source, namespace)  # noqa: S102 - generated from the field names alone
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"

    def values(self: Any) -> tuple[Any, ...]:
        fields = self.__dict__
        return tuple(fields[name] for name in names)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(values(self) == values(other))

    def __hash__(self: Any) -> int:
        return hash(values(self))

    def __repr__(self: Any) -> str:
        shown = ", ".join(
            f"{name}={value!r}" for name, value in zip(names, values(self), strict=True)
        )
        return f"{self.__class__.__qualname__}({shown})"

    made: dict[str, object] = {
        "__frozen_fields__": names,
        "__match_args__": names,
        "__init__": init,
        "__setattr__": _frozen_setattr,
        "__delattr__": _frozen_delattr,
    }
    # Like dataclasses, methods the class defines itself are kept.
    if "__eq__" not in cls.__dict__:
        made["__eq__"] = __eq__
    if cls.__dict__.get("__hash__") is None:
        made["__hash__"] = __hash__
    if "__repr__" not in cls.__dict__:
        made["__repr__"] = __repr__
    for attribute, value in made.items():
        setattr(cls, attribute, value)
    return cls


if TYPE_CHECKING:

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def frozen(cls: type[T]) -> type[T]: ...

else:
    frozen = _make


def replace(instance: T, **changes: Any) -> T:
    """A copy of ``instance`` with ``changes`` (as ``dataclasses.replace``)."""
    names: tuple[str, ...] = type(instance).__frozen_fields__  # type: ignore[attr-defined]
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{type(instance).__name__} has no field {sorted(unknown)[0]!r}")
    current = instance.__dict__
    return type(instance)(**{name: changes.get(name, current[name]) for name in names})
