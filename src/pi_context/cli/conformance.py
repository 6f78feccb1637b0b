"""``pi-context conformance``: check an implementation against the specs over stdio."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_context.spec import SpecError

from ._options import (
    add_json_report,
    add_quiet,
    add_spec,
    check_paths,
    fail,
    resolve_specs,
    spec_exit,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="check an implementation of reset-control against the specs (stdio protocol)",
        description=(
            "Start the implementation command, speak the conformance protocol with it "
            "(docs/conformance-protocol.md) and check every case of each spec's finite "
            "abstraction plus random traces driven by hypothesis. Reports per event type and "
            "per table row, with the shortest failing traces; exits 0 only if everything "
            "conforms."
        ),
    )
    parser.add_argument(
        "--impl", required=True, metavar="CMD", help='the implementation, e.g. "pi-context serve"'
    )
    add_spec(
        parser,
        "spec id or file to check; repeatable (default: every committed spec it serves)",
        many=True,
    )
    parser.add_argument("--examples", type=int, default=100, help="random traces per spec")
    parser.add_argument("--steps", type=int, default=30, help="maximum steps per random trace")
    parser.add_argument("--seed", type=int, help="hypothesis seed (default: derandomized)")
    parser.add_argument(
        "--timeout", type=float, default=5.0, help="seconds to wait for each reply (default 5)"
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        metavar="SEC",
        help="seconds to wait for the first reply after the implementation starts "
        "(default: the larger of --timeout and 10)",
    )
    add_json_report(parser, "write a JSON report")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument(
        "--bundle",
        type=Path,
        metavar="DIR",
        default=Path("pi-context-conformance"),
        help="where failing traces are written as ITF JSON + Mermaid "
        "(default: ./pi-context-conformance, only when something fails)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="replay one failing trace (an .itf.json from a bundle) instead of a full run",
    )
    parser.add_argument("--no-exhaustive", action="store_true", help="skip the exhaustive set")
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="implementation processes at work at once (default: 2 when the machine has more "
        "than one CPU: one runs the exhaustive sets while the other runs random traces; "
        "1 checks everything through one process)",
    )
    parser.add_argument(
        "--reducer-only",
        action="store_true",
        help="leave out the events a spec says its extension decides (scope: extension), "
        "for a published reducer run without its extension",
    )
    add_quiet(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ._extras import missing

    absent = missing("conformance")
    if absent is not None:
        return absent
    # a terminated run still stops the implementation's process group (via finally/atexit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from pi_context.checks.conformance.runner import script_problem

    problem = script_problem(args.impl, Path.cwd())
    if problem is not None:
        from pi_context.codegen.outputs import SOURCE_ROOT

        adapter = SOURCE_ROOT / "bindings-ts" / "adapter.mjs"
        if adapter.name in args.impl and adapter.is_file():
            problem += f'; the TypeScript adapter is --impl "node {adapter}"'
        return fail("conformance", f"--impl: {problem}")
    bad = _usage(args)
    if bad is not None:
        return bad
    impl = _start_early(args)
    twin = _start_twin(impl, args)
    from pi_context.checks.conformance import report as rep
    from pi_context.checks.conformance.runner import run_conformance

    specs = resolve_specs("conformance", args.spec) if args.spec else None
    if args.spec and specs is None:
        _stop(impl)
        _stop(twin)
        return spec_exit(args.spec)
    if args.replay is not None:
        _stop(impl)
        _stop(twin)
        return _replay(args, specs)
    from pi_context.checks.hypothesis_home import keep_out_of_cwd
    from pi_context.spec import spec_paths

    keep_out_of_cwd([Path(spec.path) for spec in specs] if specs else spec_paths())
    try:
        report = run_conformance(
            impl if impl is not None else args.impl,
            specs,
            examples=args.examples,
            steps=args.steps,
            seed=args.seed,
            timeout=args.timeout,
            startup_timeout=args.startup_timeout,
            exhaustive=not args.no_exhaustive,
            show=not args.quiet,
            reducer_only=args.reducer_only,
            jobs=args.jobs,
            twins=[twin] if twin is not None else [],
        )
    except ValueError as err:  # e.g. an empty or unparsable command
        return fail("conformance", f"--impl: {err}")
    print(rep.render_text(report))
    # Every output is attempted, whatever happened to the others: a report is worth most
    # when the implementation was at its worst.
    if args.json:
        _write(args.json, lambda: rep.dumps(rep.to_json(report)))
    if args.junit:
        _write(args.junit, lambda: rep.to_junit(report))
    if not report.ok:
        try:
            written = rep.write_bundle(report, args.bundle)
        except OSError as err:
            fail("conformance", f"cannot write the bundle: {err}")
            written = []
        if written:
            print(f"\nfailing traces written to {args.bundle}/ (ITF JSON + Mermaid):")
            for path in written:
                print(f"  {path}")
            itf = next(p for p in written if p.suffix == ".json")
            print(f'replay one with: pi-context conformance --impl "{args.impl}" --replay {itf}')
    return 0 if report.ok else 1


def _start_early(args: argparse.Namespace) -> Any:
    """Start the implementation before our own imports, so its start-up runs alongside them
    (a full run, valid options only); None when it cannot be started here — the runner then
    starts it and reports why it failed."""
    if args.replay is not None or args.timeout <= 0 or (args.startup_timeout or 1) <= 0:
        return None
    from pi_context.checks.conformance.transport import Implementation, ImplementationFailure

    try:
        impl = Implementation(args.impl, timeout=args.timeout, startup_timeout=args.startup_timeout)
        impl.start()
    except (ValueError, ImplementationFailure):
        return None
    return impl


def _start_twin(impl: Any, args: argparse.Namespace) -> Any:
    """A second process of the implementation, started early too, when the run will check
    more than one spec through two (``--jobs``; default: on more than one CPU)."""
    from pi_context.checks.conformance import default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    if impl is None or jobs < 2 or (args.spec is not None and len(args.spec) < 2):
        return None
    return impl.start_twin()


def _stop(impl: Any) -> None:
    if impl is not None:
        impl.close()


def _usage(args: argparse.Namespace) -> int | None:
    """The usage error of the command line, said on stderr (exit 2), or None."""
    startup = args.startup_timeout
    for option, bad, rule in (
        ("--examples", args.examples < 0, ">= 0"),
        ("--steps", args.steps < 1, ">= 1"),
        ("--timeout", args.timeout <= 0, "> 0"),
        ("--startup-timeout", startup is not None and startup <= 0, "> 0"),
        ("--jobs", args.jobs is not None and args.jobs < 1, ">= 1"),
    ):
        if bad:
            value = getattr(args, option[2:].replace("-", "_"))
            return fail("conformance", f"{option} {value}: must be {rule}")
    if args.replay is not None:
        ignored = [
            option
            for option, given in (
                ("--json", args.json is not None),
                ("--junit", args.junit is not None),
                ("--no-exhaustive", args.no_exhaustive),
                ("--reducer-only", args.reducer_only),
                ("--jobs", args.jobs is not None),
            )
            if given
        ]
        if ignored:
            return fail("conformance", f"--replay replays one trace: {ignored[0]} does not apply")
    return check_paths(
        "conformance",
        ("--replay", args.replay, "file"),
        ("--json", args.json, "parent"),
        ("--junit", args.junit, "parent"),
        ("--bundle", args.bundle, "parent"),
    )


def _replay(args: argparse.Namespace, specs: list[Any] | None) -> int:
    from pi_context.checks.conformance.report import load_itf
    from pi_context.checks.conformance.traces import replay
    from pi_context.checks.conformance.transport import Implementation
    from pi_context.codegen.fresh import reset_control
    from pi_context.statemachine.reset_control import resolve_spec

    try:
        spec_id, initial, events = load_itf(args.replay)
        spec = next((s for s in specs or [] if s.id == spec_id), None) or resolve_spec(spec_id)
    except (ValueError, SpecError) as err:
        return fail("conformance", err)
    gen = reset_control(spec)
    try:
        gen.wire.state_from_wire(initial, "initial")
        for i, event in enumerate(events, 1):
            gen.wire.event_from_wire(event, f"states[{i}].event")
    except ValueError as err:
        return fail("conformance", f"{args.replay}: {err}")
    try:
        with Implementation(
            args.impl, timeout=args.timeout, startup_timeout=args.startup_timeout
        ) as impl:
            trace = replay(impl, spec, gen, initial, events, f"replay of {args.replay}")
    except ValueError as err:
        return fail("conformance", f"--impl: {err}")
    print(f"{spec.id}: replaying {len(events)} step(s) against {args.impl}")
    print(trace.render(spec))
    if trace.failing is not None:
        print(f"DOES NOT CONFORM at step {len(trace)}")
        return 1
    print("conforms on this trace")
    return 0


def _write(path: Path, render: Callable[[], str]) -> None:
    try:
        text = render()
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        fail("conformance", f"cannot write {path}: {err}")
