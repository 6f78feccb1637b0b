"""YAML to a node tree, without recursion and with a bounded depth.

PyYAML's composer builds nodes recursively, so a file with a few hundred levels of flow
nesting (``[[[[...]]]]``) ends in a ``RecursionError``. This composer builds the same node
tree from the parser's event stream with an explicit stack, and refuses nesting deeper than
:data:`MAX_DEPTH` at the position where the limit is crossed. It also counts the nodes each
alias stands for (its anchor's whole subtree, aliases in it counted again): every reader of
the tree walks an aliased subtree once per alias, so a small file of nested aliases (an
"alias bomb") would expand to billions of nodes. Past :data:`MAX_ALIAS_NODES` the alias that
crosses the limit is refused at its position; an alias inside the collection it names (a
loop) is refused too. It uses libyaml's parser when
PyYAML was built with it (several times faster on large specs), the pure-Python one otherwise.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 32  # mappings/lists inside one another; a spec needs about six
MAX_ALIAS_NODES = 100_000
"""Nodes all aliases of a spec may stand for together (the published specs use none)."""


class NestingError(yaml.MarkedYAMLError):
    """Nesting deeper than the limit; raised at the node that crosses it."""


class AliasExpansionError(yaml.MarkedYAMLError):
    """Aliases that stand for more nodes than the limit, or a loop; raised at the alias."""


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str) -> yaml.Node | None:
    """The single document of ``text`` as a node tree (None for an empty stream).

    Raises :class:`yaml.MarkedYAMLError` (with a position) for invalid YAML, more than one
    document, an undefined alias, nesting deeper than :data:`MAX_DEPTH`, or aliases that stand
    for more than :data:`MAX_ALIAS_NODES` nodes.
    """
    loader = _Loader(text)
    try:
        return _compose(loader)
    finally:
        loader.dispose()


def _compose(loader: Any) -> yaml.Node | None:
    loader.get_event()  # stream start
    if loader.check_event(yaml.StreamEndEvent):
        loader.get_event()
        return None
    start = loader.get_event()  # document start
    anchors: dict[str, yaml.Node] = {}
    sizes: dict[int, int] = {}  # id of a finished anchored node: the nodes it expands to
    expanded = 0  # nodes the aliases so far stand for
    # each open collection: [node, its children so far, nodes it expands to so far, anchored]
    stack: list[list[Any]] = []
    root: yaml.Node | None = None
    while root is None:
        event: Any = loader.get_event()
        mark: Any = event.start_mark  # libyaml's marks are a class of their own
        end: Any = event.end_mark
        node: yaml.Node | None = None
        size = 1
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", mark
                )
            node = anchors[event.anchor]
            if id(node) not in sizes:
                raise AliasExpansionError(
                    None, None, f"alias *{event.anchor} is inside what it names (a loop)", mark
                )
            size = sizes[id(node)]
            expanded += size
            if expanded > MAX_ALIAS_NODES:
                raise AliasExpansionError(
                    None,
                    None,
                    f"aliases expand to more than {MAX_ALIAS_NODES} nodes (the limit for a "
                    f"spec); *{event.anchor} crosses it",
                    mark,
                )
        elif isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, mark, end, style=event.style)
            if event.anchor is not None:
                anchors[event.anchor] = node
                sizes[id(node)] = 1
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise NestingError(
                    None,
                    None,
                    f"more than {MAX_DEPTH} levels of nested mappings and lists "
                    f"(the limit for a spec)",
                    mark,
                )
            kind = (
                yaml.SequenceNode
                if isinstance(event, yaml.SequenceStartEvent)
                else yaml.MappingNode
            )
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(kind, None, event.implicit)
            collection = kind(tag, [], mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                anchors[event.anchor] = collection
            stack.append([collection, [], 1, event.anchor is not None])
            continue
        else:  # the end of the innermost collection
            collection, children, size, anchored = stack.pop()
            collection.end_mark = end
            if isinstance(collection, yaml.MappingNode):
                collection.value = list(zip(children[::2], children[1::2], strict=True))
            else:
                collection.value = children
            node = collection
            if anchored:
                sizes[id(node)] = size
        if stack:
            stack[-1][1].append(node)
            stack[-1][2] += size
        else:
            root = node
    loader.get_event()  # document end
    if not loader.check_event(yaml.StreamEndEvent):
        extra = loader.get_event()
        raise yaml.composer.ComposerError(
            "expected a single document in the stream",
            start.start_mark,
            "but found another document",
            extra.start_mark,
        )
    loader.get_event()
    return root
