"""One rule for every command (``cli/_options.py``): a usage error exits 2, a failure exits 1,
and the error line starts with ``pi-context <command>:`` and names the option, argument or
path that was wrong.

The table below gives every subcommand three cases — a missing file, a bad argument, a
conflicting option — or says why a case does not apply to it; a subcommand the table does
not know fails ``test_the_table_covers_every_subcommand`` until it is added. Every
subcommand also gets an unknown option, generically. The cases run in-process through
``pi_context.cli.main`` (argparse's exit included), so the whole table takes seconds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_context.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "tests" / "fixtures" / "pi-sessions" / "named-seed.jsonl"
MISSING = "/nonexistent-pi-context/x"


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    names: str
    """What the error line must name (an option, an argument or a path)."""
    code: int = 2


Why = str  # a case that does not apply: the reason
Row = tuple[Case | Why, Case | Why, Case | Why]  # missing file, bad argument, conflict

NO_FILE = "names no file"
NO_CONFLICT = "has no options that exclude each other"

TABLE: dict[str, Row] = {
    "audit": (
        Case(("audit", MISSING), MISSING),
        Case(("audit", str(SESSION), "--spec", "nope"), "nope"),
        Case(("audit", str(SESSION), "--context-window", "5"), "--context-window"),
    ),
    "cache info": (NO_FILE, Case(("cache", "info", "--bogus"), "--bogus"), NO_CONFLICT),
    "cache prune": (NO_FILE, Case(("cache", "prune", "extra"), "extra"), NO_CONFLICT),
    "cache clear": (NO_FILE, Case(("cache", "clear", "extra"), "extra"), NO_CONFLICT),
    "conformance": (
        Case(("conformance", "--impl", "pi-context serve", "--replay", MISSING), MISSING),
        Case(("conformance", "--impl", "pi-context serve", "--steps", "0"), "--steps"),
        Case(
            ("conformance", "--impl", "pi-context serve", "--replay", MISSING, "--junit", "j"),
            "--junit",
        ),
    ),
    "demo": (
        Case(("demo", "--dir", f"{MISSING}/run"), "--dir"),
        Case(("demo", "--windows", "0"), "--windows"),
        Case(("demo", "--handoff", "--auto-handoff"), "--auto-handoff"),
    ),
    "diff": (
        Case(("diff", f"{MISSING}.yaml", "reset-control@0.34"), MISSING),
        Case(("diff", "nope", "reset-control@0.34"), "nope"),
        NO_CONFLICT,
    ),
    "docs": ("reads only the checkout's specs", Case(("docs", "--bogus"), "--bogus"), NO_CONFLICT),
    "export": (
        Case(("export", "quint", "--out", f"{MISSING}/dir"), "--out"),
        Case(("export", "quint", "--spec", "nope"), "--spec nope"),
        Case(("export", "quint", "--samples", "5"), "--samples"),
    ),
    "replay": (
        Case(("replay", "--itf", f"{MISSING}.itf.json"), MISSING),
        Case(("replay", "--itf", str(REPO), "--spec", "nope"), "--spec nope"),
        NO_CONFLICT,
    ),
    "generate": (
        "reads only the checkout's specs",
        Case(("generate", "--target", "nope"), "--target"),
        NO_CONFLICT,
    ),
    "mcp": (
        Case(("mcp", "--session", MISSING), MISSING),
        Case(("mcp", "--session", str(SESSION), "--cwd", MISSING), "--cwd"),
        NO_CONFLICT,
    ),
    "mutate": (
        Case(("mutate", "--spec", f"{MISSING}.yaml"), MISSING),
        Case(("mutate", "--spec", "reset-control@0.34", "--min-rate", "2"), "--min-rate"),
        Case(("mutate", "--spec", "reset-control@0.34", "--root", str(REPO)), "--root"),
    ),
    "notes migrate": (
        Case(("notes", "migrate", "--from", MISSING), "--from"),
        Case(("notes", "migrate", "--project", MISSING), "--project"),
        NO_CONFLICT,
    ),
    "notes homes": (
        Case(("notes", "homes", "--session", MISSING), "--session"),
        Case(("notes", "homes", "--cwd", MISSING), "--cwd"),
        NO_CONFLICT,
    ),
    "notes sweep": (
        Case(("notes", "sweep", "--notes-home", MISSING), "--notes-home"),
        Case(("notes", "sweep", "--bogus"), "--bogus"),
        NO_CONFLICT,
    ),
    "serve": (
        Case(("serve", "--spec", f"{MISSING}.yaml"), MISSING),
        Case(("serve", "--spec", "nope"), "--spec nope"),
        NO_CONFLICT,
    ),
    "session show": (
        Case(("session", "show", MISSING), MISSING),
        Case(("session", "show", str(SESSION), "--leaf", "nope"), "--leaf"),
        NO_CONFLICT,
    ),
    "session report": (
        Case(("session", "report", MISSING), MISSING),
        Case(("session", "report", str(SESSION), "--bogus"), "--bogus"),
        NO_CONFLICT,
    ),
    "session panel": (
        Case(("session", "panel", MISSING), MISSING),
        Case(("session", "panel", str(SESSION), "--log-dir", MISSING), "--log-dir"),
        NO_CONFLICT,
    ),
    "session export": (
        Case(("session", "export", MISSING, "--out", "x.md"), MISSING),
        Case(("session", "export", str(SESSION), "--out", f"{MISSING}/dir/x.md"), "--out"),
        NO_CONFLICT,
    ),
    "tool": (
        Case(("tool", "notes_list", "--session", MISSING), "--session"),
        Case(("tool", "notes_list", "--args", "[1]"), "--args"),
        Case(("tool", "--list", "notes_list"), "--list"),
    ),
    "verify": (
        Case(("verify", "--spec", f"{MISSING}.yaml"), MISSING),
        Case(("verify", "--examples", "-1"), "--examples"),
        Case(("verify", "--no-hypothesis", "--examples", "5"), "--no-hypothesis"),
    ),
}


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[str]:
    found = []
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions and path:
        found.append(" ".join(path))
    for action in actions:
        for name, sub in action.choices.items():
            found += subcommands(sub, (*path, name))
    return found


def run(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def test_the_table_covers_every_subcommand() -> None:
    assert sorted(subcommands(build_parser())) == sorted(TABLE)


CASES = [
    pytest.param(command, kind, case, id=f"{command}-{kind}")
    for command, row in TABLE.items()
    for kind, case in zip(("missing", "bad", "conflict"), row, strict=True)
    if isinstance(case, Case)
]


@pytest.mark.parametrize(("command", "kind", "case"), CASES)
def test_each_subcommand_follows_the_rule(
    command: str,
    kind: str,
    case: Case,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, err = run(case.argv, capsys)
    lines = [line for line in err.splitlines() if line.startswith(f"pi-context {command}:")]
    assert code == case.code, err
    assert lines, f"no line starts with 'pi-context {command}:' in {err!r}"
    assert case.names in lines[-1], lines[-1]
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], "a refused command created something"


@pytest.mark.parametrize("command", sorted(TABLE))
def test_an_unknown_option_is_a_usage_error_of_that_subcommand(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run((*command.split(), "--no-such-option"), capsys)
    assert code == 2
    assert f"pi-context {command}: error:" in err
    # a command with a required argument names that first; either way the line names one
    assert "--no-such-option" in err or "the following arguments are required" in err


def test_a_missing_folder_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "not" / "there" / "x.md"
    code, err = run(("session", "export", str(SESSION), "--out", str(out)), capsys)
    assert code == 2 and "it is not created" in err
    assert list(tmp_path.iterdir()) == []
    # the folder exists: the export is written
    (tmp_path / "here").mkdir()
    code, _ = run(
        ("session", "export", str(SESSION), "--out", str(tmp_path / "here" / "x.md")), capsys
    )
    assert code == 0 and (tmp_path / "here" / "x.md").is_file()


def test_a_failure_exits_1_with_the_command_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not a session\n")
    for sub in ("show", "report", "panel"):
        code, err = run(("session", sub, str(broken)), capsys)
        assert code == 1, (sub, err)
        assert err.splitlines()[-1].startswith(f"pi-context session {sub}: "), err
        assert str(broken) in err


def test_an_mcp_request_before_initialize_is_told_to_initialize() -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pi_context", "mcp", "--session", str(SESSION)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    early = replies[1]["error"]
    assert early["code"] == -32600
    assert 'send "initialize" first' in early["message"] and "tools/list" in early["message"]
    assert early["data"] == {"method": "tools/list", "expected": "initialize"}
    assert "result" in replies[2]  # ping is allowed before initialize
    assert "result" in replies[3]
