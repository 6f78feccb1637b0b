"""The rough edges a newcomer hit in the first hour (issue 24, items 6-12), one test each:
they end the way a careful user expects now."""

from __future__ import annotations

import json
import os
import pydoc
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import pi_context
from pi_context.bindings.tool_registry import run_tool
from pi_context.bindings.tools import ToolContext
from pi_context.checks.conformance.runner import script_problem
from pi_context.spec import SPECS_DIR, spec_paths

REPO = Path(__file__).resolve().parents[2]
PY = shlex.quote(sys.executable)
FIXTURE = REPO / "tests" / "fixtures" / "pi-sessions" / "s0005.jsonl"


def run(args: list[str], cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_context", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600, env={**os.environ, **env},
    )  # fmt: skip


# --- 6: --version; generate and docs show progress ---------------------------------------------


def test_version() -> None:
    done = run(["--version"])
    assert done.returncode == 0
    assert done.stdout.strip() == f"pi-context {pi_context.__version__}"


def test_generate_check_and_docs_say_what_they_are_doing() -> None:
    done = run(["docs", "--check"])
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    loading = [f"pi-context docs: loading {path.stem}" for path in spec_paths()]
    assert lines[: len(loading)] == loading
    assert f"pi-context docs: generating docs for {len(loading)} specs" in lines
    assert re.search(r"^pi-context docs: generated docs in [\d.]+s$", done.stderr, re.M)
    quiet = run(["generate", "--check", "--target", "python", "--quiet"])
    assert quiet.returncode == 0 and quiet.stderr == ""


# --- 7: mutate refuses early; an unknown spec id is not a file position -------------------------


def test_mutate_docs_refuses_a_spec_file_before_the_run(tmp_path: Path) -> None:
    copy = tmp_path / "copy.yaml"
    copy.write_text((SPECS_DIR / "reset-control@0.25.yaml").read_text() + "# edited\n")
    done = run(["mutate", "--spec", str(copy), "--docs"])
    assert done.returncode == 2
    assert "--docs documents committed specs only" in done.stderr
    assert "mutants" not in done.stdout + done.stderr  # refused before any mutant ran


def test_an_unknown_spec_id_is_named_as_an_id() -> None:
    for command in (["mutate", "--spec", "0.26"], ["verify", "--spec", "0.26"]):
        done = run(command)
        assert done.returncode in (1, 2)
        assert ":1:1:" not in done.stderr
        assert "unknown spec '0.26'; did you mean reset-control@0.26?" in done.stderr


# --- 8: a refused demo leaves no temp folder ---------------------------------------------------


REFUSED = [["--spec", "nope"], ["--spec", "handoff@0.6"], ["--windows", "0"]]


@pytest.mark.parametrize("args", REFUSED)
def test_a_refused_demo_leaves_no_temp_folder(tmp_path: Path, args: list[str]) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = run(["demo", *args, "--quiet"], TMPDIR=str(temp))
    assert done.returncode == 2, done.stdout
    assert list(temp.iterdir()) == []


def test_the_demo_runs_on_one_clock(tmp_path: Path) -> None:
    """Session entries, note times, the handoff's packet and its destination's name: all on
    the demo's fixed clock (2026-01-05), none on the wall clock."""
    from pi_context.demo.scripted import START_MS

    done = run(["demo", "--windows", "3", "--dir", str(tmp_path / "d"), "--handoff", "--quiet"])
    assert done.returncode == 0, done.stderr
    files = [p for p in (tmp_path / "d").rglob("*") if p.is_file() and ".git" not in p.parts]
    [source, destination] = sorted((tmp_path / "d" / "sessions").glob("*.jsonl"))
    assert destination.name.startswith("2026-01-05T"), destination.name
    day = START_MS + 86_400_000
    seen_ms = seen_iso = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        for ms in re.findall(r'"timestamp": ?(\d{12,})', text):
            assert START_MS <= int(ms) < day, (path.name, ms)
            seen_ms += 1
        for iso in re.findall(r"\b\d{4}-\d\d-\d\dT\d\d[:-]\d\d", text):
            assert iso.startswith("2026-01-05T"), (path.name, iso)
            seen_iso += 1
    notes = [p for p in files if p.suffix == ".md" and "notes" in p.parts]
    assert notes and all("createdAt: 2026-01-05T" in p.read_text() for p in notes)
    assert '"createdAt":"2026-01-05T' in destination.read_text().replace(" ", "")
    assert seen_ms > 50 and seen_iso > 10


# --- 9: the TypeScript adapter, --impl from elsewhere, run_conformance's reasons ----------------


def test_the_adapter_names_the_build_a_newcomer_can_run() -> None:
    adapter = (REPO / "bindings-ts" / "adapter.mjs").read_text()
    assert "tsc -p" not in adapter
    assert adapter.count("python -m pi_context.codegen.tsbuild") == 3


def test_a_relative_adapter_path_from_elsewhere_is_named(tmp_path: Path) -> None:
    done = run(["conformance", "--impl", "node bindings-ts/adapter.mjs"], cwd=tmp_path)
    assert done.returncode == 2
    adapter = REPO / "bindings-ts" / "adapter.mjs"
    assert done.stderr.strip() == (
        f"pi-context conformance: --impl: bindings-ts/adapter.mjs does not exist (relative "
        f'paths are taken from {tmp_path}); the TypeScript adapter is --impl "node {adapter}"'
    )
    assert "at Module" not in done.stderr
    assert script_problem("node bindings-ts/adapter.mjs", REPO) is None
    assert script_problem(f"{PY} -m pi_context serve", tmp_path) is None


def test_run_conformance_is_quiet_unless_asked(capfd: pytest.CaptureFixture[str]) -> None:
    spec = pi_context.load_spec(SPECS_DIR / "reset-control@0.25.yaml")
    report = pi_context.run_conformance(f"{PY} -m pi_context serve", [spec], examples=2)
    assert report.ok
    assert capfd.readouterr().err == ""  # no progress bars unasked


def test_run_conformance_says_why_it_does_not_conform(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.py"
    report = pi_context.run_conformance(f"{PY} {missing}", show=False)
    assert report.ok is False
    [reason] = report.reasons
    # refused before it starts, naming the script (not the interpreter's stack trace)
    assert (
        reason == f"cannot start the implementation: {missing} does not exist (relative "
        f"paths are taken from {Path.cwd()})"
    )
    assert "DOES NOT CONFORM" in str(report) and reason in str(report)
    assert len(repr(report)) < 400 and "not ok: cannot start" in repr(report)
    crashing = tmp_path / "crash.py"
    crashing.write_text("raise SystemExit(3)\n")
    report = pi_context.run_conformance(f"{PY} {crashing}", show=False)
    [reason] = report.reasons
    assert reason.startswith("handshake failed: the implementation exited with status")
    spec = pi_context.load_spec(SPECS_DIR / "reset-control@0.25.yaml")
    good = pi_context.run_conformance(f"{PY} -m pi_context serve", [spec], examples=2, show=False)
    assert good.ok and good.reasons == []
    assert str(good).endswith(f"conforms to reset-control@0.25 ({good.steps} steps checked)")


# --- 10: notes migrate previews everything --apply does, and tidies up -------------------------


def test_notes_migrate_previews_the_renames_of_moved_notes_and_removes_emptied_folders(
    tmp_path: Path,
) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    (old / "human").mkdir(parents=True)
    (old / "agents" / "pi" / "sub").mkdir(parents=True)
    (old / "human" / "a.md").write_text("---\ncreated_at: 1\nupdated_at: 2\n---\nbody\n")
    (old / "agents" / "pi" / "sub" / "b.md").write_text("plain\n")
    args = ["notes", "migrate", "--from", str(old), "--notes-home", str(new), "--quiet"]
    preview = run(args)
    assert preview.returncode == 0, preview.stderr
    assert "nothing to migrate" not in preview.stdout
    assert (
        "would migrate human/a.md (once moved): created_at -> createdAt, updated_at -> updatedAt"
        in preview.stdout
    )
    assert f"1 of 2 notes under {new} need migrating" in preview.stdout
    assert not new.exists()  # a dry run writes nothing
    applied = run([*args, "--apply"])
    assert applied.returncode == 0, applied.stderr
    renamed = "migrating human/a.md: created_at -> createdAt, updated_at -> updatedAt"
    assert renamed in applied.stdout
    assert "removed 5 emptied folders of the earlier layout" in applied.stdout
    assert not old.exists()
    assert (new / "human" / "a.md").read_text().startswith("---\ncreatedAt: 1\n")


# --- 11: pytest --pi-context-impl leaves the host project as it was ----------------------------


def test_the_pytest_plugin_writes_no_hypothesis_folder_into_the_host(tmp_path: Path) -> None:
    project = tmp_path / "host"
    project.mkdir()
    (project / "test_host.py").write_text("def test_host():\n    assert True\n")
    env = {**os.environ}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--pi-context-impl", f"{PY} -m pi_context serve",
         "--pi-context-spec", "reset-control@0.25", "--pi-context-examples", "20"],
        cwd=project, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in project.iterdir()) == ["test_host.py"]


# --- 12: session show, docs, help and repr, notes_list, --notes-home --------------------------


def test_session_show_draws_the_last_sibling_with_a_corner_and_lists_windows(
    tmp_path: Path,
) -> None:
    from pi_context.bindings.session import Session

    session = Session.create(tmp_path, tmp_path / "s")
    root = session.append_message({"role": "user", "content": "root", "timestamp": 1})
    for text in ("first", "second", "third"):
        session.move_leaf(root)
        session.append_message({"role": "user", "content": text, "timestamp": 2})
    assert session.path is not None
    text = run(["session", "show", str(session.path)]).stdout
    tree = text[text.index("tree:") :].splitlines()
    marks = [line.strip()[0] for line in tree if "user: " in line and "root" not in line]
    assert marks == ["├", "├", "└"]
    view = json.loads(run(["session", "show", str(session.path), "--json"]).stdout)
    [window] = view["windows"]
    assert window["markerId"] is None and window["start"] == 0
    assert window["end"] == len(view["branchIds"])


def test_the_readme_says_what_a_newcomer_waits_for_and_what_session_show_prints() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tests = readme[readme.index("## Tests") : readme.index("## Commands")]
    # how long and how many come from a measured run (benchmarks/test_suite.py), never typed
    assert "<!-- results: test_suite -->" in tests
    assert "`du -sh .cache`" in tests
    commands = readme[readme.index("## Commands") : readme.index("## Layout")]
    assert "| `pi-context cache info\\|prune\\|clear " in commands
    assert "`pi-context --version`" in commands


def test_the_runtime_config_names_the_notes_root_in_use() -> None:
    import inspect

    from pi_context.bindings.notes.homes import default_root
    from pi_context.bindings.runtime.config import RuntimeConfig

    doc = inspect.getsource(RuntimeConfig).split("notes_home:", 1)[1].split('"""')[1]
    assert "~/" + default_root().relative_to(Path.home()).as_posix() in doc, doc
    assert "~/.pi/agent/notes" not in doc, doc


def test_help_is_an_overview_and_reprs_are_bounded() -> None:
    code = "import pydoc, pi_context; print(pydoc.render_doc(pi_context, renderer=pydoc.plaintext))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert len(out.splitlines()) <= 120, len(out.splitlines())
    for name in pi_context.__all__:
        if name != "__version__":
            assert re.search(rf"\b{name}\b", out), name
    assert "help(pi_context.Runtime)" in out
    assert "class Runtime" in pydoc.render_doc(pi_context.Runtime, renderer=pydoc.plaintext)
    for spec_id in pi_context.spec_ids():
        core = pi_context.reset_control(spec_id)
        assert len(repr(core)) <= 200 and spec_id in repr(core)
        assert len(repr(core.spec)) <= 300 and spec_id in repr(core.spec)


def test_notes_list_without_a_session_says_the_session_home_is_left_out(tmp_path: Path) -> None:
    ctx = ToolContext(notes_home=tmp_path / "notes", cwd=tmp_path)
    for name, args in (("notes_list", {}), ("notes_search", {"query": "x"})):
        body = json.loads(run_tool(name, args, ctx).text)
        [missing] = body["unreadable_homes"]
        assert missing["scope"] == "session"
        assert "no session id" in missing["error"]
    with_session = ToolContext(notes_home=tmp_path / "notes", cwd=tmp_path, session_id="s1")
    assert "unreadable_homes" not in json.loads(run_tool("notes_list", {}, with_session).text)


def test_a_notes_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    done = run(["tool", "notes_list", "--notes-home", "/etc/passwd", "--args", "{}"])
    assert done.returncode == 2
    assert done.stderr.strip() == "pi-context tool: --notes-home /etc/passwd: not a directory"
    assert done.stdout == ""


def test_the_cli_tool_prints_every_error_in_one_format(tmp_path: Path) -> None:
    # a --session that does not exist is a usage error of the command line (exit 2) ...
    gone = run(["tool", "history_list", "--session", str(tmp_path / "gone.jsonl")])
    assert gone.returncode == 2 and gone.stdout == ""
    assert gone.stderr.startswith("pi-context tool: --session ")
    # ... one that cannot be read is the tool's error, in the one format the model sees
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not a session\n")
    done = run(["tool", "history_list", "--session", str(broken)])
    assert done.returncode == 1
    body = json.loads(done.stdout)
    assert body["error"].startswith("history: cannot read the session: ")


def test_the_runtime_page_synopsis_names_every_demo_option() -> None:
    import argparse

    from pi_context.cli import demo

    parser = argparse.ArgumentParser()
    demo.register(parser.add_subparsers())
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    options = {
        option
        for action in sub.choices["demo"]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    page = (REPO / "docs" / "runtime.md").read_text(encoding="utf-8")
    [synopsis] = [line for line in page.splitlines() if line.startswith("`pi-context demo [")]
    assert options == set(re.findall(r"\[(--[a-z-]+)", synopsis))


def test_every_benchmark_has_its_figures_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # each script is named in a generated table (its rows come from its result file, or the
    # table says it was not measured): benchmarks/tables.py and tests/docs check the figures
    listed = set()
    for names in re.findall(r"<!-- results: ([\w\- ]+?) -->", readme):
        listed.update(names.split())
    helpers = {"dict_reducer.py", "pi_baseline.py", "results.py", "tables.py"}
    for script in sorted((REPO / "benchmarks").glob("*.py")):
        if script.name not in helpers:
            assert script.stem in listed, script.name
