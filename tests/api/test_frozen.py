"""``pi_context.support.frozen`` behaves as ``@dataclass(frozen=True)`` on the classes it supports:
random classes (field names, which have defaults or default factories) are built both ways
and compared on construction, errors, equality, hashing, repr, match args, immutability and
``replace``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.support.frozen import FrozenError, field, frozen, replace

_NAMES = st.lists(
    st.sampled_from(["a", "b", "path", "scope", "meta", "size", "x1", "text"]),
    unique=True,
    max_size=5,
)
_VALUES = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.booleans())


@st.composite
def _classes(draw: st.DrawFn) -> tuple[type, type, list[str], int]:
    """(our class, the dataclass, field names, how many take no default)."""
    names = draw(_NAMES)
    required = draw(st.integers(0, len(names)))
    body_ours: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
    body_theirs: dict[str, Any] = {"__annotations__": dict.fromkeys(names, "object")}
    for name in names[required:]:
        if draw(st.booleans()):
            value = draw(_VALUES)
            body_ours[name] = body_theirs[name] = value
        else:
            body_ours[name] = field(default_factory=list)
            body_theirs[name] = dataclasses.field(default_factory=list)
    ours = frozen(type("Record", (), body_ours))
    theirs = dataclasses.dataclass(frozen=True)(type("Record", (), body_theirs))
    return ours, theirs, names, required


def _outcome(make: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "ok", make(*args, **kwargs)
    except TypeError:
        return "TypeError", None


@given(shape=_classes(), args=st.lists(_VALUES, max_size=6), data=st.data())
def test_a_frozen_class_behaves_as_the_frozen_dataclass(
    shape: tuple[type, type, list[str], int], args: list[Any], data: st.DataObject
) -> None:
    ours, theirs, names, _required = shape
    keywords = data.draw(st.dictionaries(st.sampled_from([*names, "zz"]), _VALUES, max_size=3))
    mine, made = _outcome(ours, *args, **keywords)
    base, reference = _outcome(theirs, *args, **keywords)
    assert mine == base, (args, keywords)
    if mine != "ok":
        return
    assert repr(made) == repr(reference)
    assert ours.__match_args__ == theirs.__match_args__ == tuple(names)  # type: ignore[attr-defined]
    values = [getattr(made, name) for name in names]
    assert values == [getattr(reference, name) for name in names]
    twin = ours(*values)
    assert twin == made
    assert _outcome(hash, made) == _outcome(hash, reference)  # a list field: both unhashable
    assert made != reference, "instances of different classes are never equal"
    for name in [*names, "other"]:
        with pytest.raises(AttributeError):
            setattr(made, name, 1)
        with pytest.raises(AttributeError):
            delattr(made, name)
    changes = data.draw(st.dictionaries(st.sampled_from([*names, "zz"]), _VALUES, max_size=2))
    mine_r, changed = _outcome(replace, made, **changes)
    base_r, expected = _outcome(dataclasses.replace, reference, **changes)
    assert mine_r == base_r
    if mine_r == "ok":
        assert [getattr(changed, n) for n in names] == [getattr(expected, n) for n in names]
        assert (changed == made) == (expected == reference)


def test_a_default_factory_runs_for_each_instance_and_a_frozen_field_names_itself() -> None:
    @frozen
    class Box:
        items: list[int] = field(default_factory=list)

    one, two = Box(), Box()
    assert one.items == [] and one.items is not two.items
    with pytest.raises(FrozenError, match="'items'"):
        one.items = [1]  # type: ignore[misc]


def test_inheriting_fields_is_refused() -> None:
    @frozen
    class Base:
        a: int

    with pytest.raises(TypeError, match="inheriting"):

        @frozen
        class Child(Base):
            b: int
