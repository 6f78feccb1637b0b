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

    python benchmarks/hostile_bounds.py [--repeat 3] [--cap 30] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

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
    return f">{cap:.0f} s" if value is None else f"{value * 1000:.3f} ms"


def ratio(base: float | None, ours: float | None, cap: float) -> str:
    if ours is None:
        return "-"
    if base is None:
        return f">{cap / max(ours, 1e-9):,.0f}x"
    return f"{base / max(ours, 1e-9):,.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cap", type=float, default=30.0)
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument(
        "--only", choices=["glob", "alias", "abstraction"], help="one kind (merged into --json)"
    )
    args = parser.parse_args()
    cap = args.cap
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as scratch:
        cases: list[tuple[str, str, tuple[str, list[str]], tuple[str, list[str]]]] = []
        patterns = [("*a" * k + "*b", NAME) for k in (4, 6, 8, 10, 14)]
        patterns += [("**/" * k + "x", PATH) for k in (8, 16, 24)]
        for pattern, path in patterns:
            glob_args = [pattern, path]
            cases.append(("glob", pattern, (GLOB_OURS, glob_args), (GLOB_REGEX, glob_args)))
        for levels in (4, 5, 6, 7, 12):
            file = Path(scratch) / f"alias{levels}.yaml"
            file.write_text(alias_doc(levels))
            name = f"{levels} levels (10^{levels} nodes)"
            cases.append(("alias", name, (ALIAS_OURS, [str(file)]), (ALIAS_BASE, [str(file)])))
        for count in (2, 5, 10, 20):
            file = Path(scratch) / f"ids{count}.yaml"
            file.write_text(spec_with_ids(count))
            name = f"{count} window ids"
            ours, base = (SPEC_LOAD, [str(file), "capped"]), (SPEC_LOAD, [str(file), "uncapped"])
            cases.append(("abstraction", name, ours, base))
        for kind, name, ours_run, base_run in cases:
            if args.only and kind != args.only:
                continue
            ours_t: list[float | None] = []
            base_t: list[float | None] = []
            for _ in range(args.repeat):  # interleaved: ours, baseline, ours, ...
                ours_t.append(timed(*ours_run, cap))
                base_t.append(timed(*base_run, cap) if base_t[-1:] != [None] else None)
            o, b = best(ours_t), best(base_t)
            rows.append({"kind": kind, "case": name, "ours_s": o, "baseline_s": b, "cap_s": cap})
            print(f"{kind:<12} {name:<34} ours {shown(o, cap):>12}  baseline {shown(b, cap):>12}"
                  f"  ratio {ratio(b, o, cap)}", flush=True)  # fmt: skip
    if args.json:
        if args.only and args.json.exists():
            earlier = json.loads(args.json.read_text())
            for row in earlier["rows"]:
                row.setdefault("cap_s", earlier.get("cap_s"))
            rows = [r for r in earlier["rows"] if r["kind"] != args.only] + rows
        body = {"repeat": args.repeat, "path": PATH, "name": NAME, "rows": rows}
        args.json.write_text(json.dumps(body, indent=2) + "\n")


if __name__ == "__main__":
    main()
