"""What a spec says about its origin: the published spec it refines (dropped fields, mapped
variants, the embedding of an earlier spec's cases) and its provenance (the upstream
repository, release and commit it reproduces, or a spec of our own)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from pi_context.spec.model import Embedding, Provenance, Refinement, Spec, Variant, VariantAxis
from pi_context.spec.nodes import Ctx, Entries, Node


def parse_refines(ctx: Ctx, spec: Spec, node: Node) -> Refinement:
    """``refines: {spec: ID, drop: {axis: {variant: [fields]}}, map: {axis: {variant: base
    variant}}, why: ...}``."""
    m = ctx.keys(node, "refines", ("spec",), ("drop", "map", "embed", "why"))
    maps = [
        (aname, tag, ctx.scalar(tnode, f"refines map {aname}.{tag}"))
        for aname, tag, _variant, tnode in _variants(ctx, spec, m, "map")
    ]
    drops: list[tuple[str, str, tuple[str, ...]]] = []
    for aname, tag, variant, fnode in _variants(ctx, spec, m, "drop"):
        fields = ctx.names(fnode, f"refines drop {aname}.{tag}")
        for f in fields:
            if variant.field(f) is None:
                raise ctx.fail(fnode, f"refines drop: variant {tag!r} has no field {f!r}")
        drops.append((aname, tag, tuple(fields)))
    return Refinement(
        ctx.scalar(m["spec"][1], "refines spec"),
        tuple(drops),
        ctx.why(m),
        ctx.loc(node),
        tuple(maps),
        _embed(ctx, m["embed"][1]) if "embed" in m else None,
    )


def _variants(
    ctx: Ctx, spec: Spec, m: Entries, key: str
) -> Iterator[tuple[str, str, Variant, Node]]:
    """The entries of ``refines`` ``key`` (``{axis: {variant: value}}``), each naming a variant
    of a variant axis of ``spec``, as (axis, tag, variant, value node); none when ``key`` is
    absent."""
    if key not in m:
        return
    what = f"refines {key}"
    for aname, (ak, anode) in ctx.mapping(m[key][1], what).items():
        axis = spec.axis(aname)
        if not isinstance(axis, VariantAxis):
            raise ctx.fail(ak, f"{what}: {aname!r} is not a variant axis")
        for tag, (tk, vnode) in ctx.mapping(anode, f"{what} {aname}").items():
            variant = axis.variant(tag)
            if variant is None:
                raise ctx.fail(tk, f"{what}: {aname} has no variant {tag!r}")
            yield aname, tag, variant, vnode


def _plain(ctx: Ctx, node: Node, what: str) -> object:
    """A YAML value as a wire value: mappings, lists, booleans and strings."""
    if isinstance(node, yaml.MappingNode):
        return {k: _plain(ctx, v, f"{what}.{k}") for k, (_, v) in ctx.mapping(node, what).items()}
    if isinstance(node, yaml.SequenceNode):
        return [_plain(ctx, v, what) for v in node.value]
    if node.tag.endswith(":bool"):
        return str(node.value).lower() == "true"
    return ctx.scalar(node, what)


def _pairs(ctx: Ctx, node: Node, what: str) -> tuple[tuple[str, object], ...]:
    return tuple(
        (k, _plain(ctx, v, f"{what}.{k}")) for k, (_, v) in ctx.mapping(node, what).items()
    )


def _embed(ctx: Ctx, node: Node) -> Embedding:
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


def parse_provenance(ctx: Ctx, node: Node) -> Provenance:
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
