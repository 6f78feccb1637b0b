"""YAML to a node tree, without recursion and with a bounded depth.

PyYAML's composer builds nodes recursively, so a file with a few hundred levels of flow
nesting (``[[[[...]]]]``) ends in a ``RecursionError``. This composer builds the same node
tree from the parser's event stream with an explicit stack, and refuses nesting deeper than
:data:`MAX_DEPTH` at the position where the limit is crossed. It uses libyaml's parser when
PyYAML was built with it (several times faster on large specs), the pure-Python one otherwise.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 32  # mappings/lists inside one another; a spec needs about six


class NestingError(yaml.MarkedYAMLError):
    """Nesting deeper than the limit; raised at the node that crosses it."""


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def compose(text: str) -> yaml.Node | None:
    """The single document of ``text`` as a node tree (None for an empty stream).

    Raises :class:`yaml.MarkedYAMLError` (with a position) for invalid YAML, more than one
    document, an undefined alias, or nesting deeper than :data:`MAX_DEPTH`.
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
    # each open collection: (node, its children so far)
    stack: list[tuple[Any, list[yaml.Node]]] = []
    root: yaml.Node | None = None
    while root is None:
        event: Any = loader.get_event()
        mark: Any = event.start_mark  # libyaml's marks are a class of their own
        end: Any = event.end_mark
        node: yaml.Node | None = None
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", mark
                )
            node = anchors[event.anchor]
        elif isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, mark, end, style=event.style)
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
            stack.append((collection, []))
            continue
        else:  # the end of the innermost collection
            collection, children = stack.pop()
            collection.end_mark = end
            if isinstance(collection, yaml.MappingNode):
                collection.value = list(zip(children[::2], children[1::2], strict=True))
            else:
                collection.value = children
            node = collection
        if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            anchors[event.anchor] = node
        if stack:
            stack[-1][1].append(node)
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
