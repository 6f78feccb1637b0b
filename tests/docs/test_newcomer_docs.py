"""What a newcomer reads first holds: the README says what Pi is, how to install (a virtual
environment, POSIX only), explains its jargon and links every doc and the default spec's
reference page; the package carries its licence and metadata; ``dir(pi_context)`` shows the
public API; the help texts say what a newcomer needs; ``verify``'s mutant cell and the
session panel read as they should; docs/handoff.md names the log events the code writes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

from pi_context.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_says_what_pi_is_how_to_install_and_explains_its_words() -> None:
    intro = README[: README.index("## Set up and verify")]
    assert re.search(r"\[Pi\]\(https://[^)]+\) is an open-source coding\s+agent", intro)
    glossary = intro[intro.index("### Glossary") :]
    terms = ("Pi", "Codex-style", "hard reserve", "row-pair", "seed", "reset", "context window")
    for term in terms:
        assert re.search(rf"^\| {re.escape(term)}\b", glossary, re.M), term
    setup = README[README.index("## Set up and verify") : README.index("## Tests")]
    assert "python3 -m venv .venv" in setup and "PEP 668" in setup
    assert "POSIX" in setup and "Windows is not supported" in setup


def test_every_doc_and_the_default_spec_page_are_linked_from_the_readme() -> None:
    from pi_context import reset_control

    linked = set(re.findall(r"\]\((docs/[^)#]+)", README))
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{page.name}" in linked, page.name
    version = reset_control().spec.version
    assert f"docs/reset-control/{version}.md" in linked, "the default spec's reference page"
    pages = r"docs/reset-control/(?!mutation-|upstream)[\w.-]+\.md"
    stale = [link for link in linked if re.fullmatch(pages, link)]
    assert stale == [f"docs/reset-control/{version}.md"], stale


def test_the_package_carries_its_licence_and_metadata() -> None:
    licence = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["urls"] and all(u.startswith("https://") for u in project["urls"].values())
    classifiers = project["classifiers"]
    assert "Operating System :: POSIX" in classifiers and "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers


def test_dir_shows_the_lazy_public_api() -> None:
    code = "import json, pi_context; print(json.dumps([dir(pi_context), pi_context.__all__]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    shown, public = json.loads(out.stdout)
    assert set(public) <= set(shown)  # before any of them was looked up


def _sub(*words: str):  # type: ignore[no-untyped-def]
    import argparse

    parser = build_parser()
    for word in words:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def test_help_texts_say_what_a_newcomer_needs() -> None:
    assert "scope" in (_sub("notes", "homes").description or "")
    for words in (
        ("mcp",),
        ("tool",),
        ("notes", "migrate"),
        ("notes", "homes"),
        ("notes", "sweep"),
    ):
        [option] = [a for a in _sub(*words)._actions if "--notes-home" in a.option_strings]
        assert "$PI_NOTES_HOME, else ~/.agents/notes" in (option.help or ""), words
    [session] = [a for a in _sub("tool")._actions if "--session" in a.option_strings]
    assert "required by the history tools" in (session.help or "")
    assert "`pi-context tool NAME --session FILE " in README  # shown as required


def test_verify_s_mutant_cell_reads_as_a_score() -> None:
    from pi_context.checks.suite import mutant_cell

    def result(killed: bool, equivalent: bool) -> SimpleNamespace:
        return SimpleNamespace(killed=killed, mutant=SimpleNamespace(
            equivalent={"s": "why"} if equivalent else {}))  # fmt: skip

    results = [result(True, False)] * 18 + [result(False, True)]
    mutants = SimpleNamespace(
        spec_id="s",
        results=results,
        killed=18,
        equivalent=[r for r in results if r.mutant.equivalent],
    )
    assert mutant_cell(mutants) == ", mutants: killed 18 of 19, 1 equivalent"  # type: ignore[arg-type]
    assert mutant_cell(None) == ""


def test_the_panel_shows_the_same_end_of_a_session_id_as_window_ids() -> None:
    fixture = REPO / "tests" / "fixtures" / "pi-sessions" / "named-seed.jsonl"
    session_id = json.loads(fixture.read_text(encoding="utf-8").splitlines()[0])["id"]
    out = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "panel", str(fixture)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.stdout.startswith(f"session {session_id[:8]}"), out.stdout[:200]


def test_handoff_md_names_the_log_events_the_code_writes_and_says_requirements() -> None:
    page = (REPO / "docs" / "handoff.md").read_text(encoding="utf-8")
    source = "".join(
        path.read_text(encoding="utf-8")
        for path in (REPO / "src" / "pi_context" / "bindings" / "operations").glob("*.py")
    )
    written = set(re.findall(r'"event": "(\w+)"', source))
    assert written >= {"operation_start", "operation_end", "moved", "quality", "call_start"}
    sentence = page[page.index("Events: ") :].split("\n\n", 1)[0]
    named = set(re.findall(r"`(\w+)`", sentence)) & (written | {"op_start", "op_end"})
    assert named == written, (named, written)
    assert not re.search(r"\bseeds?\b", page, re.I), "say requirements, not seeds"
