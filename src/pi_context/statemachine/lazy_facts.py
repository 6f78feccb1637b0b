"""The facts a host gathers for one reducer event, read at most once each.

A fact is given as a value or, where some spec declares it lazy, as a callable that computes
it: the callable runs on the first read only, so the reducer's consultation order is the
spec's and a fact the reducer never reads is never computed. The reads of the facts the
running spec declares lazy for the event are recorded, in order (``consulted``).

This module is the machinery; the classes a host builds, one per event with every fact the
committed specs declare for it, are generated from the specs' fact declarations
(:mod:`pi_context.statemachine.host_facts`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, overload

if TYPE_CHECKING:
    from typing import Self

T = TypeVar("T")

Lazy = Callable[[], bool]
"""A lazy fact: computed when (and if) the reducer reads it."""


class EventFacts:
    """The facts of one event, by host fact name (see the generated subclasses)."""

    EVENT: ClassVar[str]
    """The event these facts are for."""

    __slots__ = ("_declared", "_sources", "_values", "consulted")

    def __init__(self, sources: Mapping[str, object]) -> None:
        self._sources = dict(sources)
        self._values: dict[str, object] = {}
        self._declared: frozenset[str] = frozenset()
        self.consulted: list[str] = []
        """The reads of the watched facts (``watch``), in the order the reducer made them."""

    def watch(self, declared: Iterable[str]) -> None:
        """Record, from now on, each first read of a fact in ``declared`` (host names: the
        facts the running spec declares lazy for this event) in ``consulted``."""
        self._declared = frozenset(declared)

    def gathered(self) -> tuple[str, ...]:
        """The host facts given, in the order the constructor takes them."""
        return tuple(self._sources)

    def read(self, host: str) -> object:
        """The host fact ``host``: computed on its first read when it is lazy, then kept."""
        if host not in self._values:
            try:
                source = self._sources[host]
            except KeyError:
                raise AttributeError(
                    f"the {self.EVENT} facts hold no host fact {host!r} (gathered: "
                    f"{', '.join(self._sources)})"
                ) from None
            self._values[host] = bool(source()) if callable(source) else source
            if host in self._declared:
                self.consulted.append(host)
        return self._values[host]

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={self._values[name]!r}" if name in self._values else f"{name}=<unread>"
            for name in self._sources
        )
        return f"{type(self).__name__}({shown})"


class Fact(property, Generic[T]):
    """The attribute a reducer reads: the host fact ``host`` of the instance, typed ``T``.

    A ``property`` (``fget`` reads the fact), so whatever inspects properties treats it as one.
    """

    def __init__(self, host: str, doc: str | None = None) -> None:
        super().__init__(lambda facts: facts.read(host), doc=doc)

    if TYPE_CHECKING:  # what an access reads; at run time it is the property's own __get__

        @overload
        def __get__(self, instance: None, owner: type[Any] | None = None, /) -> Self: ...
        @overload
        def __get__(self, instance: object, owner: type[Any] | None = None, /) -> T: ...
        def __get__(self, instance: object, owner: type[Any] | None = None, /) -> Any: ...
