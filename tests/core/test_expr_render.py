"""The expression printer: every rendered guard and invariant parses back to the same tree."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.spec import expr as ex
from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import committed_specs


def shape(e: ex.Expr) -> Any:
    """The tree without source offsets or resolved targets."""
    if isinstance(e, ex.Lit):
        return ("lit", e.value)
    if isinstance(e, ex.Ref):
        return ("ref", e.path)
    if isinstance(e, ex.Not):
        return ("not", shape(e.operand))
    if isinstance(e, ex.BoolOp | ex.Cmp):
        return (e.op, shape(e.left), shape(e.right))
    return ("in", shape(e.operand), tuple(i.value for i in e.items))


names = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n not in {"and", "or", "not", "in", "true", "false"}
)
paths = st.lists(names, min_size=1, max_size=3).map(lambda p: ex.Ref(tuple(p), 0))
# the language has no escapes: a literal holds one kind of quote at most
strings = st.text(st.characters(blacklist_characters="'\"\n"), max_size=6) | st.text(
    st.sampled_from("ab'\\ -"), max_size=5
)
literals = st.booleans().map(lambda b: ex.Lit(b, 0)) | strings.map(lambda s: ex.Lit(s, 0))
leaves = paths | literals


def extend(children: st.SearchStrategy[ex.Expr]) -> st.SearchStrategy[ex.Expr]:
    return st.one_of(
        children.map(lambda c: ex.Not(c, 0)),
        st.builds(
            lambda op, a, b: ex.BoolOp(op, a, b, 0),
            st.sampled_from(["and", "or"]),
            children,
            children,
        ),
        st.builds(
            lambda op, a, b: ex.Cmp(op, a, b, 0), st.sampled_from(["==", "!="]), children, children
        ),
        st.builds(
            lambda a, items: ex.In(a, tuple(ex.Lit(i, 0) for i in items), 0),
            children,
            st.lists(strings, min_size=1, max_size=3),
        ),
    )


trees = st.recursive(leaves, extend, max_leaves=12)


@settings(max_examples=400, database=None)
@given(trees)
def test_render_parses_back_to_the_same_tree(tree: ex.Expr) -> None:
    text = ex.render(tree)
    assert shape(ex.parse(text)) == shape(tree), text


def test_the_reported_invariant_keeps_its_brackets() -> None:
    text = "(effect == 'already-pending') == (pre.request == post.request)"
    tree = ex.parse(text)
    assert ex.render(tree) == text
    assert shape(ex.parse(ex.render(tree))) == shape(tree)


def _spec_exprs(spec: Spec) -> list[ex.Expr]:
    out: list[ex.Expr] = [row.guard for row in spec.rows]
    out += [inv.expr for inv in spec.state_invariants]
    for tinv in spec.transition_invariants:
        out += [tinv.then] + ([tinv.when] if tinv.when is not None else [])
    return out


def test_every_committed_guard_and_invariant_round_trips() -> None:
    exprs = [e for spec in committed_specs() for e in _spec_exprs(spec)]
    assert len(exprs) > 40
    for e in exprs:
        assert shape(ex.parse(ex.render(e))) == shape(e), ex.render(e)
