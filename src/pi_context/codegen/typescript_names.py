"""The names and literals the TypeScript generators share: string literals, object keys and
member reads, a spec's exported type names (``ResetControlState`` …) and the TypeScript type
of a spec field."""

from __future__ import annotations

import json
import re

from pi_context.codegen.naming import pascal
from pi_context.spec import model as m

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def q(text: str) -> str:
    """A TypeScript string literal."""
    return json.dumps(text, ensure_ascii=False)


def key(name: str) -> str:
    """An object key: bare when it is an identifier."""
    return name if _IDENT.fullmatch(name) else q(name)


def member(obj: str, name: str) -> str:
    """A member read: ``obj.name``, or ``obj["name"]`` when it is not an identifier."""
    return f"{obj}.{name}" if _IDENT.fullmatch(name) else f"{obj}[{q(name)}]"


def camel(name: str) -> str:
    p = pascal(name)
    return p[:1].lower() + p[1:]


class Names:
    """The exported type names of one spec's module, from its prefix (``ResetControl``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.state, self.event, self.effect, self.result = (
            prefix + kind for kind in ("State", "Event", "Effect", "Result")
        )

    def axis(self, name: str) -> str:
        return f"{self.prefix}{pascal(name)}"


def comment(text: str, indent: str = "") -> list[str]:
    """A one-line doc comment, or nothing for no text."""
    text = " ".join(text.split())
    return [f"{indent}/** {text} */"] if text else []


def type_of(spec: m.Spec, t: m.FieldType) -> str:
    """The TypeScript type of a field: its declared type's name, or the literal union."""
    if t == m.BOOL:
        return "boolean"
    assert isinstance(t, m.EnumType | m.IdType | m.TextType)
    if any(d.name == t.name for d in spec.types):
        return pascal(t.name)
    if isinstance(t, m.EnumType):
        return " | ".join(q(v) for v in t.values)
    return "string"


def field_key(f: m.Field) -> str:
    """A record member's key: optional (``prompt?``) for a text, which may be absent."""
    return key(f.name) + ("?" if isinstance(f.type, m.TextType) else "")


def facts_type(event: m.Event) -> str:
    return pascal(event.name) + "Facts"


def event_type(event: m.Event) -> str:
    return pascal(event.name) + "Event"
