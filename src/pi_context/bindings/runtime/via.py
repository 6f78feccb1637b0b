"""Typed read-only attributes declared in one line: ``Derived(getter)`` is the property
``getter(self)``, and ``Via("lifecycle.model")`` the property ``self.lifecycle.model``, each
typed by its parameter (``Via[ModelInfo | None]``).

A façade or a record that only passes on a collaborator's value says so in one line instead of
a four-line property. Both are ``property`` objects (``fget`` is the getter), so whatever
patches or inspects properties (the runtime mutants) treats them as such.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

if TYPE_CHECKING:
    from typing import Self

T = TypeVar("T")


class Derived(property, Generic[T]):
    """The read-only attribute ``get(instance)``."""

    def __init__(self, get: Callable[[Any], T], doc: str | None = None) -> None:
        super().__init__(get, doc=doc)

    if TYPE_CHECKING:  # what an access reads; at run time it is the property's own __get__

        @overload
        def __get__(self, instance: None, owner: type[Any] | None = None, /) -> Self: ...
        @overload
        def __get__(self, instance: object, owner: type[Any] | None = None, /) -> T: ...
        def __get__(self, instance: object, owner: type[Any] | None = None, /) -> Any: ...


class Via(Derived[T]):
    """The read-only attribute at ``path`` (dotted) of the instance."""

    def __init__(self, path: str, doc: str | None = None) -> None:
        super().__init__(attrgetter(path), doc)
