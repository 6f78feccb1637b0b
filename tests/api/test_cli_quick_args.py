"""``pi-context tool`` reads a well-formed command line without argparse; whatever it reads
must be exactly what argparse reads, and whatever it declines goes to argparse."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.cli import build_parser
from pi_context.cli.tool import ToolArgs, quick_args

_WORDS = st.sampled_from(
    [
        "notes_list",
        "history_search",
        "",
        "-",
        "--",
        "-h",
        "--help",
        "--session",
        "--notes-home",
        "--args",
        "--leaf",
        "--agent",
        "--model",
        "--cwd",
        "--details",
        "--list",
        "--sess",
        "--args=",
        "--args={}",
        "--args=-1",
        "--details=1",
        "--cwd=/tmp",
        "{}",
        '{"query": "x"}',
        "-1",
        "a b",
        "/tmp/x.jsonl",
        "é",
    ]
)


def _argparse(argv: list[str]) -> dict[str, object] | None:
    """What argparse makes of ``tool ARGV``, or ``None`` when it refuses it."""
    parser = build_parser(["tool"], lazy=True)
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            namespace = parser.parse_args(["tool", *argv])
    except SystemExit:
        return None
    return {name: getattr(namespace, name) for name in ToolArgs.__slots__}


@settings(max_examples=400, deadline=None)
@given(argv=st.lists(_WORDS, max_size=7))
def test_a_command_line_read_quickly_is_read_exactly_as_argparse_reads_it(
    argv: list[str],
) -> None:
    quick = quick_args(argv)
    if quick is None:
        return  # argparse reads it (and reports any error)
    assert {name: getattr(quick, name) for name in ToolArgs.__slots__} == _argparse(argv)


def test_the_usual_command_lines_are_read_quickly() -> None:
    usual = [
        ["notes_list", "--notes-home", "/n", "--args", "{}"],
        ["history_search", "--session", "s.jsonl", "--args={}", "--details"],
        ["--list"],
    ]
    for argv in usual:
        assert quick_args(argv) is not None, argv


def test_what_is_not_read_quickly_still_gets_argparse_errors_and_help() -> None:
    command = [sys.executable, "-m", "pi_context", "tool"]
    unknown = subprocess.run([*command, "x", "--bogus", "a"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "unrecognized arguments" in unknown.stderr
    helped = subprocess.run([*command, "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--notes-home" in helped.stdout
    missing = subprocess.run([*command, "x", "--args"], capture_output=True, text=True)
    assert missing.returncode == 2 and "expected one argument" in missing.stderr
