"""How long `pi-context audit` takes on a long session, and whether it grows linearly.

A lifecycle-faithful session is built from the demo's own: the demo (our runtime, a scripted
model) writes a session of 8 windows; its windows after the first are tiled, each copy with
fresh entry ids and a fresh window id, into sessions of 10,000 and 100,000 entries (every
copy is a run the spec allows, so the search works through the whole file). Each size is
audited in a fresh process (reading the file and searching), interleaved, best of
``--rounds``; the script prints both times and their ratio (10 for linear) and records them in
``benchmarks/results/audit_bench.json`` (the table of ``docs/benchmarks/audit.md`` is
generated from it).

    python benchmarks/audit_bench.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from results import row, write

SIZES = (10_000, 100_000)
SPEC = "reset-control@0.34"


def demo_session(home: Path) -> list[dict[str, Any]]:
    subprocess.run(
        [sys.executable, "-m", "pi_context", "demo", "--dir", str(home), "--quiet", "--spec", SPEC],
        check=True,
        capture_output=True,
    )
    (path,) = home.rglob("sessions/*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tiled(entries: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """The demo session with its later windows repeated until it has ``size`` entries."""
    header, body = entries[0], entries[1:]
    sid8 = header["id"][:8]
    markers = [i for i, e in enumerate(body) if e.get("customType") == "pi-context/reset-marker"]
    start = markers[0] - 1  # from the first window's checkpoint on
    head, tile = body[:start], body[start:]
    out = [header, *head]
    copy = 0
    while len(out) < size:
        copy += 1
        rename: dict[str, str] = {}
        for entry in tile:
            if len(out) >= size:
                break
            clone = json.loads(json.dumps(entry))
            new_id = f"{copy:04x}{len(out) % 0xFFFF:04x}"
            rename[entry["id"]] = new_id
            clone["id"] = new_id
            if clone.get("type") == "compaction":
                clone["firstKeptEntryId"] = new_id
            for key in ("data", "details"):
                window = (
                    (clone.get(key) or {}).get("windowId")
                    if isinstance(clone.get(key), dict)
                    else None
                )
                if isinstance(window, str) and not window.endswith(":root"):
                    clone[key]["windowId"] = f"pcw:{sid8}:{copy:04x}{window[-4:]}"
            out.append(clone)
    previous = None
    for entry in out[1:]:
        entry["parentId"] = previous
        previous = entry["id"]
    return trim(out)


def trim(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cut a boundary the size limit split (a marker without its boot and continuation)."""
    while entries and entries[-1].get("type") in ("compaction", "custom", "custom_message"):
        entries.pop()
    return entries


def audit_seconds(path: Path) -> tuple[float, str]:
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "t = time.perf_counter()\n"
        "from pi_context.checks.audit.verdict import audit_observations, read_observations\n"
        "from pi_context.statemachine.reset_control import resolve_spec\n"
        f"v = audit_observations(resolve_spec({SPEC!r}), read_observations(Path(sys.argv[1])))\n"
        "print(time.perf_counter() - t, v.explained, v.observations)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], check=True, capture_output=True, text=True
    )
    seconds, explained, observations = done.stdout.split()
    if explained != "True":
        raise SystemExit(f"{path.name}: not explained; the benchmark session is broken")
    return float(seconds), observations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pi-context-audit-bench-") as tmp:
        root = Path(tmp)
        base = demo_session(root / "demo")
        paths: dict[int, Path] = {}
        for size in SIZES:
            path = root / f"audit-{size}.jsonl"
            lines = (json.dumps(e, ensure_ascii=False) for e in tiled(base, size))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            paths[size] = path
        best: dict[int, float] = {size: float("inf") for size in SIZES}
        seen: dict[int, str] = {}
        for _ in range(args.rounds):
            for size in SIZES:  # interleaved, fresh processes
                seconds, observations = audit_seconds(paths[size])
                best[size] = min(best[size], seconds)
                seen[size] = observations
    small, large = SIZES
    ratio = best[large] / best[small]
    print("| entries | observations | time |")
    print("| --- | --- | --- |")
    for size in SIZES:
        print(f"| {size:,} | {seen[size]} | {best[size]:.2f} s |")
    print(f"ratio {large:,} / {small:,} entries: {ratio:.1f}x ({large // small}x is linear)")
    rows = [
        row(
            f"entries-{size}",
            f"`pi-context audit` of a {size:,}-entry session against {SPEC}, fresh process",
            f"{best[size]:.2f} s ({seen[size]} observations)",
        )
        for size in SIZES
    ]
    rows.append(
        row(
            "linear",
            f"`pi-context audit` time at {large:,} entries against {small:,}",
            f"{ratio:.1f}×",
            baseline=f"{small:,} entries: {best[small]:.2f} s",
            ratio=f"{ratio:.1f}×",
            target=f"≤ {large // small}× (linear)",
            met=ratio <= large / small,
        )
    )
    write(__file__, rows, note=f"best of {args.rounds}, sizes interleaved, fresh processes")


if __name__ == "__main__":
    main()
