"""Code-emission pieces shared by the generators of the typed and the wire reducer."""

from __future__ import annotations

from collections.abc import Callable

from pi_context.spec.model import Row, Spec


def row_chain(
    spec: Spec, event: str, guard_of: Callable[[Row], str], result_of: Callable[[Row], str]
) -> list[str]:
    """An event function's body after its preamble: the rows in table order, first match
    returns; a row whose guard is ``True`` ends the chain, else no match is an error."""
    out: list[str] = []
    for row in spec.rows_for(event):
        guard, result = guard_of(row), f"return {result_of(row)}"
        out.append(f"    # {row.id}: {row.why}")
        if guard == "True":
            out.append(f"    {result}")
            break
        out += [f"    if {guard}:", f"        {result}"]
    else:
        out.append(f"    raise AssertionError('no row of {event} matched')")
    out.append("")
    return out
