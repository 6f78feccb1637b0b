"""Load a spec file: YAML (with positions) → checked :class:`Spec`.

Every problem becomes a ``file:line:col`` diagnostic; nothing here raises a traceback at a
spec author. After the structure and the guard types check out, the finite abstraction is
enumerated to find rows no input can reach (shadowed) and inputs no row matches.

This module reads the file and puts the spec together; the parts are read by
:mod:`~pi_context.spec.nodes` (typed YAML access, located errors, guard expressions),
:mod:`~pi_context.spec.declarations` (types, axes, events, effects),
:mod:`~pi_context.spec.rows` (the initial state and the rows),
:mod:`~pi_context.spec.invariants` and :mod:`~pi_context.spec.refinement` (refines,
provenance).
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import replace
from pathlib import Path

import yaml

from pi_context.spec.abstraction import size_problem
from pi_context.spec.declarations import (
    NamedTypes,
    parse_axis,
    parse_effect,
    parse_event,
    parse_type,
)
from pi_context.spec.errors import Diagnostic, SpecError
from pi_context.spec.invariants import parse_invariants
from pi_context.spec.model import (
    Loc,
    ProgressProperty,
    Spec,
    StateInvariant,
    TraceProperty,
    TransitionInvariant,
)
from pi_context.spec.nodes import Bail, Ctx, Node
from pi_context.spec.progress import parse_progress
from pi_context.spec.refinement import parse_provenance, parse_refines
from pi_context.spec.rows import parse_initial, parse_rows
from pi_context.spec.yamlcompose import compose
from pi_context.support.regular import read_regular

SPEC_MAX_BYTES = 4 << 20
"""Largest spec file read (the published specs are under 100 KB)."""


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
    ctx = Ctx(file, [])
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
    except Bail:
        raise SpecError(ctx.diagnostics) from None
    if ctx.diagnostics:
        raise SpecError(ctx.diagnostics)
    too_large = size_problem(spec)
    if too_large is not None:
        where, message = too_large
        raise SpecError([Diagnostic(where or Loc(file, 1, 1), message)])
    if analyse:
        from pi_context.spec.analysis import table_diagnostics

        problems = table_diagnostics(spec, progress=_Progress(file))
        if problems:
            raise SpecError(problems)
    return spec


class _Progress:
    """Says on stderr how far the table check over the abstraction is, once it has taken
    more than ``AFTER`` seconds (then at most once a second), and that it is done; only when
    stderr is a terminal someone watches (``SHOW`` overrides), so scripts and ``--quiet``
    commands stay silent."""

    AFTER = 1.0
    SHOW: bool | None = None

    def __init__(self, file: str) -> None:
        self.file = file
        self.started = time.monotonic()
        self.shown = 0.0

    def __call__(self, done: int, total: int) -> None:
        show = self.SHOW if self.SHOW is not None else sys.stderr.isatty()
        if not show:
            return
        now = time.monotonic()
        if now - self.started < self.AFTER or (now - self.shown < 1.0 and done < total):
            return
        if done >= total and not self.shown:
            return  # finished before anything was shown
        self.shown = now
        percent = 100 * done // max(total, 1)
        print(
            f"checking the table of {self.file}: {done:,} of {total:,} cases ({percent}%)",
            file=sys.stderr,
            flush=True,
        )


def _build(ctx: Ctx, root: Node, digest: str) -> Spec:
    top = ctx.keys(
        root,
        "spec",
        ("spec", "version", "axes", "initial", "events", "effects", "rows"),
        (
            "title",
            "types",
            "invariants",
            "progress",
            "reachability",
            "refines",
            "provenance",
        ),
    )
    name = ctx.scalar(top["spec"][1], "spec")
    version = ctx.scalar(top["version"][1], "version")
    title = ctx.scalar(top["title"][1], "title") if "title" in top else f"{name}@{version}"

    types: dict[str, NamedTypes] = {}
    if "types" in top:
        for tname, (knode, tnode) in ctx.mapping(top["types"][1], "types").items():
            types[tname] = parse_type(ctx, tname, knode, tnode)

    axes = [
        parse_axis(ctx, n, k, v, types) for n, (k, v) in ctx.mapping(top["axes"][1], "axes").items()
    ]
    if not axes:
        raise ctx.fail(top["axes"][1], "a spec needs at least one state axis")
    events = [
        parse_event(ctx, n, k, v, types)
        for n, (k, v) in ctx.mapping(top["events"][1], "events").items()
    ]
    effects = [
        parse_effect(ctx, n, k, v, types)
        for n, (k, v) in ctx.mapping(top["effects"][1], "effects").items()
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
    initial = parse_initial(ctx, spec, top["initial"][1])
    rows = parse_rows(ctx, spec, top["rows"][1])
    sinv: list[StateInvariant] = []
    tinv: list[TransitionInvariant] = []
    traces: list[TraceProperty] = []
    if "invariants" in top:
        sinv, tinv, traces = parse_invariants(ctx, spec, top["invariants"][1])
    progress: list[ProgressProperty] = []
    if "progress" in top:
        progress = parse_progress(
            ctx,
            replace(spec, state_invariants=tuple(sinv), traces=tuple(traces)),
            top["progress"][1],
        )
    expect_all, reach_why = False, ""
    if "reachability" in top:
        r = ctx.keys(top["reachability"][1], "reachability", ("expect_all",), ("why",))
        expect_all = ctx.scalar(r["expect_all"][1], "expect_all").lower() == "true"
        reach_why = ctx.why(r)
    return Spec(
        **{
            **spec.__dict__,
            "initial": initial,
            "rows": tuple(rows),
            "state_invariants": tuple(sinv),
            "transition_invariants": tuple(tinv),
            "traces": tuple(traces),
            "progress": tuple(progress),
            "expect_all_reachable": expect_all,
            "reachability_why": reach_why,
            "refines": parse_refines(ctx, spec, top["refines"][1]) if "refines" in top else None,
            "provenance": (
                parse_provenance(ctx, top["provenance"][1]) if "provenance" in top else None
            ),
        }
    )
