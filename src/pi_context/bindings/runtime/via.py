"""Typed read-only attributes declared in one line: ``Derived(getter)`` is the property
``getter(self)``, and ``Via("lifecycle.model")`` the property ``self.lifecycle.model``, each
typed by its parameter (``Via[ModelInfo | None]``).

A façade or a record that only passes on a collaborator's value says so in one line instead of
a four-line property. Both are ``property`` objects (``fget`` is the getter), so whatever
patches or inspects properties (the runtime mutants) treats them as such.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TypeVar

from pi_context.statemachine.lazy_facts import Read

T = TypeVar("T")


class Derived(Read[T]):
    """The read-only attribute ``get(instance)`` (the typed property the generated facts'
    attributes are too)."""


class Via(Derived[T]):
    """The read-only attribute at ``path`` (dotted) of the instance."""

    def __init__(self, path: str, doc: str | None = None) -> None:
        super().__init__(attrgetter(path), doc)
