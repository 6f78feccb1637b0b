"""Bounded work on hostile input (issue 31): the notes glob matcher, YAML alias counting and
the abstraction cap, each ours against a named baseline, both measured the same way.

Every measurement runs in a fresh process with a wall-clock cap (``--cap`` seconds): the
baselines can run for minutes, holding the GIL, so only a process bound stops them. The
time is taken inside the child around the work alone (imports excluded); the best of
``--repeat`` interleaved rounds counts. A baseline that hits the cap is shown as ``>cap``.

* glob: ``*a`` repeated k times then ``*b`` (a pattern of 2k+2 characters) against the
  43-character note name ``aaa…a.md``, and ``**/`` repeated k times then ``x`` against an
  ordinary 230-character path of four segments. Baseline
  ``regex``: the earlier translation of the same glob into a backtracking regex.
* alias: a YAML document of L nested levels of ten aliases each (10^L nodes when
  expanded). Ours: composing it (refused at the limit). Baseline ``safe_load+walk``:
  PyYAML's ``safe_load`` and one walk over the expanded value (what reading it costs).
* abstraction: ``reset-control@0.34`` with the window abstraction of n ids. Ours: ``load``
  (the table check under the cap, the refusal past it). Baseline ``uncapped``: the same load
  with the cap lifted.

Every row has a bound ours must stay within (the baselines have none), and the rows go to
``benchmarks/results/hostile_bounds.json`` (``results.py``), from which the tables of
README.md and docs/benchmarks/hostile.md are generated (``python benchmarks/tables.py``).

    python benchmarks/hostile_bounds.py [--repeat 3] [--cap 30] [--only abstraction]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from results import RESULTS, read, row, write

PATH = "projects/alpha-0123456789/" + "a" * 200 + "/notes.md"
NAME = "a" * 40 + ".md"
"""A note at the top of its home whose name repeats one letter (the ``*a…*b`` case)."""

GLOB_OURS = """
import sys, time
from pi_context.bindings.notes.address import compile_glob
pattern, path = sys.argv[1], sys.argv[2]
matcher = compile_glob(pattern)
t = time.perf_counter(); matcher.matches(path); print(time.perf_counter() - t)
"""

GLOB_REGEX = """
import re, sys, time
pattern, path = sys.argv[1], sys.argv[2]
pieces = []
for seg in pattern.split("/"):
    if seg == "**":
        pieces.append("(?:/[^/]+)*")
    else:
        pieces.append("/" + "".join(
            "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in seg))
regex = re.compile("".join(pieces), re.DOTALL)
t = time.perf_counter(); regex.fullmatch("/" + path); print(time.perf_counter() - t)
"""

ALIAS_OURS = """
import sys, time
from pi_context.spec.yamlcompose import compose
text = open(sys.argv[1]).read()
t = time.perf_counter()
try:
    compose(text)
except Exception:
    pass
print(time.perf_counter() - t)
"""

ALIAS_BASE = """
import sys, time, yaml
text = open(sys.argv[1]).read()
t = time.perf_counter()
stack, count = [yaml.safe_load(text)], 0
while stack:
    value = stack.pop(); count += 1
    if isinstance(value, dict):
        stack.extend(value.values())
    elif isinstance(value, list):
        stack.extend(value)
print(time.perf_counter() - t)
"""

SPEC_LOAD = """
import sys, time
from pi_context.spec import SpecError, abstraction, load
if sys.argv[2] == "uncapped":
    abstraction.MAX_CASES = 10**18
t = time.perf_counter()
try:
    load(sys.argv[1])
except SpecError:
    pass
print(time.perf_counter() - t)
"""


def timed(code: str, args: list[str], cap: float) -> float | None:
    """Seconds the child measured, or ``None`` when it hit the cap."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=cap
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return float(done.stdout.strip().splitlines()[-1])


def alias_doc(levels: int) -> str:
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def spec_with_ids(count: int) -> str:
    from pi_context.spec import SPECS_DIR

    base = (SPECS_DIR / "reset-control@0.34.yaml").read_text(encoding="utf-8")
    ids = ", ".join(f"w{i}" for i in range(1, count + 1))
    return base.replace("abstraction: [w1, w2]", f"abstraction: [{ids}]")


def best(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return min(got) if len(got) == len(values) else None


def shown(value: float | None, cap: float) -> str:
    if value is None:
        return f"> {cap:.0f} s"
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.3g} ms"


def ratio(base: float | None, ours: float | None, cap: float) -> str:
    if ours is None:
        return "-"
    if base is None:
        return f"> {cap / max(ours, 1e-9):,.0f}×"
    times = base / max(ours, 1e-9)
    return f"{times:.1f}×" if times < 100 else f"{times:,.0f}×"


def cases(file: Path) -> int:
    """The abstraction's states × event instances of the spec ``file``, counted (not
    enumerated) as the loader's cap counts them."""
    from pi_context.spec import abstraction, load

    capped = abstraction.MAX_CASES
    abstraction.MAX_CASES = 10**18
    try:
        spec = load(file, analyse=False)
    finally:
        abstraction.MAX_CASES = capped
    return abstraction.state_count(spec) * sum(abstraction.instance_count(e) for e in spec.events)


# One bound per kind: what ours must stay within whatever the input (the baselines have none).
GLOB_BOUND_S = 0.001
ALIAS_BOUND_S = 0.01
REFUSAL_BOUND_S = 1.0
SAME_WORK = 1.5
"""Under the cap the capped load does the uncapped load's work: within this ratio of it."""


def verdict(kind: str, ours: float | None, base: float | None, refused: bool) -> tuple[str, bool]:
    """The row's target and whether ours met it."""
    if ours is None:
        return "-", False
    if kind == "glob":
        return f"≤ {GLOB_BOUND_S * 1000:g} ms", ours <= GLOB_BOUND_S
    if kind == "alias":
        return f"≤ {ALIAS_BOUND_S * 1000:g} ms", ours <= ALIAS_BOUND_S
    if refused:
        return f"refused in ≤ {REFUSAL_BOUND_S:g} s", ours <= REFUSAL_BOUND_S
    return (
        f"within {SAME_WORK}× of uncapped (the same work)",
        base is None or ours <= SAME_WORK * base,
    )


class Case(NamedTuple):
    kind: str
    id: str
    measures: str
    ours: tuple[str, list[str]]
    baseline: tuple[str, list[str]]
    refused: bool
    """Ours refuses this input (past a limit) rather than doing the work."""


def glob_cases() -> Iterator[Case]:
    for k in (4, 6, 8, 10, 14):
        pattern = "*a" * k + "*b"
        run = [pattern, NAME]
        what = (
            f"notes glob `*a` × {k} + `*b` ({len(pattern)} characters) against the note name "
            "`aaa…a.md` (43 characters)"
        )
        yield Case("glob", f"glob-star-a-{k}", what, (GLOB_OURS, run), (GLOB_REGEX, run), False)
    for k in (8, 16, 24):
        run = ["**/" * k + "x", PATH]
        what = f"notes glob `**/` × {k} + `x` against a 230-character path of four segments"
        yield Case("glob", f"glob-globstar-{k}", what, (GLOB_OURS, run), (GLOB_REGEX, run), False)


def refuses(text: str) -> bool:
    """Our composer refuses ``text`` (its aliases expand past the limit): bounded, so asked
    here in the parent."""
    import yaml

    from pi_context.spec.yamlcompose import compose

    try:
        compose(text)
    except yaml.YAMLError:
        return True
    return False


def alias_cases(scratch: Path) -> Iterator[Case]:
    for levels in (4, 5, 6, 7, 12):
        file = scratch / f"alias{levels}.yaml"
        file.write_text(alias_doc(levels))
        refused = refuses(file.read_text())
        outcome = "refused" if refused else "composed"
        what = f"YAML of {levels} levels of ten aliases (10^{levels} nodes expanded), {outcome}"
        run = [str(file)]
        yield Case("alias", f"alias-{levels}", what, (ALIAS_OURS, run), (ALIAS_BASE, run), refused)


def abstraction_cases(scratch: Path) -> Iterator[Case]:
    from pi_context.spec.abstraction import MAX_CASES

    for count in (2, 5, 10, 20):
        file = scratch / f"ids{count}.yaml"
        file.write_text(spec_with_ids(count))
        n = cases(file)
        refused = n > MAX_CASES
        outcome = f"refused past the {MAX_CASES:,} cap" if refused else "checked"
        published = " (published)" if count == 2 else ""
        what = (
            f"`reset-control@0.34` load, window abstraction of {count} ids{published}: "
            f"{n:,} cases, {outcome}"
        )
        ours, base = (SPEC_LOAD, [str(file), "capped"]), (SPEC_LOAD, [str(file), "uncapped"])
        yield Case("abstraction", f"abstraction-{count}-ids", what, ours, base, refused)


BASELINES = {
    "glob": "backtracking regex",
    "alias": "`safe_load` + walk",
    "abstraction": "uncapped load",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cap", type=float, default=30.0)
    parser.add_argument(
        "--only", choices=sorted(BASELINES), help="one kind (the others' rows are kept)"
    )
    args = parser.parse_args()
    cap = args.cap
    rows: list[dict[str, object]] = []
    file = RESULTS / "hostile_bounds.json"
    earlier = read(file) if args.only and file.exists() else None
    with tempfile.TemporaryDirectory() as scratch:
        kinds = {
            "glob": glob_cases,
            "alias": lambda: alias_cases(Path(scratch)),
            "abstraction": lambda: abstraction_cases(Path(scratch)),
        }
        for kind, cases_of in kinds.items():
            if args.only and kind != args.only:
                if earlier is not None:  # an --only run keeps the other kinds' rows
                    rows += [r for r in earlier["rows"] if str(r["id"]).startswith(kind)]
                continue
            for case in cases_of():
                rows.append(measure(case, args.repeat, cap))
    write(
        __file__,
        rows,
        note=f"best of {args.repeat} interleaved fresh processes, each capped at {cap:.0f} s",
    )


def measure(case: Case, repeat: int, cap: float) -> dict[str, object]:
    """``case`` timed ``repeat`` times each side, interleaved, as a result row."""
    ours_t: list[float | None] = []
    base_t: list[float | None] = []
    for _ in range(repeat):  # interleaved: ours, baseline, ours, ...
        ours_t.append(timed(*case.ours, cap))
        base_t.append(timed(*case.baseline, cap) if base_t[-1:] != [None] else None)
    o, b = best(ours_t), best(base_t)
    target, met = verdict(case.kind, o, b, case.refused)
    verdict_text = "met" if met else "NOT MET"
    print(
        f"{case.id:<22} ours {shown(o, cap):>10}  baseline {shown(b, cap):>10}  "
        f"ratio {ratio(b, o, cap)}  {target}: {verdict_text}",
        flush=True,
    )
    return row(
        case.id,
        case.measures,
        shown(o, cap),
        baseline=f"{BASELINES[case.kind]} {shown(b, cap)}",
        ratio=ratio(b, o, cap),
        target=target,
        met=met,
    )


if __name__ == "__main__":
    main()
