"""Naming replies that came back out of order in a pipelined batch.

The protocol has no request ids: the n-th reply answers the n-th request. An implementation
that answers a batch in the wrong order (a racy worker pool, a dropped or doubled line)
therefore shows up as wrong answers. A wrong answer is attributed to the order, not to the
reducer, only when the pattern is unmistakable: two neighbouring replies that are each
exactly the spec's answer to the other request (a swap), or a run of consecutive replies
that are each exactly the spec's answer to the request a fixed distance away (a shift).
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.checks.conformance.check import Problem
from pi_context.checks.conformance.traces import TraceStep

WINDOW = 4  # how far away (in requests) a misplaced reply is looked for
RUN = 3  # consecutive replies with the same offset that make a shift


def _offsets(steps: Sequence[TraceStep], n: int) -> set[int]:
    step = steps[n]
    if step.ok or step.kind not in ("mismatch", "consulted"):
        return set()
    reads = step.got_consulted
    got = (step.got_state, step.got_effect)
    found = set()
    for d in range(-WINDOW, WINDOW + 1):
        k = n + d
        if not d or not 0 <= k < len(steps):
            continue
        want = steps[k].want
        if got == (want.state, want.effect) and (
            not isinstance(reads, list) or tuple(reads) == want.consulted
        ):
            found.add(d)
    return found


def _answers(step: TraceStep, other: TraceStep) -> bool:
    """``step`` passed, but its reply is exactly the spec's answer to ``other`` too: the
    partner of a swap whose misplaced reply happens to be acceptable where it landed (a
    reply that reads more facts than the spec needs is allowed)."""
    if not step.ok:
        return False
    want = other.want
    reads = step.got_consulted
    return (step.got_state, step.got_effect) == (want.state, want.effect) and (
        not isinstance(reads, list) or tuple(reads) == want.consulted
    )


def misplaced(steps: Sequence[TraceStep]) -> dict[int, int]:
    """Case index -> the offset of the request its reply answers, for out-of-order replies."""
    offsets = [_offsets(steps, n) for n in range(len(steps))]
    out: dict[int, int] = {}
    for n, found in enumerate(offsets):  # swaps first: the stronger evidence
        if n in out:
            continue
        for d in sorted(found, key=lambda d: (abs(d), d)):
            k = n + d
            if k not in out and (-d in offsets[k] or _answers(steps[k], steps[n])):
                out[n], out[k] = d, -d
                break
    for n, found in enumerate(offsets):
        if n in out:
            continue
        for d in sorted(found, key=lambda d: (abs(d), d)):
            start = n
            while start > 0 and d in offsets[start - 1]:
                start -= 1
            stop = n
            while stop + 1 < len(steps) and d in offsets[stop + 1]:
                stop += 1
            run = range(start, stop + 1)
            wants = {repr((steps[m].want.state, steps[m].want.effect)) for m in run}
            if len(run) >= RUN and len(wants) > 1:  # a shift, not a constant wrong answer
                out[n] = d
                break
    return out


def relabel(step: TraceStep, n: int, offset: int | None) -> TraceStep:
    """The step with its mismatch renamed as an out-of-order reply."""
    if offset is None:
        return step
    message = (
        f"reply out of order: case {n + 1} got the spec's answer to case {n + 1 + offset} "
        f"(the request {abs(offset)} {'after' if offset > 0 else 'before'} it)"
    )
    return TraceStep(
        step.pre,
        step.event,
        step.want,
        step.got_state,
        step.got_effect,
        step.got_consulted,
        (Problem("out-of-order", message),),
    )


def summary(found: dict[int, int], total: int) -> str:
    first = min(found)
    swaps = sum(1 for n, d in found.items() if found.get(n + d) == -d)
    shape = "swapped in pairs" if swaps == len(found) else "shifted or reordered"
    return (
        f"replies came back out of order ({shape}): {len(found)} of {total} exhaustive "
        f"cases got the reply meant for another request, first at case {first + 1}"
    )
