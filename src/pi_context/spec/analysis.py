"""Static table checks over the finite abstraction: shadowed rows and missing coverage."""

from __future__ import annotations

from collections.abc import Callable

from pi_context.spec.abstraction import all_states, event_instances
from pi_context.spec.errors import Diagnostic
from pi_context.spec.expr import ABSENT
from pi_context.spec.interpret import (
    cause_text,
    guard_holds,
    next_state,
    render_event,
    render_state,
)
from pi_context.spec.model import Loc, Spec


def table_diagnostics(
    spec: Spec, limit: int = 3, progress: Callable[[int, int], None] | None = None
) -> list[Diagnostic]:
    """Every shadowed, uncovered or ill-built row over the whole abstraction; ``progress``
    is told (cases checked, cases in all) as the check goes."""
    problems: list[Diagnostic] = []
    states = all_states(spec)
    instances = {event.name: event_instances(event) for event in spec.events}
    total = len(states) * sum(len(found) for found in instances.values())
    done = 0
    for event in spec.events:
        rows = spec.rows_for(event.name)
        position = {r.id: n for n, r in enumerate(rows)}
        fired: dict[str, int] = {r.id: 0 for r in rows}
        holds: dict[str, set[str]] = {r.id: set() for r in rows}  # row -> rows that won instead
        uncovered: list[str] = []
        absent: dict[str, str] = {}  # row -> an input where it builds an absent field
        causeless: dict[str, str] = {}  # row -> an input where its cause names no text
        for state in states:
            if progress is not None:
                progress(done, total)
            done += len(instances[event.name])
            for inst in instances[event.name]:
                winner: str | None = None
                for row in rows:
                    if guard_holds(spec, row, state, inst):
                        if winner is None:
                            winner = row.id
                            fired[row.id] += 1
                            built = next_state(spec, row, state, inst)
                            if row.id not in absent and any(
                                isinstance(v, dict) and ABSENT in v.values() for v in built.values()
                            ):
                                absent[row.id] = (
                                    f"{render_state(spec, state)} with {render_event(inst)}"
                                )
                            if (
                                row.cause is not None
                                and row.id not in causeless
                                and cause_text(row, state) is None
                            ):
                                causeless[row.id] = render_state(spec, state)
                        else:
                            holds[row.id].add(winner)
                if winner is None:
                    uncovered.append(f"{render_state(spec, state)} with {render_event(inst)}")
        for row in rows:
            if row.id in absent:
                problems.append(
                    Diagnostic(
                        row.loc,
                        f"row {row.id!r} copies a field the current variant lacks, "
                        f"e.g. at {absent[row.id]}",
                    )
                )
            if row.id in causeless:
                assert row.cause is not None
                problems.append(
                    Diagnostic(
                        row.loc,
                        f"row {row.id!r}: its cause names no text for the {row.cause.by} it "
                        f"fires with at {causeless[row.id]}",
                    )
                )
            if fired[row.id]:
                continue
            if holds[row.id]:
                # in table order; sorting the (few) winners keeps this linear in the rows
                by = ", ".join(sorted(holds[row.id], key=position.__getitem__))
                message = (
                    f"row {row.id!r} is unreachable: every input it matches is taken by "
                    f"earlier rows ({by})"
                )
            else:
                message = f"row {row.id!r} is unreachable: its guard never holds"
            problems.append(Diagnostic(row.loc, message))
        if uncovered:
            loc = event.loc or Loc(spec.path, 1, 1)
            shown = "; ".join(uncovered[:limit])
            more = f" (and {len(uncovered) - limit} more)" if len(uncovered) > limit else ""
            problems.append(Diagnostic(loc, f"event {event.name!r}: no row matches {shown}{more}"))
    if progress is not None:
        progress(total, total)
    return problems
