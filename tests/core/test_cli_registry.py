"""Command discovery: `pi-context --help` lists every command module's command without
importing the modules, with the same names and help as the full registration."""

from __future__ import annotations

import argparse
import subprocess
import sys

from pi_context.cli import _modules, build_parser


def listing(parser: argparse.ArgumentParser) -> dict[str, str]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {choice.dest: str(choice.help) for choice in action._choices_actions}


def test_the_lazy_listing_equals_the_full_registration() -> None:
    full = listing(build_parser())
    assert listing(build_parser(["--help"], lazy=True)) == full
    assert {"verify", "conformance", "serve", "mutate", "generate"} <= set(full)
    assert len(full) >= len(_modules())


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\n"
        "from pi_context.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('pi_context.cli.')))\n"
        "print('pi_context.spec' in sys.modules, 'hypothesis' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *_, modules, heavy = done.stdout.strip().splitlines()
    assert modules == "[]"
    assert heavy == "False False"


def test_a_command_still_parses_its_own_arguments() -> None:
    args = build_parser(["verify", "--examples", "3"], lazy=True).parse_args(
        ["verify", "--examples", "3"]
    )
    assert args.command == "verify" and args.examples == 3
