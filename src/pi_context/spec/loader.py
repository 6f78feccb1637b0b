"""Load a spec file: YAML (with positions) → checked :class:`Spec`.

Every problem becomes a ``file:line:col`` diagnostic; nothing here raises a traceback at a
spec author. After the structure and the guard types check out, the finite abstraction is
enumerated to find rows no input can reach (shadowed) and inputs no row matches.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from pi_context.regular import read_regular
from pi_context.spec import expr as ex
from pi_context.spec import scope as sc
from pi_context.spec.errors import Diagnostic, SpecError
from pi_context.spec.model import (
    BOOL,
    EVENT_SCOPES,
    HOST_ACTIONS,
    Axis,
    Cause,
    Effect,
    Embedding,
    EnumAxis,
    EnumType,
    Event,
    Field,
    FieldType,
    IdType,
    Loc,
    MonitorStep,
    NextCase,
    NextLiteral,
    NextValue,
    NextVariant,
    Provenance,
    Refinement,
    Row,
    Spec,
    StateInvariant,
    TraceProperty,
    TransitionInvariant,
    Variant,
    VariantAxis,
)
from pi_context.spec.yamlcompose import compose

SPEC_MAX_BYTES = 4 << 20
"""Largest spec file read (the published specs are under 100 KB)."""

_Node = yaml.Node


class _Bail(Exception):
    """Stop after structural errors; the diagnostics are already collected."""


@dataclass
class _Ctx:
    file: str
    diagnostics: list[Diagnostic]

    def loc(self, node: _Node) -> Loc:
        return Loc(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def error(self, node: _Node | Loc, message: str) -> None:
        loc = node if isinstance(node, Loc) else self.loc(node)
        self.diagnostics.append(Diagnostic(loc, message))

    def fail(self, node: _Node | Loc, message: str) -> _Bail:
        self.error(node, message)
        return _Bail()

    # -- typed node access -------------------------------------------------

    def mapping(self, node: _Node, what: str) -> dict[str, tuple[_Node, _Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, tuple[_Node, _Node]] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise self.fail(key, f"{what}: keys must be plain names")
            if key.value in out:
                raise self.fail(key, f"{what}: duplicate key {key.value!r}")
            out[key.value] = (key, value)
        return out

    def seq(self, node: _Node, what: str) -> list[_Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{what} must be a list")
        return list(node.value)

    def scalar(self, node: _Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{what} must be a single value")
        return str(node.value)

    def names(self, node: _Node, what: str) -> list[str]:
        return [self.scalar(n, what) for n in self.seq(node, what)]

    def keys(
        self,
        node: _Node,
        what: str,
        required: tuple[str, ...],
        optional: tuple[str, ...] = (),
    ) -> dict[str, tuple[_Node, _Node]]:
        m = self.mapping(node, what)
        for key, (knode, _) in m.items():
            if key not in required and key not in optional:
                allowed = ", ".join(required + optional)
                raise self.fail(knode, f"{what}: unknown key {key!r} (allowed: {allowed})")
        for key in required:
            if key not in m:
                raise self.fail(node, f"{what}: missing key {key!r}")
        return m


def _expr_loc(ctx: _Ctx, node: _Node, offset: int) -> Loc:
    base = ctx.loc(node)
    style = getattr(node, "style", None)
    if style in ("|", ">"):
        return base  # folded text: the block indicator is the honest position
    return base.shifted(offset + (1 if style in ("'", '"') else 0))


def _parse_expr(ctx: _Ctx, node: _Node, what: str) -> tuple[ex.Expr, str]:
    if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":bool"):
        text = str(node.value).lower()
    else:
        text = ctx.scalar(node, what)
    try:
        return ex.parse(text), text
    except ex.ExprError as err:
        raise ctx.fail(_expr_loc(ctx, node, err.offset), f"{what}: {err.message}") from None


def _check_expr(ctx: _Ctx, node: _Node, e: ex.Expr, scope: sc.Scope, what: str) -> bool:
    try:
        t = sc.check(e, scope)
    except ex.ExprError as err:
        ctx.error(_expr_loc(ctx, node, err.offset), f"{what}: {err.message}")
        return False
    if not isinstance(t, type(BOOL)):
        ctx.error(node, f"{what}: must be a condition (bool)")
        return False
    return True


def load(path: str | Path, *, analyse: bool = True) -> Spec:
    """Load and check a spec file. Raises :class:`SpecError` with every diagnostic."""
    path = Path(path)
    file = str(path)
    try:  # a regular file only, and only so much of it (a FIFO or /dev/zero never ends)
        raw = read_regular(path, SPEC_MAX_BYTES + 1)
    except OSError as err:
        raise SpecError(
            [Diagnostic(Loc(file, 1, 1), f"cannot read spec: {err.strerror}")]
        ) from None
    if len(raw) > SPEC_MAX_BYTES:
        message = f"spec is larger than {SPEC_MAX_BYTES} bytes (the limit)"
        raise SpecError([Diagnostic(Loc(file, 1, 1), message)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise SpecError([Diagnostic(Loc(file, line, 1), "spec is not valid UTF-8")]) from None
    return loads(text, file=file, sha256=hashlib.sha256(raw).hexdigest(), analyse=analyse)


def loads(
    text: str, *, file: str = "<spec>", sha256: str | None = None, analyse: bool = True
) -> Spec:
    ctx = _Ctx(file, [])
    try:
        root = compose(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        loc = Loc(file, mark.line + 1, mark.column + 1) if mark else Loc(file, 1, 1)
        problem = err.problem or err.context or "invalid YAML"
        raise SpecError([Diagnostic(loc, f"invalid YAML: {problem}")]) from None
    except yaml.YAMLError as err:
        raise SpecError([Diagnostic(Loc(file, 1, 1), f"invalid YAML: {err}")]) from None
    if root is None:
        raise SpecError([Diagnostic(Loc(file, 1, 1), "spec is empty")])
    digest = sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        spec = _build(ctx, root, digest)
    except _Bail:
        raise SpecError(ctx.diagnostics) from None
    if ctx.diagnostics:
        raise SpecError(ctx.diagnostics)
    if analyse:
        from pi_context.spec.analysis import table_diagnostics

        problems = table_diagnostics(spec)
        if problems:
            raise SpecError(problems)
    return spec


def _build(ctx: _Ctx, root: _Node, digest: str) -> Spec:
    top = ctx.keys(
        root,
        "spec",
        ("spec", "version", "axes", "initial", "events", "effects", "rows"),
        ("title", "types", "invariants", "reachability", "refines", "provenance"),
    )
    name = ctx.scalar(top["spec"][1], "spec")
    version = ctx.scalar(top["version"][1], "version")
    title = ctx.scalar(top["title"][1], "title") if "title" in top else f"{name}@{version}"

    types: dict[str, EnumType | IdType] = {}
    if "types" in top:
        for tname, (knode, tnode) in ctx.mapping(top["types"][1], "types").items():
            types[tname] = _type_decl(ctx, tname, knode, tnode)

    axes = [_axis(ctx, n, k, v, types) for n, (k, v) in ctx.mapping(top["axes"][1], "axes").items()]
    if not axes:
        raise ctx.fail(top["axes"][1], "a spec needs at least one state axis")
    events = [
        _event(ctx, n, k, v, types) for n, (k, v) in ctx.mapping(top["events"][1], "events").items()
    ]
    effects = [
        _effect(ctx, n, k, v) for n, (k, v) in ctx.mapping(top["effects"][1], "effects").items()
    ]
    spec = Spec(
        id=f"{name}@{version}",
        name=name,
        version=version,
        title=title,
        path=ctx.file,
        sha256=digest,
        types=tuple(types.values()),
        axes=tuple(axes),
        initial={},
        events=tuple(events),
        effects=tuple(effects),
        rows=(),
        state_invariants=(),
        transition_invariants=(),
        traces=(),
    )
    initial = _initial(ctx, spec, top["initial"][1])
    rows = _rows(ctx, spec, top["rows"][1])
    sinv: list[StateInvariant] = []
    tinv: list[TransitionInvariant] = []
    traces: list[TraceProperty] = []
    if "invariants" in top:
        sinv, tinv, traces = _invariants(ctx, spec, top["invariants"][1])
    expect_all, reach_why = False, ""
    if "reachability" in top:
        r = ctx.keys(top["reachability"][1], "reachability", ("expect_all",), ("why",))
        expect_all = ctx.scalar(r["expect_all"][1], "expect_all").lower() == "true"
        reach_why = ctx.scalar(r["why"][1], "why") if "why" in r else ""
    return Spec(
        **{
            **spec.__dict__,
            "initial": initial,
            "rows": tuple(rows),
            "state_invariants": tuple(sinv),
            "transition_invariants": tuple(tinv),
            "traces": tuple(traces),
            "expect_all_reachable": expect_all,
            "reachability_why": reach_why,
            "refines": _refines(ctx, spec, top["refines"][1]) if "refines" in top else None,
            "provenance": (_provenance(ctx, top["provenance"][1]) if "provenance" in top else None),
        }
    )


def _effect(ctx: _Ctx, name: str, knode: _Node, node: _Node) -> Effect:
    """``name: meaning`` or ``name: {meaning: ..., host: ACTION, duplicate: BOOL}``."""
    if isinstance(node, yaml.ScalarNode):
        return Effect(name, ctx.scalar(node, f"effect {name}"), ctx.loc(knode))
    m = ctx.keys(node, f"effect {name}", ("meaning", "host"), ("duplicate",))
    host = ctx.scalar(m["host"][1], f"effect {name} host")
    if host not in HOST_ACTIONS:
        raise ctx.fail(
            m["host"][1],
            f"effect {name}: unknown host action {host!r} (one of: {', '.join(HOST_ACTIONS)})",
        )
    duplicate = False
    if "duplicate" in m:
        flag = ctx.scalar(m["duplicate"][1], f"effect {name} duplicate").lower()
        if flag not in ("true", "false"):
            raise ctx.fail(m["duplicate"][1], f"effect {name}: duplicate must be true or false")
        duplicate = flag == "true"
        if duplicate and host != "acknowledge":
            raise ctx.fail(
                m["duplicate"][1],
                f"effect {name}: only an acknowledged request can be a duplicate "
                f"(its host action is {host!r})",
            )
    return Effect(
        name,
        ctx.scalar(m["meaning"][1], f"effect {name} meaning"),
        ctx.loc(knode),
        host,
        duplicate,
    )


def _cause(ctx: _Ctx, spec: Spec, rid: str, node: _Node) -> Cause:
    """``cause: TEXT`` or ``cause: {by: AXIS[.FIELD], cases: {VALUE: TEXT, ...}, otherwise:
    TEXT}`` (``otherwise`` is optional)."""
    what = f"row {rid}: cause"
    if isinstance(node, yaml.ScalarNode):
        text = ctx.scalar(node, what).strip()
        if not text:
            raise ctx.fail(node, f"{what} must not be empty")
        return Cause(text)
    m = ctx.keys(node, what, ("by", "cases"), ("otherwise",))
    by = ctx.scalar(m["by"][1], f"{what} by")
    axis_name, _, member = by.partition(".")
    axis = spec.axis(axis_name)
    values: tuple[str, ...]
    if isinstance(axis, EnumAxis) and not member:
        values = axis.type.values
    elif isinstance(axis, VariantAxis) and member:
        ftype = axis.field_type(member)
        if not isinstance(ftype, EnumType):
            raise ctx.fail(
                m["by"][1], f"{what}: {by!r} is not an enumerated field of axis {axis_name!r}"
            )
        values = ftype.values
    else:
        raise ctx.fail(
            m["by"][1],
            f"{what}: by must name an enum axis or a variant axis field (AXIS.FIELD), got {by!r}",
        )
    cases: list[tuple[str, str]] = []
    for value, (vk, vnode) in ctx.mapping(m["cases"][1], f"{what} cases").items():
        if value not in values:
            raise ctx.fail(vk, f"{what}: {value!r} is not a value of {by} ({', '.join(values)})")
        text = ctx.scalar(vnode, f"{what} {value}").strip()
        if not text:
            raise ctx.fail(vnode, f"{what} {value} must not be empty")
        cases.append((value, text))
    if not cases:
        raise ctx.fail(m["cases"][1], f"{what}: cases needs at least one value")
    otherwise = None
    if "otherwise" in m:
        otherwise = ctx.scalar(m["otherwise"][1], f"{what} otherwise").strip()
        if not otherwise:
            raise ctx.fail(m["otherwise"][1], f"{what} otherwise must not be empty")
    return Cause(axis=axis_name, member=member or None, cases=tuple(cases), otherwise=otherwise)


def _refines(ctx: _Ctx, spec: Spec, node: _Node) -> Refinement:
    """``refines: {spec: ID, drop: {axis: {variant: [fields]}}, map: {axis: {variant: base
    variant}}, why: ...}``."""
    m = ctx.keys(node, "refines", ("spec",), ("drop", "map", "embed", "why"))
    drops: list[tuple[str, str, tuple[str, ...]]] = []
    maps: list[tuple[str, str, str]] = []
    if "map" in m:
        for aname, (ak, anode) in ctx.mapping(m["map"][1], "refines map").items():
            axis = spec.axis(aname)
            if not isinstance(axis, VariantAxis):
                raise ctx.fail(ak, f"refines map: {aname!r} is not a variant axis")
            for tag, (tk, tnode) in ctx.mapping(anode, f"refines map {aname}").items():
                if axis.variant(tag) is None:
                    raise ctx.fail(tk, f"refines map: {aname} has no variant {tag!r}")
                maps.append((aname, tag, ctx.scalar(tnode, f"refines map {aname}.{tag}")))
    if "drop" in m:
        for aname, (ak, anode) in ctx.mapping(m["drop"][1], "refines drop").items():
            axis = spec.axis(aname)
            if not isinstance(axis, VariantAxis):
                raise ctx.fail(ak, f"refines drop: {aname!r} is not a variant axis")
            for tag, (tk, fnode) in ctx.mapping(anode, f"refines drop {aname}").items():
                variant = axis.variant(tag)
                if variant is None:
                    raise ctx.fail(tk, f"refines drop: {aname} has no variant {tag!r}")
                fields = ctx.names(fnode, f"refines drop {aname}.{tag}")
                for f in fields:
                    if variant.field(f) is None:
                        raise ctx.fail(fnode, f"refines drop: variant {tag!r} has no field {f!r}")
                drops.append((aname, tag, tuple(fields)))
    return Refinement(
        ctx.scalar(m["spec"][1], "refines spec"),
        tuple(drops),
        _why(ctx, m),
        ctx.loc(node),
        tuple(maps),
        _embed(ctx, m["embed"][1]) if "embed" in m else None,
    )


def _plain(ctx: _Ctx, node: _Node, what: str) -> object:
    """A YAML value as a wire value: mappings, lists, booleans and strings."""
    if isinstance(node, yaml.MappingNode):
        return {k: _plain(ctx, v, f"{what}.{k}") for k, (_, v) in ctx.mapping(node, what).items()}
    if isinstance(node, yaml.SequenceNode):
        return [_plain(ctx, v, what) for v in node.value]
    if node.tag.endswith(":bool"):
        return str(node.value).lower() == "true"
    return ctx.scalar(node, what)


def _pairs(ctx: _Ctx, node: _Node, what: str) -> tuple[tuple[str, object], ...]:
    return tuple(
        (k, _plain(ctx, v, f"{what}.{k}")) for k, (_, v) in ctx.mapping(node, what).items()
    )


def _embed(ctx: _Ctx, node: _Node) -> Embedding:
    """``embed: {states: {axis: {base value: value}}, events: {base event: wire event},
    facts: {base event: {fact: value | facts.<base fact>}}, effects: {base: effect}}``; the
    diff checks each translated case against both specs."""
    m = ctx.keys(node, "refines embed", (), ("states", "events", "facts", "effects"))

    def nested(key: str) -> tuple[tuple[str, tuple[tuple[str, object], ...]], ...]:
        if key not in m:
            return ()
        items = ctx.mapping(m[key][1], f"refines embed {key}").items()
        return tuple((k, _pairs(ctx, v, f"refines embed {key}.{k}")) for k, (_, v) in items)

    effects = tuple(
        (k, str(v)) for k, v in (_pairs(ctx, m["effects"][1], "effects") if "effects" in m else ())
    )
    events = _pairs(ctx, m["events"][1], "refines embed events") if "events" in m else ()
    for name, wire in events:
        if not isinstance(wire, dict) or not isinstance(wire.get("type"), str):
            raise ctx.fail(
                m["events"][1], f"refines embed events.{name}: needs a wire event with a type"
            )
    return Embedding(nested("states"), events, nested("facts"), effects, ctx.loc(node))


_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_RELEASE = re.compile(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _provenance(ctx: _Ctx, node: _Node) -> Provenance:
    """``provenance: {source: published, repository, path, release, commit, package, note}``
    or ``{source: ours, note}``; ``unknown`` where the stored sources name nothing, and then a
    note that says so."""
    m = ctx.keys(
        node,
        "provenance",
        ("source",),
        ("repository", "path", "release", "commit", "package", "note"),
    )
    source = ctx.scalar(m["source"][1], "provenance source")
    values = {k: ctx.scalar(v, f"provenance {k}") for k, (_, v) in m.items() if k != "source"}
    note = values.get("note", "").strip()
    if source == "ours":
        for key in ("repository", "path", "release", "commit", "package"):
            if key in m:
                raise ctx.fail(m[key][0], f"provenance: a spec of our own has no {key!r}")
        if not note:
            raise ctx.fail(node, "provenance: a spec of our own needs a 'note' saying what it is")
        return Provenance("ours", note=note, loc=ctx.loc(node))
    if source != "published":
        raise ctx.fail(
            m["source"][1], f"provenance source: {source!r} is not one of: published, ours"
        )
    for key in ("repository", "path", "release", "commit"):
        if key not in m:
            raise ctx.fail(node, f"provenance: missing key {key!r} (write 'unknown' if unnamed)")
    checks = (
        ("repository", _REPOSITORY, "an owner/name repository"),
        ("release", _RELEASE, "a release version such as 0.34.0"),
        ("commit", _COMMIT, "a full 40-digit lowercase commit hash"),
    )
    for key, pattern, what in checks:
        value = values[key]
        if value != "unknown" and not pattern.fullmatch(value):
            raise ctx.fail(m[key][1], f"provenance {key}: {value!r} is not {what} or 'unknown'")
    path = values["path"]
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise ctx.fail(m["path"][1], f"provenance path: {path!r} is not a path in the repository")
    unknown = [k for k in ("repository", "release", "commit") if values[k] == "unknown"]
    if unknown and not note:
        raise ctx.fail(node, f"provenance: {', '.join(unknown)} unknown; add a 'note' saying why")
    return Provenance(
        "published",
        values["repository"],
        path,
        values["release"],
        values["commit"],
        values.get("package", ""),
        note,
        ctx.loc(node),
    )


def _why(ctx: _Ctx, m: dict[str, tuple[_Node, _Node]]) -> str:
    return ctx.scalar(m["why"][1], "why") if "why" in m else ""


def _type_decl(ctx: _Ctx, name: str, knode: _Node, node: _Node) -> EnumType | IdType:
    m = ctx.keys(node, f"type {name}", ("kind",), ("values", "abstraction", "why"))
    kind = ctx.scalar(m["kind"][1], "kind")
    if kind == "enum":
        if "values" not in m:
            raise ctx.fail(node, f"type {name}: an enum needs 'values'")
        values = ctx.names(m["values"][1], f"type {name} values")
        _distinct(ctx, m["values"][1], values, f"type {name}")
        return EnumType(name, tuple(values), _why(ctx, m), ctx.loc(knode))
    if kind == "id":
        if "abstraction" not in m:
            raise ctx.fail(node, f"type {name}: an id type needs 'abstraction' representatives")
        reps = ctx.names(m["abstraction"][1], f"type {name} abstraction")
        _distinct(ctx, m["abstraction"][1], reps, f"type {name}")
        if len(reps) < 2:
            raise ctx.fail(m["abstraction"][1], f"type {name}: equality needs two representatives")
        return IdType(name, tuple(reps), _why(ctx, m), ctx.loc(knode))
    raise ctx.fail(m["kind"][1], f"type {name}: unknown kind {kind!r} (enum, id)")


def _distinct(ctx: _Ctx, node: _Node, values: list[str], what: str) -> None:
    if not values:
        raise ctx.fail(node, f"{what}: needs at least one value")
    seen: set[str] = set()
    for v in values:
        if v in seen:
            raise ctx.fail(node, f"{what}: duplicate value {v!r}")
        seen.add(v)


def _field_type(
    ctx: _Ctx, node: _Node, types: dict[str, EnumType | IdType], what: str
) -> FieldType:
    name = ctx.scalar(node, what)
    if name == "bool":
        return BOOL
    if name in types:
        return types[name]
    known = ", ".join(["bool", *types])
    raise ctx.fail(node, f"{what}: unknown type {name!r} (known: {known})")


def _axis(
    ctx: _Ctx, name: str, knode: _Node, node: _Node, types: dict[str, EnumType | IdType]
) -> Axis:
    m = ctx.keys(node, f"axis {name}", ("kind",), ("values", "tag", "variants", "why"))
    kind = ctx.scalar(m["kind"][1], "kind")
    if kind == "enum":
        if "values" not in m:
            raise ctx.fail(node, f"axis {name}: an enum axis needs 'values'")
        values = ctx.names(m["values"][1], f"axis {name} values")
        _distinct(ctx, m["values"][1], values, f"axis {name}")
        return EnumAxis(name, EnumType(name, tuple(values)), _why(ctx, m), ctx.loc(knode))
    if kind == "variant":
        if "tag" not in m or "variants" not in m:
            raise ctx.fail(node, f"axis {name}: a variant axis needs 'tag' and 'variants'")
        tag = ctx.scalar(m["tag"][1], "tag")
        variants: list[Variant] = []
        for vname, (_key, vnode) in ctx.mapping(m["variants"][1], f"axis {name} variants").items():
            fields: list[Field] = []
            if isinstance(vnode, yaml.ScalarNode) and vnode.value in ("", "null", "~"):
                vmap: dict[str, tuple[_Node, _Node]] = {}
            else:
                vmap = ctx.mapping(vnode, f"variant {vname}")
            for fname, (fk, fnode) in vmap.items():
                if fname == tag:
                    raise ctx.fail(fk, f"variant {vname}: field {fname!r} clashes with the tag")
                ftype = _field_type(ctx, fnode, types, f"variant {vname} field {fname}")
                fields.append(Field(fname, ftype, loc=ctx.loc(fk)))
            variants.append(Variant(vname, tuple(fields)))
        if not variants:
            raise ctx.fail(m["variants"][1], f"axis {name}: needs at least one variant")
        axis = VariantAxis(name, tag, tuple(variants), _why(ctx, m), ctx.loc(knode))
        for fname in axis.field_names():
            _check_widening(ctx, knode, axis, fname)
        return axis
    raise ctx.fail(m["kind"][1], f"axis {name}: unknown kind {kind!r} (enum, variant)")


def _check_widening(ctx: _Ctx, knode: _Node, axis: VariantAxis, fname: str) -> None:
    """A field shared by variants has one type, or enum types (read across variants as their
    union)."""
    types = [f.type for v in axis.variants if (f := v.field(fname)) is not None]
    if all(t == types[0] for t in types) or all(isinstance(t, EnumType) for t in types):
        return
    raise ctx.fail(
        knode,
        f"axis {axis.name}: field {fname!r} has different types "
        "(only enumerations may differ between variants)",
    )


def _event(
    ctx: _Ctx, name: str, knode: _Node, node: _Node, types: dict[str, EnumType | IdType]
) -> Event:
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~"):
        return Event(name, (), (), (), "", ctx.loc(knode))
    m = ctx.keys(
        node,
        f"event {name}",
        (),
        ("fields", "facts", "lazy_order", "lazy_order_fixed", "why", "scope"),
    )
    groups: dict[str, list[Field]] = {"fields": [], "facts": []}
    for group in ("fields", "facts"):
        if group not in m:
            continue
        for fname, (fk, fnode) in ctx.mapping(m[group][1], f"event {name} {group}").items():
            fm = ctx.keys(fnode, f"{name}.{fname}", ("type",), ("lazy", "why"))
            ftype = _field_type(ctx, fm["type"][1], types, f"{name}.{fname}")
            lazy = "lazy" in fm and ctx.scalar(fm["lazy"][1], "lazy").lower() == "true"
            if lazy and group == "fields":
                raise ctx.fail(fk, f"{name}.{fname}: only facts can be lazy")
            if lazy and ftype != BOOL:
                raise ctx.fail(fk, f"{name}.{fname}: a lazy fact must be a bool guard")
            groups[group].append(Field(fname, ftype, _why(ctx, fm), lazy, ctx.loc(fk)))
    names = [f.name for f in groups["fields"]]
    for f in groups["facts"]:
        if f.name in names:
            raise ctx.fail(node, f"event {name}: {f.name!r} is both a field and a fact")
    lazy_facts = [f.name for f in groups["facts"] if f.lazy]
    order: list[str] = []
    if "lazy_order" in m:
        order = ctx.names(m["lazy_order"][1], f"event {name} lazy_order")
        if sorted(order) != sorted(lazy_facts) or len(set(order)) != len(order):
            raise ctx.fail(
                m["lazy_order"][1],
                f"event {name}: lazy_order must list each lazy fact once "
                f"(lazy facts: {', '.join(lazy_facts) or 'none'})",
            )
    elif lazy_facts:
        raise ctx.fail(node, f"event {name}: lazy facts need a 'lazy_order'")
    return Event(
        name,
        tuple(groups["fields"]),
        tuple(groups["facts"]),
        tuple(order),
        _why(ctx, m),
        ctx.loc(knode),
        _lazy_order_fixed(ctx, m),
        _scope(ctx, name, m),
    )


def _scope(ctx: _Ctx, name: str, m: dict[str, tuple[_Node, _Node]]) -> str:
    """``scope: reducer`` (the default) or ``scope: extension`` (decided upstream by the
    extension's hooks around the reducer, not by the reducer)."""
    if "scope" not in m:
        return "reducer"
    scope = ctx.scalar(m["scope"][1], f"event {name} scope")
    if scope not in EVENT_SCOPES:
        raise ctx.fail(
            m["scope"][1], f"event {name}: scope {scope!r} is not one of: {', '.join(EVENT_SCOPES)}"
        )
    return scope


def _lazy_order_fixed(ctx: _Ctx, m: dict[str, tuple[_Node, _Node]]) -> bool:
    """``lazy_order_fixed: false`` lets the guards alone decide the consultation order."""
    if "lazy_order_fixed" not in m:
        return True
    value = ctx.scalar(m["lazy_order_fixed"][1], "lazy_order_fixed").lower()
    if value not in ("true", "false"):
        raise ctx.fail(m["lazy_order_fixed"][1], "lazy_order_fixed must be true or false")
    return value == "true"


def _initial(ctx: _Ctx, spec: Spec, node: _Node) -> dict[str, object]:
    m = ctx.mapping(node, "initial")
    out: dict[str, object] = {}
    for axis in spec.axes:
        if axis.name not in m:
            raise ctx.fail(node, f"initial: missing axis {axis.name!r}")
        vnode = m[axis.name][1]
        if isinstance(axis, EnumAxis):
            value = ctx.scalar(vnode, f"initial {axis.name}")
            if value not in axis.type.values:
                raise ctx.fail(vnode, f"initial: {value!r} is not a value of {axis.name}")
            out[axis.name] = value
        else:
            vm = ctx.mapping(vnode, f"initial {axis.name}")
            if axis.tag not in vm:
                raise ctx.fail(vnode, f"initial {axis.name}: missing {axis.tag!r}")
            tag = ctx.scalar(vm[axis.tag][1], axis.tag)
            variant = axis.variant(tag)
            if variant is None:
                raise ctx.fail(vm[axis.tag][1], f"initial: unknown {axis.name} variant {tag!r}")
            if variant.fields or len(vm) != 1:
                raise ctx.fail(vnode, f"initial {axis.name}: must be a variant without fields")
            out[axis.name] = {axis.tag: tag}
    for key, (knode, _) in m.items():
        if spec.axis(key) is None:
            raise ctx.fail(knode, f"initial: unknown axis {key!r}")
    return out


def _rows(ctx: _Ctx, spec: Spec, node: _Node) -> list[Row]:
    rows: list[Row] = []
    ids: set[str] = set()
    for rnode in ctx.seq(node, "rows"):
        m = ctx.keys(rnode, "row", ("id", "on", "when", "effect", "why"), ("next", "cause"))
        rid = ctx.scalar(m["id"][1], "row id")
        if rid in ids:
            ctx.error(m["id"][1], f"duplicate row id {rid!r}")
            continue
        ids.add(rid)
        event_name = ctx.scalar(m["on"][1], f"row {rid}: on")
        event = spec.event(event_name)
        if event is None:
            known = ", ".join(e.name for e in spec.events)
            ctx.error(m["on"][1], f"row {rid}: unknown event {event_name!r} (events: {known})")
            continue
        effect = ctx.scalar(m["effect"][1], f"row {rid}: effect")
        declared = spec.effect(effect)
        if declared is None:
            known = ", ".join(e.name for e in spec.effects)
            ctx.error(m["effect"][1], f"row {rid}: unknown effect {effect!r} (effects: {known})")
        cause = _cause(ctx, spec, rid, m["cause"][1]) if "cause" in m else None
        if declared is not None and declared.commits and cause is None:
            ctx.error(
                rnode,
                f"row {rid}: effect {effect!r} commits a boundary, so the row needs a 'cause' "
                "(what the user is told caused it)",
            )
        elif declared is not None and not declared.commits and cause is not None:
            ctx.error(
                m["cause"][0],
                f"row {rid}: only a row whose effect commits a boundary has a cause "
                f"({effect!r} commits nothing)",
            )
        guard, text = _parse_expr(ctx, m["when"][1], f"row {rid} guard")
        scope = sc.Scope(spec, ("cur",), (event,))
        _check_expr(ctx, m["when"][1], guard, scope, f"row {rid} guard")
        nexts: list[tuple[str, NextValue]] = []
        if "next" in m and event.scope == "extension":
            ctx.error(
                m["next"][0],
                f"row {rid}: {event_name} is decided by the extension, which never steps the "
                "reducer, so its rows keep the state (no 'next')",
            )
        elif "next" in m:
            for aname, (ak, anode) in ctx.mapping(m["next"][1], f"row {rid}: next").items():
                axis = spec.axis(aname)
                if axis is None:
                    ctx.error(ak, f"row {rid}: unknown axis {aname!r} in next")
                    continue
                nv = _next_value(ctx, spec, event, rid, axis, anode)
                if nv is not None:
                    nexts.append((aname, nv))
        rows.append(
            Row(
                rid,
                event_name,
                guard,
                text,
                tuple(nexts),
                effect,
                _why(ctx, m),
                ctx.loc(rnode),
                cause,
            )
        )
    for event in spec.events:
        if not any(r.event == event.name for r in rows) and not ctx.diagnostics:
            loc = event.loc or Loc(ctx.file, 1, 1)
            ctx.error(loc, f"event {event.name!r} has no rows")
    return rows


def _next_value(
    ctx: _Ctx, spec: Spec, event: Event, rid: str, axis: Axis, node: _Node
) -> NextValue | None:
    what = f"row {rid}: next {axis.name}"
    if isinstance(axis, EnumAxis):
        values = axis.type.values
        if isinstance(node, yaml.ScalarNode):
            if node.value not in values:
                ctx.error(node, f"{what}: {node.value!r} is not a value of {axis.name}")
                return None
            return NextLiteral(node.value)
        m = ctx.keys(node, what, ("case",))
        pairs: list[tuple[str, str]] = []
        for src, (sk, snode) in ctx.mapping(m["case"][1], f"{what} case").items():
            dst = ctx.scalar(snode, f"{what} case")
            for v, n in ((src, sk), (dst, snode)):
                if v not in values:
                    ctx.error(n, f"{what}: {v!r} is not a value of {axis.name}")
                    return None
            pairs.append((src, dst))
        return NextCase(tuple(pairs))
    m = ctx.mapping(node, what)
    if axis.tag not in m:
        ctx.error(node, f"{what}: missing {axis.tag!r}")
        return None
    tag = ctx.scalar(m[axis.tag][1], axis.tag)
    variant = axis.variant(tag)
    if variant is None:
        known = ", ".join(v.tag for v in axis.variants)
        ctx.error(m[axis.tag][1], f"{what}: unknown variant {tag!r} ({known})")
        return None
    fields: list[tuple[str, ex.Expr]] = []
    for fname, (fk, fnode) in m.items():
        if fname == axis.tag:
            continue
        f = variant.field(fname)
        if f is None:
            ctx.error(fk, f"{what}: variant {tag!r} has no field {fname!r}")
            continue
        if (
            isinstance(f.type, EnumType)
            and isinstance(fnode, yaml.ScalarNode)
            and fnode.value in f.type.values
        ):
            fields.append((fname, ex.Lit(str(fnode.value), 0)))
            continue
        value, _text = _parse_expr(ctx, fnode, f"{what}.{fname}")
        scope = sc.Scope(spec, ("cur",), (event,), lazy_facts=False)
        try:
            vtype = sc.check(value, scope)
        except ex.ExprError as err:
            ctx.error(_expr_loc(ctx, fnode, err.offset), f"{what}.{fname}: {err.message}")
            continue
        if isinstance(value, ex.Lit):
            ok = isinstance(f.type, EnumType) and value.value in f.type.values
        else:
            # An optional field is accepted here; the table analysis proves it is present
            # whenever the row fires.
            ok = isinstance(value, ex.Ref) and (
                vtype == f.type or (isinstance(vtype, sc.OptType) and vtype.inner == f.type)
            )
        if not ok:
            ctx.error(fnode, f"{what}.{fname}: needs a {_type_name(f.type)} value")
            continue
        fields.append((fname, value))
    missing = [f.name for f in variant.fields if f.name not in dict(fields) and f.name not in m]
    if missing:
        ctx.error(node, f"{what}: variant {tag!r} needs {', '.join(missing)}")
        return None
    return NextVariant(tag, tuple(fields))


def _type_name(t: FieldType) -> str:
    if isinstance(t, EnumType):
        return f"{t.name} ({' | '.join(t.values)})"
    return t.name


def _invariants(
    ctx: _Ctx, spec: Spec, node: _Node
) -> tuple[list[StateInvariant], list[TransitionInvariant], list[TraceProperty]]:
    m = ctx.keys(node, "invariants", (), ("state", "transition", "trace"))
    ids: set[str] = set()

    def fresh(n: _Node, kind: str) -> str:
        iid = ctx.scalar(n, f"{kind} id")
        if iid in ids:
            ctx.error(n, f"duplicate invariant id {iid!r}")
        ids.add(iid)
        return iid

    states: list[StateInvariant] = []
    for inode in ctx.seq(m["state"][1], "state invariants") if "state" in m else []:
        im = ctx.keys(inode, "state invariant", ("id", "holds", "why"))
        iid = fresh(im["id"][1], "invariant")
        e, text = _parse_expr(ctx, im["holds"][1], f"invariant {iid}")
        _check_expr(ctx, im["holds"][1], e, sc.Scope(spec, ("cur",), ()), f"invariant {iid}")
        states.append(StateInvariant(iid, e, text, _why(ctx, im), ctx.loc(inode)))

    transitions: list[TransitionInvariant] = []
    for inode in ctx.seq(m["transition"][1], "transition invariants") if "transition" in m else []:
        im = ctx.keys(inode, "transition invariant", ("id", "on", "then", "why"), ("when",))
        iid = fresh(im["id"][1], "invariant")
        evs: list[Event] = []
        for name in ctx.names(im["on"][1], f"invariant {iid} on"):
            event = spec.event(name)
            if event is None:
                ctx.error(im["on"][1], f"invariant {iid}: unknown event {name!r}")
            else:
                evs.append(event)
        if not evs:
            continue
        scope = sc.Scope(
            spec, ("pre", "post"), tuple(evs), allow_effect=True, allow_event_type=True
        )
        when: ex.Expr | None = None
        when_text = ""
        if "when" in im:
            when, when_text = _parse_expr(ctx, im["when"][1], f"invariant {iid} when")
            _check_expr(ctx, im["when"][1], when, scope, f"invariant {iid} when")
        then, then_text = _parse_expr(ctx, im["then"][1], f"invariant {iid} then")
        _check_expr(ctx, im["then"][1], then, scope, f"invariant {iid} then")
        transitions.append(
            TransitionInvariant(
                iid,
                tuple(e.name for e in evs),
                when,
                when_text,
                then,
                then_text,
                _why(ctx, im),
                ctx.loc(inode),
            )
        )

    traces: list[TraceProperty] = []
    for tnode in ctx.seq(m["trace"][1], "trace properties") if "trace" in m else []:
        tm = ctx.keys(tnode, "trace property", ("id", "initial", "steps", "why"))
        tid = fresh(tm["id"][1], "trace property")
        scope = sc.Scope(spec, ("pre", "post"), (), allow_effect=True, allow_event_type=True)
        steps: list[MonitorStep] = []
        for snode in ctx.seq(tm["steps"][1], f"trace {tid} steps"):
            sm = ctx.keys(snode, f"trace {tid} step", ("when", "to"), ("from",))
            source = ctx.scalar(sm["from"][1], "from") if "from" in sm else None
            e, text = _parse_expr(ctx, sm["when"][1], f"trace {tid} step")
            _check_expr(ctx, sm["when"][1], e, scope, f"trace {tid} step")
            steps.append(
                MonitorStep(source, e, text, ctx.scalar(sm["to"][1], "to"), ctx.loc(snode))
            )
        prop = TraceProperty(
            tid,
            _why(ctx, tm),
            ctx.scalar(tm["initial"][1], "initial"),
            tuple(steps),
            ctx.loc(tnode),
        )
        if "violation" not in prop.monitor_states:
            ctx.error(tnode, f"trace {tid}: no step leads to 'violation', so nothing is checked")
        if prop.initial == "violation":
            ctx.error(tm["initial"][1], f"trace {tid}: the monitor cannot start in 'violation'")
        traces.append(prop)
    return states, transitions, traces
