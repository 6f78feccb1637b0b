"""Value classes, as ``@dataclass(frozen=True)`` and ``@dataclass(slots=True, eq=False)``
make them, without importing ``dataclasses``.

``dataclasses`` imports ``inspect`` (and ``ast``, ``dis``, ``tokenize``), about 12 ms here,
and building each class costs a few hundred microseconds more. A ``pi-context tool
notes_list`` call is a fresh process of roughly 100 ms, so the notes and tool modules use
these decorators instead. Both write the dataclass's ``__init__`` (positional or keyword,
defaults, ``field(default_factory=...)``, ``field(init=False, ...)``,
``field(kw_only=True, ...)``), ``__repr__`` and ``__match_args__``; methods the class defines
itself are kept.

* ``frozen``: a frozen dataclass. Equality between instances of the same class field by
  field, a hash of the fields, and assignment or deletion of a field raises
  ``AttributeError``. ``replace`` is ``dataclasses.replace``.
* ``record``: a mutable slotted record (``slots=True, eq=False``): the class is rebuilt with
  ``__slots__`` naming its fields, instances compare and hash by identity.

The tests hold each of these against a real dataclass. Not supported (the classes using
them need none of them): ``__post_init__``, ``InitVar``, ``ClassVar`` fields, ordering,
inheriting fields from a base class, ``replace`` of a record, ``kw_only`` or ``init=False``
fields of a frozen class, and (records) zero-argument ``super()`` in the class's methods.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform, overload

    T = TypeVar("T")

__all__ = ["FrozenError", "field", "frozen", "record", "replace"]


class FrozenError(AttributeError):
    """A field of a frozen instance was assigned or deleted."""


_NO_VALUE = object()
"""Stands for "argument not given" where a field has a default factory."""


class _Field:
    __slots__ = ("default", "make", "init", "kw_only")

    def __init__(
        self, default: object, make: Callable[[], object] | None, init: bool, kw_only: bool
    ) -> None:
        self.default = default
        self.make = make
        self.init = init
        self.kw_only = kw_only


def _field(
    *,
    default: object = _NO_VALUE,
    default_factory: Callable[[], object] | None = None,
    init: bool = True,
    kw_only: bool = False,
) -> Any:
    if default is not _NO_VALUE and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, init, kw_only)


if TYPE_CHECKING:

    @overload
    def field(*, default: T, init: bool = True, kw_only: bool = False) -> T: ...
    @overload
    def field(
        *, default_factory: Callable[[], T], init: bool = True, kw_only: bool = False
    ) -> T: ...
    @overload
    def field(*, init: bool = True, kw_only: bool = False) -> Any: ...
    def field(**options: Any) -> Any:
        """A field with options, as ``dataclasses.field`` (``default_factory`` runs for each
        instance)."""

else:
    field = _field


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenError(f"cannot delete field {name!r}")


def _fields(cls: type, marker: str) -> tuple[str, ...]:
    for base in cls.__mro__[1:]:
        if marker in base.__dict__:
            raise TypeError(f"{cls.__name__}: inheriting fields is not supported")
    return tuple(cls.__dict__.get("__annotations__", {}))


def _init(cls: type, names: tuple[str, ...], frozen: bool) -> tuple[Any, tuple[str, ...]]:
    """The dataclass ``__init__`` of ``cls`` and its ``__match_args__``. A frozen instance's
    fields go straight into its dict (the class's own ``__setattr__`` refuses them)."""
    namespace: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    params: list[str] = []
    keywords: list[str] = []
    lines = ["    fields = self.__dict__"] if frozen else []
    for name in names:
        spec = cls.__dict__.get(name, _NO_VALUE)
        if not isinstance(spec, _Field):
            spec = _Field(spec, None, True, False)
        elif frozen and not (spec.init and not spec.kw_only):
            raise TypeError(f"{cls.__name__}: kw_only and init=False fields are not supported")
        value, default = name, ""
        if spec.make is not None:
            namespace[f"_make_{name}"] = spec.make
            if spec.init:
                default = "=_NO_VALUE"
                lines.append(f"    if {name} is _NO_VALUE:\n        {name} = _make_{name}()")
            else:
                value = f"_make_{name}()"
        elif spec.default is not _NO_VALUE:
            namespace[f"_default_{name}"] = spec.default
            default = f"=_default_{name}"
            value = name if spec.init else f"_default_{name}"
        elif not spec.init:
            continue  # as dataclasses does: no value until one is assigned
        if spec.init:
            (keywords if spec.kw_only else params).append(f"{name}{default}")
        lines.append(f"    fields[{name!r}] = {value}" if frozen else f"    self.{name} = {value}")
    signature = ", ".join(["self", *params, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({signature}):\n" + "\n".join(lines or ["    pass"]) + "\n"
    exec(source, namespace)  # noqa: S102 - generated from the field names alone
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init, tuple(p.partition("=")[0] for p in params)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _make(cls: type[T]) -> type[T]:
    names = _fields(cls, "__frozen_fields__")
    init, match_args = _init(cls, names, frozen=True)
    for name in names:
        spec = cls.__dict__.get(name)
        if isinstance(spec, _Field):  # as dataclasses does: the default, or none for a factory
            if spec.make is None:
                setattr(cls, name, spec.default)
            else:
                delattr(cls, name)

    def values(self: Any) -> tuple[Any, ...]:
        fields = self.__dict__
        return tuple(fields[name] for name in names)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(values(self) == values(other))

    def __hash__(self: Any) -> int:
        return hash(values(self))

    made: dict[str, object] = {
        "__frozen_fields__": names,
        "__match_args__": match_args,
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
        made["__repr__"] = _repr(names)
    for attribute, value in made.items():
        setattr(cls, attribute, value)
    return cls


def _make_record(cls: type[T]) -> type[T]:
    names = _fields(cls, "__record_fields__")
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__}: a record makes its own __slots__")
    init, match_args = _init(cls, names, frozen=False)
    body = {
        key: value
        for key, value in cls.__dict__.items()
        if key not in names and key not in ("__dict__", "__weakref__")
    }
    body.update(__slots__=names, __record_fields__=names, __match_args__=match_args, __init__=init)
    if "__repr__" not in body:
        body["__repr__"] = _repr(names)
    metaclass: Any = type(cls)
    made: type[T] = metaclass(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


if TYPE_CHECKING:

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def frozen(cls: type[T]) -> type[T]: ...

    @dataclass_transform(field_specifiers=(field,))
    def record(cls: type[T]) -> type[T]: ...

else:
    frozen = _make
    record = _make_record


def replace(instance: T, **changes: Any) -> T:
    """A copy of ``instance`` with ``changes`` (as ``dataclasses.replace``)."""
    names: tuple[str, ...] = type(instance).__frozen_fields__  # type: ignore[attr-defined]
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{type(instance).__name__} has no field {sorted(unknown)[0]!r}")
    current = instance.__dict__
    return type(instance)(**{name: changes.get(name, current[name]) for name in names})
