"""The entry tree: parent walks, labels, session name and Pi's ``getTree`` ordering.

Pure functions over lists of entry dicts. Where Pi would loop forever (a parent cycle), these
stop at the first repeated entry; ``find_cycles`` reports such cycles so callers can say so.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .jsonl import js_date_ms, js_trim, js_truthy

Entry = dict[str, Any]


def parent_of(entry: Entry, by_id: Mapping[str, Entry]) -> Entry | None:
    parent_id = entry.get("parentId")
    if not isinstance(parent_id, str) or not parent_id:
        return None
    return by_id.get(parent_id)


def branch_path(leaf: Entry | None, by_id: Mapping[str, Entry]) -> list[Entry]:
    """Root -> leaf. A missing parent ends the walk; a repeated entry (a cycle) ends it too.

    A walk longer than the number of entries must have repeated one; only then is the walk
    redone remembering what it saw (a set of every entry on a 270k-entry branch costs ~17 MiB
    and a third of the walk's time, for a cycle that is almost never there)."""
    path: list[Entry] = []
    append, get = path.append, by_id.get
    steps = len(by_id) + 1
    current = leaf
    while current is not None:
        steps -= 1
        if steps < 0:
            return _branch_path_checked(leaf, by_id)
        append(current)
        parent_id = current.get("parentId")
        current = get(parent_id) if type(parent_id) is str and parent_id else None
    path.reverse()
    return path


def _branch_path_checked(leaf: Entry | None, by_id: Mapping[str, Entry]) -> list[Entry]:
    path: list[Entry] = []
    seen: set[int] = set()
    append, remember, get = path.append, seen.add, by_id.get
    current = leaf
    while current is not None:
        key = id(current)
        if key in seen:
            break
        remember(key)
        append(current)
        parent_id = current.get("parentId")
        current = get(parent_id) if type(parent_id) is str and parent_id else None
    path.reverse()
    return path


def find_cycles(by_id: Mapping[str, Entry]) -> list[list[str]]:
    """Every parent cycle reachable through ``by_id``, each as ids in walk order."""
    parent_of: dict[str, Any] = {}
    for entry_id, entry in by_id.items():
        parent = entry.get("parentId")
        if type(parent) is str and parent in by_id:
            parent_of[entry_id] = parent
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = finished
    cycles: list[list[str]] = []
    for start in parent_of:
        if start in state:
            continue
        walk: list[str] = []
        current: Any = start
        while current is not None and current not in state:
            state[current] = 1
            walk.append(current)
            current = parent_of.get(current)
        if current is not None and state.get(current) == 1:
            cycles.append(walk[walk.index(current) :])
        for entry_id in walk:
            state[entry_id] = 2
    return cycles


def resolve_labels(values: Iterable[Any]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Label and label timestamp per target id, replayed over the whole file in order."""
    labels: dict[Any, Any] = {}
    stamps: dict[Any, Any] = {}
    for entry in values:
        if not isinstance(entry, dict) or entry.get("type") != "label":
            continue
        target = entry.get("targetId")
        if not _hashable(target):
            continue
        label = entry.get("label")
        if js_truthy(label):
            labels[target] = label
            stamps[target] = entry.get("timestamp")
        else:
            labels.pop(target, None)
            stamps.pop(target, None)
    return labels, stamps


def _hashable(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def session_name(values: Sequence[Any]) -> str | None:
    """The latest ``session_info`` name, trimmed; empty or absent means no name."""
    for entry in reversed(values):
        if isinstance(entry, dict) and entry.get("type") == "session_info":
            name = entry.get("name")
            if not isinstance(name, str):
                return None
            return js_trim(name) or None
    return None


@dataclass(eq=False, slots=True)
class TreeNode:
    entry: Entry
    label: Any = None
    children: list[TreeNode] = field(default_factory=list)

    @property
    def id(self) -> str:
        entry_id: str = self.entry["id"]
        return entry_id


def _timestamp_cmp(a: TreeNode, b: TreeNode) -> int:
    ta, tb = js_date_ms(a.entry.get("timestamp")), js_date_ms(b.entry.get("timestamp"))
    if ta is None or tb is None:
        return 0  # JS compares NaN as "equal"
    return (ta > tb) - (ta < tb)


def _sort_children(children: list[TreeNode]) -> None:
    if len(children) < 2:
        return
    stamps = [js_date_ms(child.entry.get("timestamp")) for child in children]
    if None not in stamps:
        order = sorted(range(len(children)), key=lambda i: stamps[i])  # type: ignore[return-value,arg-type]
        children[:] = [children[i] for i in order]
    else:
        # V8's Array.prototype.sort is a port of CPython's timsort, so the same comparator gives
        # the same order even for the inconsistent NaN comparisons.
        children.sort(key=functools.cmp_to_key(_timestamp_cmp))


def link_nodes(
    entries: Sequence[Entry], labels: dict[Any, Any]
) -> tuple[dict[str, TreeNode], list[TreeNode]]:
    """One node per id, linked under its parent, children in Pi's order; and Pi's roots.

    Pi pushes a node once per entry line, so an id written twice sits twice in its parent's
    children and a file of repeated ids becomes a DAG whose expansion is exponential. Here the
    later entry wins the id (as in Pi's id map and in our branch walks) and only it is linked,
    under its own parent: every id is in the structure once and it is a forest plus, at most,
    parent cycles that no root reaches.
    """
    label = labels.get
    nodes = {entry["id"]: TreeNode(entry, label(entry["id"]), []) for entry in entries}
    roots: list[TreeNode] = []
    find = nodes.get
    for entry in entries:
        node = nodes[entry["id"]]
        if node.entry is not entry:
            continue  # shadowed by a later entry with the same id
        parent_id = entry.get("parentId")
        parent = find(parent_id) if type(parent_id) is str else None
        if parent is None or parent is node:
            roots.append(node)  # null, unknown or its own parent: a root, as in Pi
        else:
            parent.children.append(node)
    for node in nodes.values():
        if len(node.children) > 1:
            _sort_children(node.children)
    return nodes, roots


def build_tree(entries: Sequence[Entry], labels: dict[Any, Any]) -> list[TreeNode]:
    """Pi's ``getTree``: roots in file order, children sorted by timestamp (stable); a repeated
    id appears once, as its later entry (see ``link_nodes``)."""
    return link_nodes(entries, labels)[1]


def tree_view(roots: Sequence[TreeNode]) -> list[dict[str, Any]]:
    """``[{id, label, children}]`` as the fixtures show it, built iteratively (any depth).

    Each node is expanded once: a node reached again (impossible in a ``link_nodes`` forest, but
    callers may build their own) is listed without children."""
    out: list[dict[str, Any]] = []
    stack: list[tuple[TreeNode, list[dict[str, Any]]]] = [(n, out) for n in reversed(roots)]
    expanded: set[int] = set()
    while stack:
        node, target = stack.pop()
        view: dict[str, Any] = {"id": node.id, "label": node.label, "children": []}
        target.append(view)
        if id(node) in expanded:
            continue
        expanded.add(id(node))
        for child in reversed(node.children):
            stack.append((child, view["children"]))
    return out
