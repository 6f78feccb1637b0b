"""``pi_context.support.frozen.record`` behaves as ``@dataclass(slots=True, eq=False)`` on the
classes it supports: random classes (field names; which have defaults, default factories, are
keyword-only or left out of ``__init__``) are built both ways and compared on construction,
errors, the values set, repr, match args, slots, assignment and identity equality."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.support.frozen import field, record

_NAMES = st.lists(
    st.sampled_from(["a", "b", "path", "scope", "meta", "size", "x1", "_text"]),
    unique=True,
    max_size=6,
)
_VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.booleans())


@st.composite
def _classes(draw: st.DrawFn) -> tuple[type, type, list[str]]:
    """(our class, the dataclass, field names)."""
    names = draw(_NAMES)
    required = draw(st.integers(0, len(names)))
    body_ours: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
    body_theirs: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
    for index, name in enumerate(names):
        init = draw(st.booleans()) if index >= required else True
        kw_only = draw(st.booleans())
        if index < required and not kw_only:
            if not init:
                body_ours[name] = field(init=False)
                body_theirs[name] = dataclasses.field(init=False)
            continue
        if index < required:
            body_ours[name] = field(kw_only=True)
            body_theirs[name] = dataclasses.field(kw_only=True)
        elif draw(st.booleans()):
            value = draw(_VALUES)
            body_ours[name] = field(default=value, init=init, kw_only=kw_only)
            body_theirs[name] = dataclasses.field(default=value, init=init, kw_only=kw_only)
        else:
            body_ours[name] = field(default_factory=list, init=init, kw_only=kw_only)
            body_theirs[name] = dataclasses.field(default_factory=list, init=init, kw_only=kw_only)
    ours = record(type("Record", (), body_ours))
    theirs = dataclasses.dataclass(slots=True, eq=False)(type("Record", (), body_theirs))
    return ours, theirs, names


def _outcome(make: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "ok", make(*args, **kwargs)
    except TypeError:
        return "TypeError", None


def _values(instance: object, names: list[str]) -> list[tuple[str, Any]]:
    return [
        _outcome(getattr, instance, name) if hasattr(instance, name) else ("unset", None)
        for name in names
    ]


@given(shape=_classes(), args=st.lists(_VALUES, max_size=6), data=st.data())
def test_a_record_behaves_as_the_slotted_dataclass(
    shape: tuple[type, type, list[str]], args: list[Any], data: st.DataObject
) -> None:
    ours, theirs, names = shape
    keywords = data.draw(st.dictionaries(st.sampled_from([*names, "zz"]), _VALUES, max_size=4))
    mine, made = _outcome(ours, *args, **keywords)
    base, reference = _outcome(theirs, *args, **keywords)
    assert mine == base, (args, keywords)
    assert ours.__slots__ == theirs.__slots__ == tuple(names)  # type: ignore[attr-defined]
    assert ours.__match_args__ == theirs.__match_args__  # type: ignore[attr-defined]
    if mine != "ok":
        return
    assert _values(made, names) == _values(reference, names)
    if all(hasattr(made, name) for name in names):
        assert repr(made) == repr(reference)
    assert made != ours(*args, **keywords), "records compare by identity"
    assert hash(made) == object.__hash__(made)
    for name in names:
        setattr(made, name, 1)
        setattr(reference, name, 1)
        assert getattr(made, name) == getattr(reference, name) == 1
    with pytest.raises(AttributeError):
        made.other = 1
    with pytest.raises(AttributeError):
        reference.other = 1


def test_a_default_factory_runs_for_each_instance_and_methods_are_kept() -> None:
    @record
    class Box:
        name: str
        items: list[int] = field(init=False, default_factory=list)

        def __repr__(self) -> str:
            return f"Box({self.name})"

    one, two = Box("a"), Box("b")
    assert one.items == [] and one.items is not two.items
    assert repr(one) == "Box(a)"
    assert not hasattr(one, "__dict__")


def test_slots_written_by_hand_and_inherited_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="__slots__"):

        @record
        class Slotted:
            __slots__ = ("a",)
            a: int

    @record
    class Base:
        a: int

    with pytest.raises(TypeError, match="inheriting"):

        @record
        class Child(Base):
            b: int
