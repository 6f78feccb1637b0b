"""A second opinion on every spec: the pinned Quint CLI over the exported modules.

``npm ci`` installs the Quint CLI pinned by ``quint/package-lock.json`` into ``.cache/quint``
(git-ignored; reinstalled only when the lock changes). For each spec, ``quint typecheck``
checks its module, ``quint run`` (the TypeScript simulator: the default Rust backend would
download a binary) simulates it against every invariant and writes each sampled trace as ITF,
and every trace is replayed through our generated reducer
(:mod:`pi_context.checks.conformance.itf`).
From a shell: ``python -m pi_context.checks.quintcheck [--samples N]``.
"""

from __future__ import annotations

import argparse
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pi_context.codegen.outputs import SOURCE_ROOT
from pi_context.codegen.quint import quint_module
from pi_context.codegen.quint_names import module_file
from pi_context.codegen.tsbuild import ToolchainUnavailable, npm_install, run_output
from pi_context.spec.model import Spec

PINS = SOURCE_ROOT / "quint"
CACHE = SOURCE_ROOT / ".cache" / "quint"
SAMPLES = 1000
"""Traces simulated (and replayed) per spec by default."""
STEPS = 20
"""Steps per simulated trace."""


def install() -> Path:
    """The pinned ``quint`` CLI script (installing it if the lock changed)."""
    entry = "node_modules/@informalsystems/quint/dist/src/cli.js"
    return npm_install(PINS, CACHE, entry, "pinned Quint CLI")


def quint(args: list[str], what: str, cwd: Path, timeout: float = 600) -> str:
    """Run the pinned CLI; its output, or ToolchainUnavailable with what it said."""
    node = shutil.which("node") or "node"
    return run_output([node, str(install()), *args], what, cwd=cwd, timeout=timeout)


@dataclass(frozen=True)
class Simulation:
    """What ``quint run`` said: the invariants it found violated (none: it found no issue),
    the seed that reproduces the run, and what it printed."""

    violated: tuple[str, ...]
    seed: str
    output: str


def _run(args: list[str], path: Path, cwd: Path, timeout: float) -> tuple[int, str]:
    node = shutil.which("node") or "node"
    try:
        done = subprocess.run(
            [node, str(install()), "run", str(path), "--backend", "typescript", *args],
            cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise ToolchainUnavailable(f"quint run {path.name} took longer than {timeout:g}s") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode not in (0, 1) or (done.returncode == 1 and "[violation]" not in output):
        raise ToolchainUnavailable(
            f"quint run {path.name} failed (status {done.returncode}):\n{output}"
        )
    return done.returncode, output


def simulate(
    path: Path,
    invariants: list[str],
    out: Path,
    *,
    samples: int = SAMPLES,
    steps: int = STEPS,
    seed: str | None = None,
    timeout: float = 900,
) -> Simulation:
    """``quint run`` over ``path`` checking ``invariants``, each of ``samples`` traces written
    as ITF into ``out``; ToolchainUnavailable when Quint fails otherwise.

    On a violation the run is repeated with the same seed keeping one trace: Quint then names
    the violated invariants (it evaluates them on the trace it keeps, which among many need
    not be the violating one) and ``out`` holds just that counterexample."""
    seed = seed or hex(secrets.randbits(48))
    common = ["--max-samples", str(samples), "--max-steps", str(steps), "--seed", seed]
    common += ["--invariants", *invariants]
    target = ["--out-itf", str(out / "trace{seq}.itf.json")]
    status, output = _run([*common, "--n-traces", str(samples), *target], path, out, timeout)
    if status == 0:
        return Simulation((), seed, output)
    for old in out.glob("*.itf.json"):
        old.unlink()
    status, output = _run([*common, "--n-traces", "1", *target], path, out, timeout)
    violated = tuple(re.findall(r"^\s*\u274c (\w+)\s*$", output, re.MULTILINE))
    if status == 1 and not violated and len(invariants) == 1:
        violated = tuple(invariants)  # Quint names them only when there are several
    if status == 0 or not violated:
        raise ToolchainUnavailable(
            f"quint run {path.name}: a violation with seed {seed} that a repeat did not name:\n"
            + output
        )
    return Simulation(violated, seed, output)


def invariant_names(spec: Spec) -> list[str]:
    """The Quint names of every invariant the exported module checks, in its order."""
    from pi_context.codegen.quint_names import qname

    names = [qname(i.id) for i in spec.state_invariants]
    names += [qname(i.id) for i in spec.transition_invariants]
    names += [f"trace_{qname(p.id)}" for p in spec.traces]
    return [*names, "table_complete"]


@dataclass
class SpecCheck:
    """What Quint and the replay said of one spec."""

    spec: str
    module: str
    traces: int = 0
    steps: int = 0
    disagreements: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and not self.disagreements


def module_path(spec: Spec, scratch: Path) -> Path:
    """The committed module when it is the spec's export, else a fresh one in ``scratch``."""
    text = quint_module(spec)
    committed = SOURCE_ROOT / module_file(spec)
    if committed.is_file() and committed.read_text(encoding="utf-8") == text:
        return committed
    fresh = scratch / f"{spec.module_name}.qnt"
    fresh.write_text(text, encoding="utf-8")
    return fresh


def check_spec(
    spec: Spec, *, samples: int = SAMPLES, steps: int = STEPS, seed: str | None = None
) -> SpecCheck:
    """Type-check, simulate and replay one spec; problems and disagreements collected."""
    from pi_context.checks.conformance.itf import decode, itf_files, read_json, replay

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pi-context-quint-") as tmp:
        scratch = Path(tmp)
        path = module_path(spec, scratch)
        result = SpecCheck(spec.id, str(path))
        out = scratch / "traces"
        out.mkdir()
        try:
            quint(["typecheck", str(path)], f"quint typecheck {path.name}", cwd=scratch)
            run = simulate(
                path, invariant_names(spec), out, samples=samples, steps=steps, seed=seed
            )
        except ToolchainUnavailable as err:
            result.problems.append(str(err))
            result.seconds = time.monotonic() - started
            return result
        if run.violated:
            found = ", ".join(run.violated)
            result.problems.append(f"Quint found invariants violated: {found} (seed {run.seed})")
        for trace_file in itf_files([out]):
            replayed = replay(spec, decode(spec, read_json(trace_file), str(trace_file.name)))
            result.traces += 1
            result.steps += replayed.steps
            if replayed.disagreement is not None:
                result.disagreements.append(
                    f"{trace_file.name}: {replayed.disagreement.describe()}"
                )
        if result.traces < samples:
            result.problems.append(f"quint wrote {result.traces} traces, not {samples}")
    result.seconds = time.monotonic() - started
    return result


def summary(result: SpecCheck) -> str:
    verdict = "ok" if result.ok else "FAILED"
    return (
        f"{result.spec}: typecheck and simulation over every invariant {verdict}; "
        f"{result.traces} Quint traces ({result.steps} steps) replayed through our reducer, "
        f"{len(result.disagreements)} disagreements ({result.seconds:.1f}s)"
    )


def main(argv: list[str] | None = None) -> int:
    from pi_context.statemachine.reset_control import committed_specs, resolve_spec

    parser = argparse.ArgumentParser(
        prog="python -m pi_context.checks.quintcheck",
        description="Type-check, simulate and replay every spec's Quint export.",
    )
    parser.add_argument("--spec", action="append", help="a spec id or file (default: all)")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="traces per spec")
    parser.add_argument("--steps", type=int, default=STEPS, help="steps per trace")
    args = parser.parse_args(argv)
    specs = [resolve_spec(s) for s in args.spec] if args.spec else committed_specs()
    failed = 0
    for spec in specs:
        result = check_spec(spec, samples=args.samples, steps=args.steps)
        print(summary(result), flush=True)
        for line in result.problems + result.disagreements[:5]:
            print(f"  {line}")
        failed += not result.ok
    print(f"Quint: {len(specs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
