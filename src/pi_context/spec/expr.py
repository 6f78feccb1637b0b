"""The guard language: a small, safe boolean expression language (no ``eval``).

Grammar (lowest precedence first)::

    expr   := and ("or" and)*
    and    := not ("and" not)*
    not    := "not" not | cmp
    cmp    := atom (("==" | "!=") atom | "in" "[" atom ("," atom)* "]")?
    atom   := "true" | "false" | STRING | PATH | "(" expr ")"

An expression nests at most :data:`MAX_DEPTH` levels, counting each parenthesis, each
``not`` and each ``and``/``or`` term: every later stage (checker, evaluator, printer, code
generators) walks the tree recursively, and the limit keeps those walks far from Python's
recursion limit whatever a spec file contains.

Paths name state axes (``request.phase``, ``overflow``), event payload (``event.windowId``),
facts (``facts.queued``) and, in invariants, ``pre``/``post``/``effect``/``event.type``. The
checker (:mod:`pi_context.spec.scope`) resolves every path against a spec and types every
node; a variant field that the current variant lacks is *absent*, and absent compares unequal
to everything. This module needs nothing of the spec model: the model refers to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal


class ExprError(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


# ---------------------------------------------------------------- syntax


@dataclass
class Lit:
    value: bool | str
    offset: int


@dataclass
class Ref:
    path: tuple[str, ...]
    offset: int
    target: Target | None = None  # set by the checker


@dataclass
class Not:
    operand: Expr
    offset: int


@dataclass
class BoolOp:
    op: Literal["and", "or"]
    left: Expr
    right: Expr
    offset: int


@dataclass
class Cmp:
    op: Literal["==", "!="]
    left: Expr
    right: Expr
    offset: int


@dataclass
class In:
    operand: Expr
    items: tuple[Lit, ...]
    offset: int


Expr = Lit | Ref | Not | BoolOp | Cmp | In

_KEYWORDS = {"and", "or", "not", "in", "true", "false"}
MAX_DEPTH = 64  # nesting levels an expression may use; real guards use fewer than ten


@dataclass(frozen=True)
class _Tok:
    kind: str  # "name" | "str" | "op" | "kw" | "end"
    text: str
    offset: int


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isalpha() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "_."):
                j += 1
            word = text[i:j]
            if word.endswith(".") or ".." in word:
                raise ExprError(f"malformed name {word!r}", i)
            toks.append(_Tok("kw" if word in _KEYWORDS else "name", word, i))
            i = j
        elif c in "'\"":
            j = text.find(c, i + 1)
            if j < 0:
                raise ExprError("unterminated string", i)
            toks.append(_Tok("str", text[i + 1 : j], i))
            i = j + 1
        elif text.startswith(("==", "!="), i):
            toks.append(_Tok("op", text[i : i + 2], i))
            i += 2
        elif c in "()[],":
            toks.append(_Tok("op", c, i))
            i += 1
        else:
            hint = " (use == for equality)" if c == "=" else ""
            hint = " (use 'not', 'and', 'or')" if c in "!&|" else hint
            raise ExprError(f"unexpected character {c!r}{hint}", i)
    toks.append(_Tok("end", "", len(text)))
    return toks


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokenize(text)
        self.pos = 0
        self.depth = 0

    def deeper(self, tok: _Tok, levels: int = 1) -> None:
        self.depth += levels
        if self.depth > MAX_DEPTH:
            raise ExprError(
                f"expression nests more than {MAX_DEPTH} levels (parentheses, 'not' and "
                f"chained 'and'/'or' terms count); split it up",
                tok.offset,
            )

    def peek(self) -> _Tok:
        return self.toks[self.pos]

    def take(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def expect(self, text: str) -> _Tok:
        tok = self.take()
        if tok.text != text or tok.kind not in ("op", "kw"):
            found = "end of expression" if tok.kind == "end" else repr(tok.text)
            raise ExprError(f"expected {text!r}, found {found}", tok.offset)
        return tok

    def parse(self) -> Expr:
        expr = self.or_()
        tok = self.peek()
        if tok.kind != "end":
            raise ExprError(f"unexpected {tok.text!r} after a complete expression", tok.offset)
        return expr

    def or_(self) -> Expr:
        return self.chain("or", self.and_)

    def and_(self) -> Expr:
        return self.chain("and", self.not_)

    def chain(self, op: Literal["and", "or"], term: Callable[[], Expr]) -> Expr:
        """``term (op term)*``, grouped from the left."""
        left = term()
        terms = 0
        while self.peek().kind == "kw" and self.peek().text == op:
            tok = self.take()
            self.deeper(tok)  # each term nests the chain one level deeper
            terms += 1
            left = BoolOp(op, left, term(), tok.offset)
        self.depth -= terms
        return left

    def not_(self) -> Expr:
        tok = self.peek()
        if tok.kind == "kw" and tok.text == "not":
            self.take()
            self.deeper(tok)
            operand = self.not_()
            self.depth -= 1
            return Not(operand, tok.offset)
        return self.cmp()

    def cmp(self) -> Expr:
        left = self.atom()
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("==", "!="):
            self.take()
            op: Literal["==", "!="] = "==" if tok.text == "==" else "!="
            return Cmp(op, left, self.atom(), tok.offset)
        if tok.kind == "kw" and tok.text == "in":
            self.take()
            self.expect("[")
            items: list[Lit] = []
            while True:
                item = self.atom()
                if not isinstance(item, Lit) or not isinstance(item.value, str):
                    raise ExprError("'in' lists hold string literals only", _offset(item))
                items.append(item)
                if self.peek().text == "]":
                    self.take()
                    break
                self.expect(",")
            return In(left, tuple(items), tok.offset)
        return left

    def atom(self) -> Expr:
        tok = self.take()
        if tok.kind == "kw" and tok.text in ("true", "false"):
            return Lit(tok.text == "true", tok.offset)
        if tok.kind == "str":
            return Lit(tok.text, tok.offset)
        if tok.kind == "name":
            return Ref(tuple(tok.text.split(".")), tok.offset)
        if tok.kind == "op" and tok.text == "(":
            self.deeper(tok)
            inner = self.or_()
            self.expect(")")
            self.depth -= 1
            return inner
        found = "end of expression" if tok.kind == "end" else repr(tok.text)
        raise ExprError(f"expected a value, found {found}", tok.offset)


def parse(text: str) -> Expr:
    return _Parser(text).parse()


def _offset(expr: Expr) -> int:
    return expr.offset


# ---------------------------------------------------------------- resolved references


@dataclass(frozen=True)
class Target:
    """What a path denotes at run time.

    kind: ``axis`` (of state ``where``: cur/pre/post, with optional ``member``), ``state``
    (the whole state ``where``), ``field`` (event payload), ``fact``, ``effect``,
    ``event_type``.
    """

    kind: Literal["axis", "state", "field", "fact", "effect", "event_type"]
    where: str = ""
    name: str = ""
    member: str | None = None
    lazy: bool = False
    text: bool = False  # an optional text: a condition reads whether it is present


# ---------------------------------------------------------------- evaluation


class _Absent:
    """A variant field the current variant does not carry."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()
Value = Any  # bool | str | wire dict | ABSENT


def evaluate(expr: Expr, lookup: Callable[[Target], Value]) -> Value:
    """Evaluate a checked expression; ``and``/``or`` short-circuit left to right, which is
    what makes lazy facts lazy."""
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Ref):
        assert expr.target is not None, "expression was not checked"
        value = lookup(expr.target)
        return value is not None and value is not ABSENT if expr.target.text else value
    if isinstance(expr, Not):
        return not evaluate(expr.operand, lookup)
    if isinstance(expr, BoolOp):
        left = evaluate(expr.left, lookup)
        if expr.op == "and":
            return evaluate(expr.right, lookup) if left else False
        return True if left else evaluate(expr.right, lookup)
    if isinstance(expr, Cmp):
        lv, rv = evaluate(expr.left, lookup), evaluate(expr.right, lookup)
        if lv is ABSENT or rv is ABSENT:
            return expr.op == "!="
        return (lv == rv) if expr.op == "==" else (lv != rv)
    value = evaluate(expr.operand, lookup)
    return value is not ABSENT and value in {item.value for item in expr.items}


def value_of(expr: Expr, lookup: Callable[[Target], Value]) -> Value:
    """The value an expression gives a next-state field or a carried value: a reference's
    own value (a text as the text, not whether it is present), anything else evaluated."""
    if isinstance(expr, Ref):
        assert expr.target is not None, "expression was not checked"
        return lookup(expr.target)
    return evaluate(expr, lookup)


def refs(expr: Expr) -> list[Ref]:
    """Every reference in evaluation order (left to right)."""
    if isinstance(expr, Ref):
        return [expr]
    if isinstance(expr, Not):
        return refs(expr.operand)
    if isinstance(expr, BoolOp | Cmp):
        return refs(expr.left) + refs(expr.right)
    if isinstance(expr, In):
        return refs(expr.operand)
    return []


def conjuncts(expr: Expr) -> list[Expr]:
    """The top-level ``and`` operands (a guard's conjuncts)."""
    if isinstance(expr, BoolOp) and expr.op == "and":
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def render(expr: Expr) -> str:
    """Canonical source text (used by docs and mutants): it parses back to the same tree.

    Brackets are kept wherever the grammar needs them: around a comparison or boolean
    operand of ``==``/``!=``/``in`` (those take atoms), around the operand of ``not`` unless
    it is an atom or another ``not``, around a mixed ``and``/``or`` operand, and around a
    same-operator right operand (the parser nests chains to the left).
    """
    if isinstance(expr, Lit):
        if isinstance(expr.value, bool):
            return "true" if expr.value else "false"
        return _quote(expr.value)
    if isinstance(expr, Ref):
        return ".".join(expr.path)
    if isinstance(expr, Not):
        inner = render(expr.operand)
        return f"not {inner}" if isinstance(expr.operand, Ref | Not | Lit) else f"not ({inner})"
    if isinstance(expr, BoolOp):
        left, right = render(expr.left), render(expr.right)
        if isinstance(expr.left, BoolOp) and expr.left.op != expr.op:
            left = f"({left})"
        if isinstance(expr.right, BoolOp):
            right = f"({right})"
        return f"{left} {expr.op} {right}"
    if isinstance(expr, Cmp):
        return f"{_atom(expr.left)} {expr.op} {_atom(expr.right)}"
    items = ", ".join(_quote(str(i.value)) for i in expr.items)
    return f"{_atom(expr.operand)} in [{items}]"


def _atom(expr: Expr) -> str:
    text = render(expr)
    return text if isinstance(expr, Lit | Ref) else f"({text})"


def _quote(value: str) -> str:
    """A string literal: the language has no escapes, so pick the quote the value lacks."""
    return f"'{value}'" if "'" not in value else f'"{value}"'


# ---------------------------------------------------------------- Python code generation


def snake(name: str) -> str:
    """camelCase / kebab-case / dotted name to a Python identifier."""
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (name[i - 1].islower() or name[i - 1].isdigit()):
            out.append("_")
        out.append("_" if ch in "-." else ch.lower())
    return "".join(out)


def to_python(
    expr: Expr, names: Mapping[str, str], lazy: Callable[[str], str], *, value: bool = False
) -> str:
    """Compile a checked guard to a Python expression over the generated types.

    ``names`` maps "state"/"event"/"facts" to the variables holding them; ``lazy(fact)``
    renders a memoised read of a lazy fact. Absent variant fields are ``None`` class
    attributes in the generated types, so ``==``/``!=`` keep the absent semantics.
    """

    def ref(t: Target, parent: int) -> str:
        if t.text:
            # a text is read trimmed (None when empty); a condition asks whether it is present
            where = names["state"] if t.kind == "axis" else names["event"]
            name = (
                snake(t.name) if t.kind == "field" else f"{snake(t.name)}.{snake(t.member or '')}"
            )
            read = f"_text({where}.{name})"
            return read if value else parenthesised(f"{read} is not None", parent)
        if t.kind == "axis":
            base = f"{names['state']}.{snake(t.name)}"
            return base if t.member is None else f"{base}.{snake(t.member)}"
        if t.kind == "field":
            return f"{names['event']}.{snake(t.name)}"
        if t.kind == "fact" and t.lazy:
            # a memoised read is a conditional expression: parenthesise inside operators
            return parenthesised(lazy(t.name), parent)
        if t.kind == "fact":
            return f"{names['facts']}.{snake(t.name)}"
        raise AssertionError(f"{t.kind} is not available in guards")

    return compile_python(expr, ref)


def parenthesised(text: str, parent: int) -> str:
    """``text`` as an operand: in brackets when it sits inside an operator."""
    return f"({text})" if parent > 0 else text


def compile_python(expr: Expr, ref: Callable[[Target, int], str]) -> str:
    """A checked expression as Python source; ``ref(target, parent)`` renders each reference
    (``parent`` is the binding strength around it: 0 at the top, more inside operators)."""

    def go(e: Expr, parent: int) -> str:
        # precedence: or=1, and=2, not=3, cmp=4, atom=5
        if isinstance(e, Lit):
            return repr(e.value) if isinstance(e.value, str) else ("True" if e.value else "False")
        if isinstance(e, Ref):
            assert e.target is not None
            return ref(e.target, parent)
        if isinstance(e, Not):
            text, prec = f"not {go(e.operand, 3)}", 3
        elif isinstance(e, BoolOp):
            prec = 1 if e.op == "or" else 2
            text = f"{go(e.left, prec)} {e.op} {go(e.right, prec + 1)}"
        elif isinstance(e, Cmp):
            prec = 4
            text = f"{go(e.left, 5)} {e.op} {go(e.right, 5)}"
        else:
            prec = 4
            items = ", ".join(repr(i.value) for i in e.items)
            comma = "," if len(e.items) == 1 else ""  # a one-item tuple needs its comma
            text = f"{go(e.operand, 5)} in ({items}{comma})"
        return f"({text})" if prec < parent else text

    return go(expr, 0)
