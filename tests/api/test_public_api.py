"""``import pi_context`` exposes the host API: lazily, documented, and typed for mypy --strict."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pi_context
from pi_context.bindings.runtime import ModelInfo, Runtime, RuntimeConfig
from pi_context.bindings.session import Session
from pi_context.spec import spec_path
from pi_context.spec.abstraction import all_events, all_states

from .conftest import run_mypy


def _fresh(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout


def test_all_lists_exactly_the_exported_names() -> None:
    assert set(pi_context.__all__) == {"__version__", *pi_context._EXPORTS}
    assert len(pi_context.__all__) == len(set(pi_context.__all__))


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in pi_context.__all__:
        value = getattr(pi_context, name)
        if name != "__version__":
            assert value.__doc__, f"pi_context.{name} has no docstring"


def test_import_is_cheap_and_names_load_on_first_use() -> None:
    out = _fresh(
        "import sys, pi_context\n"
        "before = sorted(m for m in sys.modules if m.startswith('pi_context'))\n"
        "pi_context.Session\n"
        "after = sorted(m for m in sys.modules if m.startswith('pi_context'))\n"
        "print(before, 'transitions' in sys.modules, 'pi_context.bindings.session' in after)"
    )
    assert out.strip() == "['pi_context'] False True"


def test_help_is_an_overview_of_the_api() -> None:
    out = _fresh(
        "import pydoc, pi_context; print(pydoc.render_doc(pi_context, renderer=pydoc.plaintext))"
    )
    for name in pi_context.__all__:
        if name != "__version__":
            assert name in out, name
    assert "help(pi_context.Runtime)" in out
    # each name is documented in full on its own page
    runtime = _fresh(
        "import pydoc, pi_context\n"
        "print(pydoc.render_doc(pi_context.Runtime, renderer=pydoc.plaintext))"
    )
    assert "class Runtime" in runtime
    assert "reset_control(spec" in _fresh(
        "import pydoc, pi_context\n"
        "print(pydoc.render_doc(pi_context.reset_control, renderer=pydoc.plaintext))"
    )


def test_every_public_name_resolves_and_unknown_names_fail_clearly() -> None:
    out = _fresh(
        "import pi_context\n"
        "print(all(hasattr(pi_context, n) for n in pi_context.__all__))\n"
        "print(set(pi_context.__all__) <= set(dir(pi_context)))"
    )
    assert out.split() == ["True", "True"]  # once loaded, dir() lists them
    with pytest.raises(AttributeError, match="no attribute 'Runtim'"):
        pi_context.Runtim  # type: ignore[attr-defined]  # noqa: B018


def test_public_names_are_the_internal_objects() -> None:
    assert pi_context.Runtime is Runtime and pi_context.Session is Session
    assert pi_context.load_spec is pi_context.spec.loader.load


# --- spec registry -------------------------------------------------------------------------


@pytest.mark.parametrize("spec_id", ["reset-control@0.25", "reset-control@0.26"])
def test_reset_control_reducer_and_machine_agree_on_every_case(spec_id: str) -> None:
    core = pi_context.reset_control(spec_id)
    assert core.id == spec_id and core.origin == "committed"
    assert core.initial_state() == core.state_from_wire(core.spec.initial)
    cases = 0
    for wire_state in all_states(core.spec):
        for wire_event in all_events(core.spec):
            state, event = core.state_from_wire(wire_state), core.event_from_wire(wire_event)
            nxt, effect, row = core.step(state, event)
            assert core.reduce(state, event) == (nxt, effect)
            assert core.machine.step(state, event) == (nxt, effect, row)
            assert effect in core.effects
            assert core.event_from_wire(core.event_to_wire(event)) == event
            assert core.state_from_wire(core.state_to_wire(nxt)) == nxt
            cases += 1
    assert cases > 1000


def test_reset_control_default_and_ids() -> None:
    assert pi_context.reset_control().id == "reset-control@6bcd8b5"
    assert pi_context.spec_ids() == [
        "reset-control@0.25",
        "reset-control@0.26-proposal",
        "reset-control@0.26",
        "reset-control@0.27",
        "reset-control@0.33",
        "reset-control@0.34",
        "reset-control@a508f68",
        "reset-control@6bcd8b5",
    ]


def test_reset_control_of_a_spec_file(tmp_path: Path) -> None:
    copy = tmp_path / "mine.yaml"
    shutil.copy(spec_path("reset-control@0.26"), copy)
    core = pi_context.reset_control(copy)
    assert core.origin == "committed"  # same bytes, same hash: the committed package
    assert core.step(core.initial_state(), core.event_from_wire({"type": "clear"}))[1] == "none"


def test_reset_control_names_an_unknown_spec() -> None:
    with pytest.raises(pi_context.SpecError, match=r"unknown spec 'reset-control@9.9'.*0\.26"):
        pi_context.reset_control("reset-control@9.9")


# --- tools ---------------------------------------------------------------------------------


def test_tool_schemas_in_every_style() -> None:
    names = list(pi_context.all_tools())
    neutral = pi_context.tool_schemas()
    assert [s["name"] for s in neutral] == names
    assert all(s["parameters"]["type"] == "object" for s in neutral)
    openai = pi_context.tool_schemas("openai")
    assert openai == [{"type": "function", "function": s} for s in neutral]
    anthropic = pi_context.tool_schemas("anthropic")
    assert [(a["name"], a["input_schema"]) for a in anthropic] == [
        (s["name"], s["parameters"]) for s in neutral
    ]
    json.dumps(neutral)  # JSON-ready as is
    with pytest.raises(ValueError, match="unknown schema style 'gemini'"):
        pi_context.tool_schemas("gemini")  # type: ignore[arg-type]


def test_run_tool_errors_match_the_runtime(tmp_path: Path) -> None:
    session = Session.create(tmp_path, tmp_path / "sessions")
    runtime = Runtime(
        session,
        RuntimeConfig(
            notes_home=tmp_path / "notes",
            agent_dir=tmp_path,
            cwd=tmp_path,
            model=ModelInfo("m", "p", 100_000),
        ),
    )
    context = runtime.tool_context()
    for name, args in (
        ("no_such_tool", {}),
        ("notes_read", {}),
        ("notes_read", {"path": "../escape.md"}),
        ("get_context_remaining", {"x": 1}),
        ("history_read", {"itemId": 7}),
    ):
        ours = pi_context.run_tool(name, args, context)
        theirs = runtime.call_tool(name, args)
        assert ours.is_error and theirs.is_error, (name, args)
        assert ours.text == theirs.text, (name, args)
        assert "error" in json.loads(ours.text)
    ok = pi_context.run_tool("notes_write", {"path": "a.md", "content": "hi"}, context)
    assert not ok.is_error
    assert pi_context.run_tool("notes_read", {"path": "a.md"}, context).text.endswith("hi")
    runtime.shutdown()
    orphan = pi_context.run_tool("wipe_memory", {}, context)
    assert orphan.is_error and "needs a running pi-context runtime" in orphan.text


# --- typing --------------------------------------------------------------------------------

HOST = """
from pathlib import Path

import pi_context
from pi_context import Runtime, RuntimeConfig, Session, ToolResult, reset_control


def start(home: Path) -> Runtime:
    session: Session = Session.create(home, home / "sessions")
    return Runtime(session, RuntimeConfig(notes_home=home / "notes"))


def schemas() -> list[str]:
    return [str(s["name"]) for s in pi_context.tool_schemas("anthropic")]


def effect_of_clear() -> str:
    core = reset_control("reset-control@0.26")
    return core.step(core.initial_state(), core.event_from_wire({"type": "clear"}))[1]


def ask(rt: Runtime) -> ToolResult:
    return rt.call_tool("notes_list", {})
"""


def test_mypy_strict_accepts_a_host_using_only_the_public_api(tmp_path: Path) -> None:
    tree = ast.parse(HOST)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"pathlib", "pi_context"}
    script = tmp_path / "host.py"
    script.write_text(HOST)
    result = run_mypy(script, tmp_path / ".mypy_cache")
    assert result.returncode == 0, result.stdout + result.stderr
    # ... and the types are real: a wrong use and a misspelt name are both reported.
    script.write_text(
        HOST
        + "\n\ndef bad(rt: Runtime) -> int:\n    return rt.call_tool('x')\n"
        + "\n\nX = pi_context.Sesion\n"
    )
    result = run_mypy(script, tmp_path / ".mypy_cache")
    assert result.returncode == 1
    assert 'Incompatible return value type (got "ToolResult", expected "int")' in result.stdout
    assert 'Module has no attribute "Sesion"' in result.stdout


# --- conformance ---------------------------------------------------------------------------


def test_run_conformance_checks_an_implementation_from_a_host(tmp_path: Path) -> None:
    """The reference server passes; run in a subprocess so hypothesis' files stay in tmp."""
    code = (
        "import io, sys, pi_context\n"
        "impl = [sys.executable, '-m', 'pi_context', 'serve']\n"
        "report = pi_context.run_conformance(impl, examples=5, steps=5, seed=1, show=False,\n"
        "                                    stream=io.StringIO())\n"
        "print(report.ok, [(s.spec.id, s.exhaustive_checked) for s in report.specs])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "True [('handoff@0.6-auto', 40710), ('handoff@0.6', 399), ('reset-control@0.25', 1192), "
        "('reset-control@0.26-proposal', 9212), ('reset-control@0.26', 9212), "
        "('reset-control@0.27', 14476), ('reset-control@0.33', 11844), "
        "('reset-control@0.34', 15180), ('reset-control@a508f68', 15180), "
        "('reset-control@6bcd8b5', 20940)]"
    )
