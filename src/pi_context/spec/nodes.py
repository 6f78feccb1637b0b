"""A spec's YAML nodes read with located errors: the typed access every part of the loader
uses (a mapping with known keys, a list, a single value), and guard expressions parsed and
type-checked at their ``file:line:col``.

A problem is collected as a :class:`~pi_context.spec.errors.Diagnostic`; :class:`Bail` stops
the load after a structural one, when nothing further can be read.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from pi_context.spec import expr as ex
from pi_context.spec import scope as sc
from pi_context.spec.errors import Diagnostic
from pi_context.spec.model import Loc

Node = yaml.Node
Entries = dict[str, tuple[Node, Node]]
"""A mapping node's entries by key: (key node, value node)."""


class Bail(Exception):
    """Stop after structural errors; the diagnostics are already collected."""


@dataclass
class Ctx:
    file: str
    diagnostics: list[Diagnostic]

    def loc(self, node: Node) -> Loc:
        return Loc(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def error(self, node: Node | Loc, message: str) -> None:
        loc = node if isinstance(node, Loc) else self.loc(node)
        self.diagnostics.append(Diagnostic(loc, message))

    def fail(self, node: Node | Loc, message: str) -> Bail:
        self.error(node, message)
        return Bail()

    # -- typed node access -------------------------------------------------

    def mapping(self, node: Node, what: str) -> Entries:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: Entries = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise self.fail(key, f"{what}: keys must be plain names")
            if key.value in out:
                raise self.fail(key, f"{what}: duplicate key {key.value!r}")
            out[key.value] = (key, value)
        return out

    def seq(self, node: Node, what: str) -> list[Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{what} must be a list")
        return list(node.value)

    def scalar(self, node: Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{what} must be a single value")
        return str(node.value)

    def names(self, node: Node, what: str) -> list[str]:
        return [self.scalar(n, what) for n in self.seq(node, what)]

    def keys(
        self,
        node: Node,
        what: str,
        required: tuple[str, ...],
        optional: tuple[str, ...] = (),
    ) -> Entries:
        m = self.mapping(node, what)
        for key, (knode, _) in m.items():
            if key not in required and key not in optional:
                allowed = ", ".join(required + optional)
                raise self.fail(knode, f"{what}: unknown key {key!r} (allowed: {allowed})")
        for key in required:
            if key not in m:
                raise self.fail(node, f"{what}: missing key {key!r}")
        return m

    def flag(self, node: Node, what: str, invalid: str) -> bool:
        """A ``true`` or ``false`` value; ``invalid`` is the message for anything else."""
        value = self.scalar(node, what).lower()
        if value not in ("true", "false"):
            raise self.fail(node, invalid)
        return value == "true"

    def why(self, m: Entries) -> str:
        """The optional ``why`` of a mapping read by :meth:`keys` (empty when absent)."""
        return self.scalar(m["why"][1], "why") if "why" in m else ""


def expr_loc(ctx: Ctx, node: Node, offset: int) -> Loc:
    base = ctx.loc(node)
    style = getattr(node, "style", None)
    if style in ("|", ">"):
        return base  # folded text: the block indicator is the honest position
    return base.shifted(offset + (1 if style in ("'", '"') else 0))


def parse_expr(ctx: Ctx, node: Node, what: str) -> tuple[ex.Expr, str]:
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":bool"):
        text = str(node.value).lower()
    else:
        text = ctx.scalar(node, what)
    try:
        return ex.parse(text), text
    except ex.ExprError as err:
        raise ctx.fail(expr_loc(ctx, node, err.offset), f"{what}: {err.message}") from None


def check_expr(ctx: Ctx, node: Node, e: ex.Expr, scope: sc.Scope, what: str) -> bool:
    try:
        t = sc.check(e, scope)
    except ex.ExprError as err:
        ctx.error(expr_loc(ctx, node, err.offset), f"{what}: {err.message}")
        return False
    if not sc.is_condition(t):
        ctx.error(node, f"{what}: must be a condition (bool)")
        return False
    return True
