"""A machine table in patterns: one key for every group of shapes whose rows are the same.

A shape names the tag or value of every axis, joined by ``/``. A spec with several axes has
shapes by the hundred that differ only in an axis a trigger's rows neither read nor set
(handoff@0.6-auto: 110 shapes, 1,650 (trigger, shape) keys). ``fold`` writes such a group as
one key: an axis reads ``*`` in a key when every value of the axis gives the same rows, and
``*`` in a next shape when the row keeps the source's value of that axis. The generated
``machine.py`` holds the folded table (258 keys there), which a person can review;
``spell_out`` gives back every (trigger, shape) for the ``transitions`` machine, exactly the
table before folding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

ANY = "*"
SEP = "/"

Targets = tuple[tuple[str, str], ...]  # (row id, next shape), in table order
Table = Mapping[tuple[str, str], Targets]  # (trigger, shape) -> targets


def fold(table: Table, axes: Sequence[Sequence[str]]) -> dict[tuple[str, str], Targets]:
    """``table`` with each trigger's shapes folded axis by axis (``axes``: every axis's
    values, in shape order). A group of keys that differ in one axis only folds when it holds
    every value of the axis and, row by row, the rows are the same and each next value of the
    axis is either one value for all or the source's own (written ``*``). Keys keep the order
    of the first shape of their group."""
    by_trigger: dict[str, dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]] = {}
    for (trigger, shape), listed in table.items():
        split = tuple((row, tuple(dest.split(SEP))) for row, dest in listed)
        by_trigger.setdefault(trigger, {})[tuple(shape.split(SEP))] = split
    out: dict[tuple[str, str], Targets] = {}
    for trigger, shapes in by_trigger.items():
        for axis, values in enumerate(axes):
            shapes = _fold_axis(shapes, axis, tuple(values))
        for key, targets in shapes.items():
            out[(trigger, SEP.join(key))] = tuple((row, SEP.join(d)) for row, d in targets)
    return out


_Split = dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]


def _fold_axis(shapes: _Split, axis: int, values: tuple[str, ...]) -> _Split:
    groups: dict[tuple[str, ...], dict[str, tuple[tuple[str, tuple[str, ...]], ...]]] = {}
    for key, targets in shapes.items():
        groups.setdefault(key[:axis] + (ANY,) + key[axis + 1 :], {})[key[axis]] = targets
    out: _Split = {}
    for key, members in groups.items():
        merged = _merge(members, axis, values)
        if merged is not None:
            out[key] = merged
            continue
        for value, targets in members.items():
            out[key[:axis] + (value,) + key[axis + 1 :]] = targets
    return out


def _merge(
    members: dict[str, tuple[tuple[str, tuple[str, ...]], ...]], axis: int, values: tuple[str, ...]
) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """The one targets list that stands for every member, or None when they differ."""
    if set(members) != set(values):
        return None
    lists = [members[value] for value in values]
    if len({len(targets) for targets in lists}) != 1:
        return None
    merged: list[tuple[str, tuple[str, ...]]] = []
    for column in zip(*lists, strict=True):
        rows = {row for row, _ in column}
        rests = {dest[:axis] + dest[axis + 1 :] for _, dest in column}
        nexts = [dest[axis] for _, dest in column]
        if len(rows) != 1 or len(rests) != 1:
            return None
        if all(n in (source, ANY) for n, source in zip(nexts, values, strict=True)):
            value = ANY
        elif len(set(nexts)) == 1:
            value = nexts[0]
        else:
            return None
        row, dest = column[0]
        merged.append((row, dest[:axis] + (value,) + dest[axis + 1 :]))
    return tuple(merged)


def spell_out(table: Table, states: Sequence[str]) -> dict[tuple[str, str], Targets]:
    """Every (trigger, shape) of a folded ``table``: for each trigger (in table order) and
    each of ``states`` (in order) the rows of the key that matches it, a ``*`` in a next
    shape filled with the source's value. A shape no key matches has no rows."""
    patterns: dict[str, list[tuple[list[str], Targets]]] = {}
    for (trigger, pattern), listed in table.items():
        patterns.setdefault(trigger, []).append((pattern.split(SEP), listed))
    out: dict[tuple[str, str], Targets] = {}
    for trigger, keys in patterns.items():
        for state in states:
            parts = state.split(SEP)
            for key, targets in keys:
                if all(k in (ANY, p) for k, p in zip(key, parts, strict=True)):
                    out[(trigger, state)] = tuple(
                        (row, _fill(dest, parts)) for row, dest in targets
                    )
                    break
    return out


def _fill(dest: str, source: list[str]) -> str:
    return SEP.join(s if d == ANY else d for d, s in zip(dest.split(SEP), source, strict=True))
