"""The whole entry tree as one flat, depth-first list: what ``session show`` prints.

Every entry id appears exactly once, whatever the file holds. A repeated id is its later entry
(``tree.link_nodes``). Entries that Pi's tree never reaches, because their parent chain runs into
a parent cycle, follow Pi's tree: each cycle is cut at its member written first in the file,
which then heads its part like a root. Everything here is iterative and linear in the entries,
so neither the depth of a chain nor the size of a file can exhaust the stack or the clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .tree import Entry, TreeNode, link_nodes


@dataclass(slots=True)
class OutlineRow:
    node: TreeNode
    parent: str | None  # the parent's id in this outline; None for a root or a cycle's cut
    depth: int  # ancestors in this outline
    forks: int  # ancestors with more than one child (the text view indents by these)
    forked: bool  # this row is one of several children
    children: list[str]  # child ids, in Pi's order
    cycle: int  # the length of the parent cycle this row cuts; 0 for every other row
    last: bool = False  # the last of several children (the text view draws it with "└")

    @property
    def id(self) -> str:
        return self.node.id


def outline(entries: Sequence[Entry], labels: dict[Any, Any]) -> list[OutlineRow]:
    """Pi's tree in Pi's order, then the parts cut out of parent cycles (see the module doc)."""
    nodes, roots = link_nodes(entries, labels)
    rows: list[OutlineRow] = []
    seen: set[int] = set()
    for root in roots:
        _walk(root, 0, rows, seen)
    if len(seen) == len(nodes):
        return rows
    parent_of = {id(child): node for node in nodes.values() for child in node.children}
    order = [node for entry in entries if (node := nodes[entry["id"]]).entry is entry]
    position = {id(node): index for index, node in enumerate(order)}
    for start in order:
        if id(start) in seen:
            continue
        # Every unreached chain ends in a cycle: walk up to it, then cut it at its first line.
        walk: list[TreeNode] = []
        on_walk: dict[int, int] = {}
        current: TreeNode | None = start
        while current is not None and id(current) not in on_walk and id(current) not in seen:
            on_walk[id(current)] = len(walk)
            walk.append(current)
            current = parent_of.get(id(current))
        if current is None or id(current) in seen:
            cut, length = walk[-1], 0  # defensive: link_nodes never leaves such a chain
        else:
            ring = walk[on_walk[id(current)] :]
            cut, length = min(ring, key=lambda n: position[id(n)]), len(ring)
        _walk(cut, length, rows, seen)
    return rows


def _walk(root: TreeNode, cycle: int, rows: list[OutlineRow], seen: set[int]) -> None:
    # Frames: node, parent id, depth, forks above, forked, last. Children already listed (only
    # a cycle's cut member can be met again) are left out, so each id is listed once.
    stack: list[tuple[TreeNode, str | None, int, int, bool, bool]] = [
        (root, None, 0, 0, False, False)
    ]
    append, push, pop, mark = rows.append, stack.append, stack.pop, seen.add
    while stack:
        node, parent, depth, forks, forked, last = pop()
        mark(id(node))
        children = node.children
        if children and (len(children) > 1 or id(children[0]) in seen):
            children = [child for child in children if id(child) not in seen]
        node_id = node.entry["id"]
        child_ids = [child.entry["id"] for child in children]
        cut = 0 if parent else cycle
        append(OutlineRow(node, parent, depth, forks, forked, child_ids, cut, last))
        if len(children) == 1:
            push((children[0], node_id, depth + 1, forks, False, False))
        elif children:
            final = children[-1]
            for child in reversed(children):
                push((child, node_id, depth + 1, forks + 1, True, child is final))


def outline_json(rows: Sequence[OutlineRow]) -> list[dict[str, Any]]:
    """The ``--json`` tree: one flat object per row (shape documented in docs/sessions.md)."""
    out: list[dict[str, Any]] = []
    for row in rows:
        item: dict[str, Any] = {
            "id": row.id,
            "parentId": row.parent,
            "label": row.node.label,
            "depth": row.depth,
            "children": row.children,
        }
        if row.cycle:
            item["cycle"] = row.cycle
        out.append(item)
    return out
