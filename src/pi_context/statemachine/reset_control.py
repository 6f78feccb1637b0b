"""The spec registry as a host sees it: one handle per spec with its generated reducer and
its ``transitions`` machine.

``reset_control("reset-control@0.26")`` (or a path to a spec file) loads and checks the spec,
finds its generated package (the committed one when the spec's hash matches, else code
generated for this process) and bundles what a host needs: the initial state, ``step`` and
``reduce`` of the compiled reducer, the JSON wire conversions and, built on first use, the
flat ``transitions`` machine that agrees with the reducer on every input.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pi_context.spec import spec_paths
from pi_context.spec.model import Spec

if TYPE_CHECKING:
    from pi_context.statemachine.machine import ResetControlMachine

# The newest published generation (the runtime's default too).
DEFAULT_SPEC = "reset-control@0.27"


@dataclass(frozen=True)
class ResetControl:
    """One spec's generated core. States and events are the generated dataclasses of
    ``types`` (their exact classes differ per spec version, hence ``Any`` here)."""

    spec: Spec
    types: ModuleType
    """Generated dataclasses and ``Literal`` aliases (``State``, ``TurnEndEvent``, ...)."""
    reducer: ModuleType
    """The compiled reducer module (``step``, ``reduce``)."""
    wire: ModuleType
    """JSON conversion with path-naming errors (``state_from_wire``, ``event_to_wire``, ...)."""
    origin: str
    """``committed`` or ``generated for this run`` (a spec file whose code is not committed)."""

    def __repr__(self) -> str:
        return f"<ResetControl {self.spec.id} ({self.origin}): {len(self.spec.rows)} rows>"

    @property
    def id(self) -> str:
        """The spec id, e.g. ``reset-control@0.26``."""
        return self.spec.id

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
        from pi_context.statemachine.registry import generated

        return shared_machine(generated(self.spec))


def reset_control(spec: str | Path = DEFAULT_SPEC) -> ResetControl:
    """The generated core of ``spec``: a spec id (``reset-control@0.25``) or a spec file.

    An unknown id or a broken file raises ``SpecError`` naming the problem and its place.
    """
    from pi_context.statemachine.registry import generated, resolve_spec

    gen = generated(resolve_spec(str(spec)))
    return ResetControl(gen.spec, gen.types, gen.reducer, gen.wire, gen.origin)


def spec_ids() -> list[str]:
    """The ids of the committed reset-control specs, oldest first (other spec families, such
    as ``handoff@0.6``, are listed by ``pi_context.spec.spec_paths``)."""
    return [path.stem for path in spec_paths() if path.stem.startswith("reset-control@")]
