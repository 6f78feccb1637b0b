"""Hostile spec files end in a clean file:line:col error, never a RecursionError, and large
tables load in time linear in their rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.spec import SPECS_DIR, SpecError, load
from pi_context.spec import expr as ex
from pi_context.spec.abstraction import MAX_CASES, case_count
from pi_context.spec.yamlcompose import MAX_ALIAS_NODES, AliasExpansionError, compose
from pi_context.spec.yamlcompose import MAX_DEPTH as YAML_DEPTH

BASE = (SPECS_DIR / "reset-control@0.26.yaml").read_text(encoding="utf-8")
GUARD = "when: 'true'"


def with_guard(tmp_path: Path, guard: str) -> Path:
    path = tmp_path / "deep.yaml"
    assert GUARD in BASE, "the base spec must have a guard to replace"
    path.write_text(BASE.replace(GUARD, f'when: "{guard}"', 1), encoding="utf-8")
    return path


def only_diagnostic(path: Path) -> str:
    with pytest.raises(SpecError) as info:
        load(path)
    (diagnostic,) = info.value.diagnostics
    return str(diagnostic)


def guard_position(path: Path) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    line = text[: text.index('when: "')].count("\n") + 1
    col = text.splitlines()[line - 1].index('"') + 2  # inside the quotes
    return line, col


@pytest.mark.parametrize(
    ("name", "guard"),
    [
        ("parentheses", "(" * 250 + "request.phase == 'none'" + ")" * 250),
        ("not", "not " * 500 + "facts.x"),
        ("or", " or ".join(["request.phase == 'none'"] * 500)),
        ("and", " and ".join(["request.phase == 'none'"] * 500)),
        ("mixed", "not (" * 200 + "true" + ")" * 200),
    ],
)
def test_deep_guards_are_refused_with_a_position(tmp_path: Path, name: str, guard: str) -> None:
    path = with_guard(tmp_path, guard)
    message = only_diagnostic(path)
    line, col = guard_position(path)
    prefix = f"{path}:{line}:"
    assert message.startswith(prefix), message
    column = int(message[len(prefix) :].split(":", 1)[0])
    assert column > col  # the position where the limit is crossed, inside the guard
    assert f"expression nests more than {ex.MAX_DEPTH} levels" in message


def test_a_guard_at_the_limit_still_loads(tmp_path: Path) -> None:
    inner = "request.phase == 'none'"
    ok = "(" * ex.MAX_DEPTH + inner + ")" * ex.MAX_DEPTH
    load(with_guard(tmp_path, ok), analyse=False)
    too_deep = "(" + ok + ")"
    assert "nests more than" in only_diagnostic(with_guard(tmp_path, too_deep))


def test_deep_yaml_flow_nesting_is_refused_with_a_position(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(BASE.replace("\nrows:", "\nextra: " + "[" * 500 + "]" * 500 + "\nrows:"))
    message = only_diagnostic(path)
    line = path.read_text().splitlines().index("extra: " + "[" * 500 + "]" * 500) + 1
    # the bracket that opens level MAX_DEPTH + 1 (the document mapping is level 1)
    assert message.startswith(f"{path}:{line}:{len('extra: ') + YAML_DEPTH}: "), message
    assert f"more than {YAML_DEPTH} levels of nested mappings and lists" in message


def test_deep_block_nesting_is_refused_too(tmp_path: Path) -> None:
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(300)) + "  " * 300 + "x\n"
    path = tmp_path / "block.yaml"
    path.write_text(block)
    assert "levels of nested mappings and lists" in only_diagnostic(path)


def test_verify_reports_a_deep_spec_without_a_traceback(tmp_path: Path) -> None:
    path = with_guard(tmp_path, "(" * 300 + "true" + ")" * 300)
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "verify", "--spec", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert f"{path}:" in done.stderr + done.stdout


def test_a_large_table_loads_and_every_shadowed_row_is_named(tmp_path: Path) -> None:
    n = 20_000
    first = "  - id: clear.clear\n"
    assert first in BASE
    extra = "".join(
        f"  - id: clear.extra{i}\n    on: clear\n    when: 'true'\n    effect: none\n"
        f"    why: shadowed.\n"
        for i in range(n)
    )
    end = BASE.index("\n", BASE.index("why:", BASE.index(first))) + 1
    path = tmp_path / "large.yaml"
    path.write_text(BASE[:end] + extra + BASE[end:])
    # Loading time as the table grows is measured by benchmarks/spec_load.py.
    with pytest.raises(SpecError) as info:
        load(path)
    messages = [d.message for d in info.value.diagnostics]
    assert len(messages) == n
    assert messages[-1] == (
        f"row 'clear.extra{n - 1}' is unreachable: every input it matches is taken by "
        "earlier rows (clear.clear)"
    )


# --- aliases (issue 31, finding 8: a 28 KB alias bomb under refines.embed.states took verify
# past 1.9 GB) -----------------------------------------------------------------------------------


def alias_bomb(levels: int) -> str:
    """Flow-mapping fields, each a list of ten aliases of the one before it."""
    fields = ["b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    fields += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "{phase: none, " + ", ".join(fields) + "}"


def test_an_alias_bomb_is_refused_at_the_alias_that_crosses_the_limit(tmp_path: Path) -> None:
    marker = "        none: {phase: none}"
    assert marker in BASE
    path = tmp_path / "bomb.yaml"
    path.write_text(BASE.replace(marker, "        none: " + alias_bomb(12), 1))
    line = path.read_text().splitlines().index("        none: " + alias_bomb(12)) + 1
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "verify", "--spec", str(path), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0
    out = done.stderr + done.stdout
    assert "Traceback" not in out
    assert f"{path}:{line}:" in out, out
    assert f"aliases expand to more than {MAX_ALIAS_NODES} nodes" in out


def test_aliases_up_to_the_limit_compose_and_a_loop_is_refused() -> None:
    # 1 + n aliases of a ten-item list (11 nodes each): exactly at the limit, then one past
    n = MAX_ALIAS_NODES // 11
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: [" + ", ".join(["*a"] * n) + "]\n"
    assert compose(text) is not None
    with pytest.raises(AliasExpansionError):
        compose(text.replace("*a]", "*a, *a, *a]"))
    with pytest.raises(AliasExpansionError, match="a loop"):
        compose("a: &a [1, *a]\n")


# --- the abstraction's size (issue 31, finding 9: [w1, w2] -> 200 ids loaded for minutes with
# no word; 20 ids took 82 s) -----------------------------------------------------------------


def with_ids(tmp_path: Path, count: int) -> Path:
    base = (SPECS_DIR / "reset-control@0.34.yaml").read_text(encoding="utf-8")
    assert "abstraction: [w1, w2]" in base
    ids = ", ".join(f"w{i}" for i in range(1, count + 1))
    path = tmp_path / f"ids{count}.yaml"
    path.write_text(base.replace("abstraction: [w1, w2]", f"abstraction: [{ids}]"))
    return path


@pytest.mark.parametrize("count", [20, 200])
def test_an_abstraction_past_the_cap_is_refused_naming_the_type_and_the_product(
    tmp_path: Path, count: int
) -> None:
    path = with_ids(tmp_path, count)
    line = path.read_text().splitlines().index("  window:") + 1
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "verify", "--spec", str(path), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    out = done.stderr + done.stdout
    assert done.returncode != 0 and "Traceback" not in out
    assert f"{path}:{line}:" in out, out
    assert f"the limit is {MAX_CASES:,}" in out
    assert f"type 'window' has {count} abstraction ids" in out
    assert "request.close-out.windowId" in out  # a field it multiplies


def test_a_large_abstraction_under_the_cap_loads_and_says_how_far_it_is(tmp_path: Path) -> None:
    path = with_ids(tmp_path, 5)
    assert case_count(load(path, analyse=False)) <= MAX_CASES
    code = (
        "import sys\n"
        "from pi_context.spec import load\n"
        "from pi_context.spec import loader\n"
        "loader._Progress.AFTER = 0.0\n"  # shown at once, not after a second of a test
        "loader._Progress.SHOW = True\n"  # as on a terminal
        f"load({str(path)!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"checking the table of {path}: " in done.stderr
    assert "cases (100%)" in done.stderr.splitlines()[-1]
