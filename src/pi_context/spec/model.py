"""The in-memory form of a reset-control spec: what the loader produces and everything
downstream (interpreter, generator, checkers, docs) consumes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from pi_context.spec.expr import snake

if TYPE_CHECKING:
    from pi_context.spec.expr import Expr


@dataclass(frozen=True)
class Loc:
    """A position in a spec file, 1-based, for ``file:line:col`` diagnostics."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, columns: int) -> Loc:
        return Loc(self.file, self.line, self.col + columns)


@dataclass(frozen=True)
class NamedType:
    """What the types a spec names (enums and ids) have in common: the name, and for one
    declared under ``types`` its ``why`` and position (keywords: each kind adds its values)."""

    name: str
    why: str = field(default="", kw_only=True)
    loc: Loc | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class EnumType(NamedType):
    """A closed set of string values."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class IdType(NamedType):
    """An opaque identifier: only compared for equality and copied.

    ``abstraction`` lists the distinct representatives the finite abstraction uses.
    """

    abstraction: tuple[str, ...]


@dataclass(frozen=True)
class TextType(NamedType):
    """An optional text (a follow-up prompt): absent, or a string kept trimmed and only when
    non-empty. The finite abstraction knows two values, absent and ``representative``
    (present); guards read a text as whether it is present, and rows only copy it."""

    representative: str = field(default="follow up", kw_only=True)


def normalize_text(value: object) -> str | None:
    """A text as the table keeps it: trimmed, and absent (None) when nothing remains."""
    if not isinstance(value, str):
        return None
    trimmed = value.strip()
    return trimmed or None


@dataclass(frozen=True)
class BoolType:
    name: Literal["bool"] = "bool"


BOOL = BoolType()
FieldType = EnumType | IdType | BoolType | TextType


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    why: str = ""
    lazy: bool = False
    loc: Loc | None = None
    host: str = ""
    """For a fact: the host fact it reads, where the spec names it differently from the host
    (``host: hard_reserve_due``); empty when the host fact is the fact's own name."""

    @property
    def host_fact(self) -> str:
        """The host fact this fact reads: ``host`` when declared, else its name in snake case
        (``hardReserveDue`` reads ``hard_reserve_due``)."""
        return self.host or snake(self.name)


@dataclass(frozen=True)
class Variant:
    tag: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class EnumAxis:
    name: str
    type: EnumType
    why: str = ""
    loc: Loc | None = None


@dataclass(frozen=True)
class VariantAxis:
    """A discriminated union; ``tag`` is the discriminator key on the wire."""

    name: str
    tag: str
    variants: tuple[Variant, ...]
    why: str = ""
    loc: Loc | None = None

    def variant(self, tag: str) -> Variant | None:
        if not isinstance(tag, str):
            return None  # (a variant's tag is always a name)
        return self._variants.get(tag)

    @cached_property
    def _variants(self) -> dict[str, Variant]:  # the first of a tag, as a scan would find
        found: dict[str, Variant] = {}
        for variant in self.variants:
            found.setdefault(variant.tag, variant)
        return found

    @property
    def tag_type(self) -> EnumType:
        return EnumType(f"{self.name}.{self.tag}", tuple(v.tag for v in self.variants))

    def field_names(self) -> tuple[str, ...]:
        """Every field any variant carries, in first-declared order."""
        names: list[str] = []
        for variant in self.variants:
            for f in variant.fields:
                if f.name not in names:
                    names.append(f.name)
        return tuple(names)

    def field_type(self, name: str) -> FieldType | None:
        """The field's type; when variants widen an enum (one's values include every other's),
        the widest, so reads of the field across variants type-check against all values. When
        no one enum includes the others (0.33's close-out and tool-request sources), their
        union, named ``axis.field``."""
        found: FieldType | None = None
        values: list[str] = []
        for variant in self.variants:
            f = variant.field(name)
            if f is None:
                continue
            if isinstance(f.type, EnumType):
                values += [v for v in f.type.values if v not in values]
            if found is None or (
                isinstance(found, EnumType)
                and isinstance(f.type, EnumType)
                and set(found.values) < set(f.type.values)
            ):
                found = f.type
        if isinstance(found, EnumType) and len(values) > len(found.values):
            return EnumType(f"{self.name}.{name}", tuple(values))
        return found

    def carriers(self, name: str) -> tuple[str, ...]:
        """The variant tags that carry field ``name``."""
        return tuple(v.tag for v in self.variants if v.field(name) is not None)


Axis = EnumAxis | VariantAxis


@dataclass(frozen=True)
class Event:
    name: str
    fields: tuple[Field, ...]
    facts: tuple[Field, ...]
    lazy_order: tuple[str, ...]
    why: str = ""
    loc: Loc | None = None
    # False when the reducer reads its lazy facts in different orders on different branches
    # (as published 0.26 does at settle); the guards alone then fix the consultation order.
    lazy_order_fixed: bool = True
    # Who decides it upstream: the published ``reducer`` (its reduceResetControl), or the
    # published ``extension`` around it (a decision its Pi hooks make from the reducer's state
    # without stepping the reducer, e.g. 0.34's follow-up cancellation at the provider-context
    # hook). A published reducer is checked on its reducer events only.
    scope: str = "reducer"
    # What the host calls the thing that raises this event, where the name is part of the
    # generation: the model's tool (``clear_memory``) or the user's command
    # (``/clear-memory``). Empty: the host raises it from its own lifecycle.
    trigger: str = ""

    @property
    def tool(self) -> str:
        """The model-facing tool that raises this event ('' when a command or none does)."""
        return self.trigger if self.trigger and not self.trigger.startswith("/") else ""

    @property
    def command(self) -> str:
        """The user's command that raises this event ('' when a tool or none does)."""
        return self.trigger if self.trigger.startswith("/") else ""

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def fact(self, name: str) -> Field | None:
        return next((f for f in self.facts if f.name == name), None)


HostAction = Literal[
    "commit-continue", "commit-stop", "recover", "stop", "cancel", "acknowledge", "none"
]
HOST_ACTIONS: tuple[HostAction, ...] = (
    "commit-continue",
    "commit-stop",
    "recover",
    "stop",
    "cancel",
    "acknowledge",
    "none",
)
EVENT_SCOPES: tuple[str, ...] = ("reducer", "extension")


@dataclass(frozen=True)
class HostActionMeaning:
    """What a host action obliges the host to do. A host performs an effect from these
    answers alone, so a new host action is one more line in ``HOST_ACTION_MEANINGS``."""

    commits: bool
    """A reset boundary (checkpoint, marker, boot, continuation) is built and appended."""
    continues: bool
    """The run goes on after the boundary (the continuation is the next prompt)."""
    retries: bool
    """The request that failed is re-run in the new window."""
    stops: bool = False
    """The run ends here: no further turn (after the boundary, when the action commits one;
    a boundary that failed or went stale stops nothing)."""
    acknowledges: bool = False
    """A request was recorded: the host confirms it to whoever asked (for the user's
    ``/wipe-memory``: the hidden close-out warning and an ordinary model turn)."""
    cancels: bool = False
    """The provider request about to be sent is cancelled: the run is aborted before any
    provider work and the provider is handed only the system message (0.34's empty follow-up
    after a committed stop)."""


HOST_ACTION_MEANINGS: dict[HostAction, HostActionMeaning] = {
    "commit-continue": HostActionMeaning(commits=True, continues=True, retries=False),
    "commit-stop": HostActionMeaning(commits=True, continues=False, retries=False, stops=True),
    "recover": HostActionMeaning(commits=True, continues=True, retries=True),
    "stop": HostActionMeaning(commits=False, continues=False, retries=False, stops=True),
    "cancel": HostActionMeaning(
        commits=False, continues=False, retries=False, stops=True, cancels=True
    ),
    "acknowledge": HostActionMeaning(
        commits=False, continues=False, retries=False, acknowledges=True
    ),
    "none": HostActionMeaning(commits=False, continues=False, retries=False),
}


@dataclass(frozen=True)
class Effect:
    name: str
    meaning: str
    loc: Loc | None = None
    # What the host does for it: commit the boundary and continue, commit it and stop the
    # run, commit the overflow recovery, stop the run without a boundary (its drafts are
    # kept), acknowledge a request, or nothing. None: undeclared.
    host: HostAction | None = None
    # The effect answers a request that was already pending (an acknowledged duplicate).
    duplicate: bool = False
    # The optional values the effect hands the host (a follow-up prompt), each a text field;
    # a row with this effect says where each comes from (``carry``), else it is absent.
    carries: tuple[Field, ...] = ()

    @property
    def commits(self) -> bool:
        """Its host action builds and appends a reset boundary."""
        return self.host is not None and HOST_ACTION_MEANINGS[self.host].commits


@dataclass(frozen=True)
class Refinement:
    """The published spec this one is read against, and how its states project onto it.

    ``drop`` lists, per variant axis, the variant fields the base spec does not have.
    """

    spec: str
    drop: tuple[tuple[str, str, tuple[str, ...]], ...]  # (axis, variant tag, fields)
    why: str = ""
    loc: Loc | None = None
    # (axis, variant tag, base variant tag): a variant the base lacks is read as another
    # (its fields dropped per ``drop``), e.g. 0.34's stop-pending as 0.33's none.
    map: tuple[tuple[str, str, str], ...] = ()
    # When the base has other events (0.25 before 0.26): how each case of the base reads in
    # this spec, as plain values: {"states": {axis: {base value: value}}, "events": {base
    # event: wire event}, "facts": {base event: {fact: value or "facts.<base fact>"}},
    # "effects": {base effect: effect}}. None: the two share their events.
    embed: Embedding | None = None


@dataclass(frozen=True)
class Embedding:
    """How the cases of an earlier spec with other events read in this one (see ``embed``)."""

    states: tuple[tuple[str, tuple[tuple[str, object], ...]], ...]
    events: tuple[tuple[str, object], ...]
    facts: tuple[tuple[str, tuple[tuple[str, object], ...]], ...]
    effects: tuple[tuple[str, str], ...]
    loc: Loc | None = None


@dataclass(frozen=True)
class Provenance:
    """What a spec reproduces: the upstream file, release and commit it is exact against, or
    ``source == "ours"`` for a spec of our own (a proposal). ``unknown`` marks what the stored
    sources do not name; ``note`` then says why."""

    source: Literal["published", "ours"]
    repository: str = "unknown"  # owner/name
    path: str = ""  # the reducer's file in that repository
    release: str = "unknown"  # the version package.json names there
    commit: str = "unknown"  # the full 40-digit hash
    package: str = ""  # the npm package it shipped in, when known
    note: str = ""
    loc: Loc | None = None


# Next values. An axis missing from a row's ``next`` keeps its value.
@dataclass(frozen=True)
class NextLiteral:
    """An enum axis takes a fixed value."""

    value: str


@dataclass(frozen=True)
class NextCase:
    """An enum axis maps its current value; unmapped values are kept."""

    mapping: tuple[tuple[str, str], ...]

    def apply(self, current: str) -> str:
        return dict(self.mapping).get(current, current)


@dataclass(frozen=True)
class NextVariant:
    """A variant axis takes a variant whose fields are literals or references."""

    tag: str
    fields: tuple[tuple[str, Expr], ...]


NextValue = NextLiteral | NextCase | NextVariant


@dataclass(frozen=True)
class Cause:
    """What the user is told caused the boundary a row commits: one text, or one text per
    value of a field of the state the row fires in (``by`` names it: an enum axis, or a
    variant axis and one of its fields), with ``otherwise`` for a value the cases do not
    name (or a variant without that field)."""

    text: str = ""
    axis: str = ""
    member: str | None = None
    cases: tuple[tuple[str, str], ...] = ()
    otherwise: str | None = None

    @property
    def by(self) -> str:
        """The field read, as written in the spec (``request.source``); empty for a text."""
        if not self.axis:
            return ""
        return self.axis if self.member is None else f"{self.axis}.{self.member}"

    def for_value(self, value: object) -> str | None:
        """The text for the field's ``value`` (None when the cases do not name it)."""
        if not self.axis:
            return self.text
        return next((text for case, text in self.cases if case == value), self.otherwise)


@dataclass(frozen=True)
class Row:
    id: str
    event: str
    guard: Expr
    guard_text: str
    next: tuple[tuple[str, NextValue], ...]
    effect: str
    why: str
    loc: Loc
    cause: Cause | None = None
    """Set exactly on rows whose effect commits a boundary."""
    carry: tuple[tuple[str, Expr], ...] = ()
    """Where each value the effect carries comes from (a text of the current state or the
    event); a carried value the row does not name is absent."""

    def next_for(self, axis: str) -> NextValue | None:
        if not isinstance(axis, str):
            return None  # (an axis is always a name)
        return self._next.get(axis)

    @cached_property
    def _next(self) -> dict[str, NextValue]:  # the last of an axis wins, as dict() would
        return dict(self.next)


@dataclass(frozen=True)
class StateInvariant:
    id: str
    expr: Expr
    text: str
    why: str
    loc: Loc


@dataclass(frozen=True)
class TransitionInvariant:
    id: str
    events: tuple[str, ...]
    when: Expr | None
    when_text: str
    then: Expr
    then_text: str
    why: str
    loc: Loc


@dataclass(frozen=True)
class MonitorStep:
    source: str | None  # None: from any monitor state
    when: Expr
    when_text: str
    target: str
    loc: Loc


@dataclass(frozen=True)
class TraceProperty:
    """A safety property over traces, checked by a monitor automaton on the product.

    Reaching the monitor state ``violation`` is a counterexample.
    """

    id: str
    why: str
    initial: str
    steps: tuple[MonitorStep, ...]
    loc: Loc

    @property
    def monitor_states(self) -> tuple[str, ...]:
        names = [self.initial]
        for step in self.steps:
            for name in (step.source, step.target):
                if name is not None and name not in names:
                    names.append(name)
        return tuple(names)


@dataclass(frozen=True)
class FairEvent:
    """An event instance the environment keeps sending: ``event`` whose ``when`` holds."""

    event: str
    when: Expr | None
    when_text: str

    def render(self) -> str:
        return f"{self.event} with {self.when_text}" if self.when is not None else self.event


@dataclass(frozen=True)
class ProgressProperty:
    """``when`` leads to ``leads_to`` on every run fair to each of ``fair``."""

    id: str
    when: Expr
    when_text: str
    leads_to: Expr
    leads_to_text: str
    fair: tuple[FairEvent, ...]
    why: str
    loc: Loc

    def render(self) -> str:
        fair = "; ".join(f.render() for f in self.fair) or "no fairness"
        return f"{self.when_text} ~> {self.leads_to_text} (weakly fair: {fair})"


@dataclass(frozen=True)
class Spec:
    """A loaded, checked spec: types, axes, events, effects, rows and invariants."""

    id: str  # e.g. "reset-control@0.26"
    name: str
    version: str
    title: str
    path: str
    sha256: str
    types: tuple[EnumType | IdType | TextType, ...]
    axes: tuple[Axis, ...]
    initial: dict[str, object]  # wire form
    events: tuple[Event, ...]
    effects: tuple[Effect, ...]
    rows: tuple[Row, ...]
    state_invariants: tuple[StateInvariant, ...]
    transition_invariants: tuple[TransitionInvariant, ...]
    traces: tuple[TraceProperty, ...]
    expect_all_reachable: bool = False
    reachability_why: str = ""
    comments: dict[str, str] = field(default_factory=dict)
    refines: Refinement | None = None
    provenance: Provenance | None = None
    progress: tuple[ProgressProperty, ...] = ()
    """Progress properties (leads-to under weak fairness; :mod:`pi_context.spec.progress`)."""

    def __repr__(self) -> str:
        # The generated repr would print every row and guard (100k characters and more).
        return (
            f"<Spec {self.id}: {len(self.rows)} rows, {len(self.events)} events, "
            f"{len(self.axes)} axes ({self.path})>"
        )

    def axis(self, name: str) -> Axis | None:
        return next((a for a in self.axes if a.name == name), None)

    def event(self, name: str) -> Event | None:
        return next((e for e in self.events if e.name == name), None)

    def rows_for(self, event: str) -> tuple[Row, ...]:
        if not isinstance(event, str):
            return ()  # (a row's event is always a name)
        return self._rows_by_event.get(event, ())

    @cached_property
    def _rows_by_event(self) -> dict[str, tuple[Row, ...]]:  # each event's rows, in order
        rows: dict[str, list[Row]] = {}
        for row in self.rows:
            rows.setdefault(row.event, []).append(row)
        return {event: tuple(group) for event, group in rows.items()}

    def effect(self, name: str) -> Effect | None:
        return next((e for e in self.effects if e.name == name), None)

    @property
    def effect_type(self) -> EnumType:
        return EnumType("effect", tuple(e.name for e in self.effects))

    @property
    def event_type(self) -> EnumType:
        return EnumType("event.type", tuple(e.name for e in self.events))

    @property
    def module_name(self) -> str:
        return module_name(self.id)

    def reducer_view(self) -> Spec:
        """This spec without the events its published extension decides (``scope:
        extension``) and their rows and invariants: what a published reducer, run without its
        extension, is checked against. The spec itself when it has no such event."""
        hooks = {e.name for e in self.events if e.scope == "extension"}
        if not hooks:
            return self
        return replace(
            self,
            events=tuple(e for e in self.events if e.name not in hooks),
            rows=tuple(r for r in self.rows if r.event not in hooks),
            transition_invariants=tuple(
                t for t in self.transition_invariants if not set(t.events) & hooks
            ),
        )


def module_name(spec_id: str) -> str:
    """The Python package name of a spec's generated code (``reset-control@0.26`` ->
    ``reset_control_0_26``): hosts find a committed package from the id alone."""
    return spec_id.replace("@", "_").replace("-", "_").replace(".", "_")
