"""The one handle a host imports: a spec's generated core, found by one rule.

``reset_control("reset-control@0.34")`` (a spec id, a path to a spec file, or a loaded
:class:`Spec`) gives a :class:`ResetControl`: the generated ``types``, ``wire``, ``reducer`` and
machine ``table`` of the spec, with the calls a host makes (``initial_state``, ``step``,
``reduce``, the wire conversions, event construction by name, the declared host action of
each effect, whether it answers a duplicate, each row's cause) and, built on first use, the
``transitions`` machine that agrees with the reducer on every input.

The discovery rule: a spec's code is the committed package ``generated/<module_name>`` when
the SHA-256 it records equals the spec file's; otherwise there is no code here and
``NotGenerated`` says so (an edited spec is never run with stale code). Generating code for an
uncommitted spec is the generator's job: ``pi_context.codegen.fresh.reset_control`` takes the
same arguments, returns the committed handle when there is one and otherwise generates the
spec's package for this process (``verify --spec FILE`` works on any file through it). A
committed spec id is matched by hashing its file, without parsing it: the spec is loaded only
when something asks for it (``ResetControl.spec``).
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pi_context.spec import SpecError, load, spec_path, spec_paths
from pi_context.spec.model import HostAction, Spec, module_name

if TYPE_CHECKING:
    from pi_context.statemachine.machine import ResetControlMachine

# The newest published generation (the runtime's default too).
DEFAULT_SPEC = "reset-control@6bcd8b5"

COMMITTED = "committed"
FRESH = "generated for this run"  # a handle pi_context.codegen.fresh made
_GENERATED_PACKAGE = "pi_context.statemachine.generated"


class ResetControl:
    """One spec's generated core. States and events are the generated dataclasses of
    ``types`` (their exact classes differ per spec version, hence ``Any`` here)."""

    def __init__(
        self,
        package: ModuleType,
        modules: dict[str, ModuleType],
        origin: str,
        *,
        spec: Spec | None = None,
        path: Path | None = None,
    ) -> None:
        self.package = package
        """The generated package (``pi_context.statemachine.generated.<module_name>``)."""
        self.types: ModuleType = modules["types"]
        """Generated dataclasses and ``Literal`` aliases (``State``, ``TurnEndEvent``, ...)."""
        self.reducer: ModuleType = modules["reducer"]
        """The compiled reducer module (``step``, ``reduce``)."""
        self.wire: ModuleType = modules["wire"]
        """JSON conversion with path-naming errors (``state_from_wire``, ``step_wire``, ...)."""
        self.table: ModuleType = modules["machine"]
        """The generated ``machine`` module: the table the ``transitions`` machine is built on."""
        self.origin = origin
        """``committed`` or ``generated for this run`` (a spec whose code is not committed)."""
        self.id: str = self.types.SPEC_ID
        """The spec id, e.g. ``reset-control@0.26``."""
        self.sha256: str = self.types.SPEC_SHA256
        self.hosts: dict[str, HostAction | None] = dict(self.types.EFFECT_HOST)
        """What the host does for each effect, as the spec declares it (None: undeclared)."""
        self.duplicates: frozenset[str] = frozenset(self.types.EFFECT_DUPLICATE)
        """The effects that answer a request already pending (each effect's ``duplicate``)."""
        self.lazy_order: dict[str, tuple[str, ...]] = dict(self.types.LAZY_ORDER)
        """Each event's lazy facts, in the order the table may consult them (spec names)."""
        self._events: dict[str, type] = dict(self.types.EVENT_CLASSES)
        self._spec = spec
        self._path = path

    def __repr__(self) -> str:
        return f"<ResetControl {self.id} ({self.origin})>"

    @property
    def spec(self) -> Spec:
        """The loaded, checked spec (read from its file on first use)."""
        if self._spec is None:
            self._spec = load(self._path if self._path is not None else spec_path(self.id))
        return self._spec

    @property
    def effects(self) -> tuple[str, ...]:
        """Every effect name the table can produce."""
        return tuple(self.types.EFFECTS)

    def initial_state(self) -> Any:
        return self.types.initial_state()

    def step(self, state: Any, event: Any) -> tuple[Any, str, str]:
        """One transition: (next state, effect, id of the row that fired)."""
        result: tuple[Any, str, str] = self.reducer.step(state, event)
        return result

    def reduce(self, state: Any, event: Any) -> tuple[Any, str]:
        """One transition: (next state, effect)."""
        result: tuple[Any, str] = self.reducer.reduce(state, event)
        return result

    # --- events and effects by name (what a host that gathers facts calls) -------------------

    def accepts(self, event: str) -> bool:
        """The spec has an event of this name."""
        return event in self._events

    def event(self, name: str, **fields: Any) -> Any:
        """The typed event ``name`` (``facts=`` any object with the facts' attributes)."""
        cls = self._events.get(name)
        if cls is None:
            raise ValueError(f"{self.id} has no event {name!r}")
        return cls(**fields)

    def host(self, effect: str) -> HostAction:
        """The host action the spec declares for ``effect``."""
        action = self.hosts.get(effect)
        if action is None:
            raise ValueError(f"{self.id} declares no host action for effect {effect!r}")
        return action

    def duplicate(self, effect: str) -> bool:
        """Whether ``effect`` answers a request that was already pending (the spec says so)."""
        return effect in self.duplicates

    def cause(self, row: str, state: Any) -> str:
        """What the user is told caused the boundary ``row`` commits when it fires in
        ``state`` (the row's ``cause``; empty for a row that commits nothing)."""
        return str(self.types.cause(row, state))

    def carried(self, row: str, state: Any) -> dict[str, str]:
        """The values the effect of ``row`` hands the host when it fires in ``state`` (the
        user's follow-up prompt, from 6bcd8b5 on; empty for a spec whose effects carry
        nothing)."""
        carried = getattr(self.reducer, "carried", None)
        return {} if carried is None else dict(carried(row, state))

    def undeclared_hosts(self) -> list[str]:
        """Effects without a declared host action (a host acting on actions refuses them)."""
        return [effect for effect, action in self.hosts.items() if action is None]

    def request_wire(self, state: Any) -> Any:
        """The request axis of ``state`` in wire form (for reporting who asked)."""
        return self.wire.state_to_wire(state).get("request")

    # --- wire conversions ------------------------------------------------------------------------

    def event_from_wire(self, obj: object) -> Any:
        """An event from its JSON form (a ``WireError`` names the offending path)."""
        return self.wire.event_from_wire(obj)

    def state_from_wire(self, obj: object) -> Any:
        return self.wire.state_from_wire(obj)

    def state_to_wire(self, state: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.wire.state_to_wire(state)
        return result

    def event_to_wire(self, event: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.wire.event_to_wire(event)
        return result

    @property
    def machine(self) -> ResetControlMachine:
        """The spec's ``transitions`` machine (one per spec, built on first use)."""
        from pi_context.statemachine.machine import shared_machine

        return shared_machine(self.table)


# ---------------------------------------------------------------- discovery

_cache: dict[str, ResetControl] = {}  # by spec hash: the code is a function of the spec


def reset_control(spec: str | Path | Spec = DEFAULT_SPEC) -> ResetControl:
    """The generated core of ``spec``: a spec id (``reset-control@0.25``), a spec file, or a
    loaded :class:`Spec`.

    An unknown id or a broken file raises ``SpecError`` naming the problem and its place.
    """
    if isinstance(spec, Spec):
        return _handle(spec.id, spec.sha256, spec=spec)
    path = Path(spec)
    if path.suffix in (".yaml", ".yml") or path.exists():
        loaded = load(path)
        return _handle(loaded.id, loaded.sha256, spec=loaded)
    path = spec_path(str(spec))
    return _handle(str(spec), hashlib.sha256(path.read_bytes()).hexdigest(), path=path)


def reducer_only(full: ResetControl) -> ResetControl:
    """The generated core ``full`` read through :meth:`Spec.reducer_view`: the same code,
    with the events the published extension decides left out of what is enumerated."""
    view = full.spec.reducer_view()
    if view is full.spec:
        return full
    modules = {
        "types": full.types,
        "wire": full.wire,
        "reducer": full.reducer,
        "machine": full.table,
    }
    return ResetControl(full.package, modules, full.origin, spec=view)


def _handle(
    spec_id: str, sha256: str, *, spec: Spec | None = None, path: Path | None = None
) -> ResetControl:
    found = _cache.get(sha256)
    if found is None:
        found = _committed(spec_id, sha256, spec, path)
        if found is None:
            raise NotGenerated(spec if spec is not None else load(path or spec_path(spec_id)))
        _cache[sha256] = found
    return found


class NotGenerated(SpecError):
    """A spec with no committed generated package of the same bytes (an edited or a new
    spec file): ``pi-context generate`` commits one, ``pi_context.codegen.fresh`` generates
    one for this process. ``spec`` is the loaded spec."""

    def __init__(self, spec: Spec) -> None:
        super().__init__([])
        self.spec = spec
        self.message = (
            f"spec {spec.id!r} ({spec.path}) has no committed generated package of the same"
            " bytes: run `pi-context generate`, or generate one for this process with"
            " pi_context.codegen.fresh.reset_control"
        )

    def __str__(self) -> str:
        return self.message


def resolve_spec(ref: str) -> Spec:
    """A spec id (``reset-control@0.26``) or a path to a spec file, loaded and checked."""
    path = Path(ref)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return load(path)
    return load(spec_path(ref))


def committed_specs() -> list[Spec]:
    """Every committed spec (all families), loaded and checked, in file order."""
    return [load(p) for p in spec_paths()]


def spec_ids(family: str | None = "reset-control") -> list[str]:
    """The ids of the committed specs of ``family`` (every family with ``None``), oldest
    first: the same rule finds a reset-control and a handoff spec."""
    return [
        path.stem for path in spec_paths() if family is None or path.stem.split("@", 1)[0] == family
    ]


# The modules of every generated package, by the names the handle gives them.
MODULES = ("types", "wire", "reducer", "machine")


def _committed(
    spec_id: str, sha256: str, spec: Spec | None, path: Path | None
) -> ResetControl | None:
    name = f"{_GENERATED_PACKAGE}.{module_name(spec_id)}"
    try:
        types = importlib.import_module(f"{name}.types")
    except ModuleNotFoundError:
        return None
    if getattr(types, "SPEC_SHA256", None) != sha256:
        return None
    modules = {m: importlib.import_module(f"{name}.{m}") for m in MODULES}
    return ResetControl(sys.modules[name], modules, COMMITTED, spec=spec, path=path)
