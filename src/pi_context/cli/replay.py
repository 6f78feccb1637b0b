"""``pi-context replay --itf FILE``: an ITF trace (Quint's or ours) through our reducer."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ._options import add_spec, fail, resolve_specs


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="replay ITF traces through the generated reducer; the first step that disagrees",
        description=(
            "Replay each ITF trace (one written by `quint run --out-itf` over an exported "
            "module, or a `pi-context conformance --bundle` trace) through the spec's "
            "generated reducer and report the first step whose next state, effect or row "
            "differs. The spec is the one the trace names (its spec id, or the Quint module "
            "it was simulated from) unless --spec says. Exit status: 0 when every trace "
            "agrees, 1 when one disagrees, 2 when a trace cannot be read."
        ),
    )
    parser.add_argument(
        "--itf",
        type=Path,
        action="append",
        required=True,
        metavar="FILE",
        help="an ITF trace, or a folder of *.itf.json (repeatable)",
    )
    add_spec(parser, "the spec the traces are of (default: the one each trace names)")
    parser.add_argument("--json", action="store_true", help="one JSON object per trace")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pi_context.checks.conformance.itf import (
        ITFError,
        decode,
        itf_files,
        read_json,
        replay,
        spec_for,
        spec_hint,
    )
    from pi_context.statemachine.reset_control import committed_specs

    given = resolve_specs("replay", [args.spec]) if args.spec else []
    if given is None:
        return 2
    known = {s.id: s for s in committed_specs()} if not given else {}
    traces = disagreements = steps = 0
    for path in itf_files(args.itf):
        try:
            data = read_json(path)
            spec = given[0] if given else spec_for(spec_hint(data), known)
            if spec is None:
                hint = spec_hint(data) or "no spec"
                return fail("replay", f"{path}: names {hint!r}, not a committed spec; pass --spec")
            result = replay(spec, decode(spec, data, str(path)))
        except ITFError as err:
            return fail("replay", err)
        traces += 1
        steps += result.steps
        found = result.disagreement
        if args.json:
            row: dict[str, Any] = {"trace": str(path), "spec": spec.id, "steps": result.steps}
            if found is not None:
                row["disagreement"] = {
                    "step": found.step,
                    "kind": found.kind,
                    "event": found.event,
                    "trace": found.theirs,
                    "ours": found.ours,
                }
            print(json.dumps(row))
        elif found is not None:
            print(f"{path}: {spec.id}: {found.describe()}")
        disagreements += found is not None
    if traces == 0:
        return fail("replay", "no ITF trace found in " + ", ".join(map(str, args.itf)))
    if not args.json:
        print(
            f"{traces} traces ({steps} steps) replayed through our reducer: "
            f"{traces - disagreements} agree, {disagreements} disagree"
        )
    return 1 if disagreements else 0
