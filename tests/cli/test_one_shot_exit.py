"""How the ``pi-context`` executable ends a command (``cli.console``): what a load leaves alive
is frozen instead of scanned by the collector (``gc_pause.one_shot``), never for the servers,
and the process exits without the interpreter's teardown, with the command's own code, its
exit handlers run and its output complete through a pipe.

Real processes: ``python -c`` running ``console()`` the way the installed executable does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_context.cli import main

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "tests" / "fixtures" / "pi-sessions" / "named-seed.jsonl"

# An exit handler that reports, at exit, whether loads were frozen in this process.
PROBE = """
import atexit, gc, sys
from pi_context.support import gc_pause
atexit.register(lambda: print(json.dumps(
    {"one_shot": gc_pause.freezes(), "frozen": gc.get_freeze_count()}), file=sys.stderr))
import json
sys.argv = ["pi-context", *sys.argv[1:]]
from pi_context.cli import console
console()
"""


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120
    )


def probe(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    last = done.stderr.strip().splitlines()[-1]
    found: dict[str, object] = json.loads(last)
    return found


def test_a_command_freezes_what_its_load_left_and_prints_all_of_it() -> None:
    done = run("session", "show", "--json", str(SESSION))
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)  # the whole answer arrived through the pipe
    assert view["branchIds"], view.keys()
    seen = probe(done)  # the exit handler ran before the fast exit
    assert seen["one_shot"] is True
    assert isinstance(seen["frozen"], int) and seen["frozen"] > 0


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_the_servers_are_not_one_shot(command: str) -> None:
    done = run(command, "--help")
    assert done.returncode == 0, done.stderr
    assert probe(done) == {"one_shot": False, "frozen": 0}


def in_process(*argv: str) -> int:
    """The code ``main`` gives (argparse's exit included): what the process must exit with."""
    try:
        return main(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1


@pytest.mark.parametrize(
    "argv",
    [
        ("session", "show", str(SESSION), "--no-such-option"),  # usage error
        ("session", "show", str(SESSION.with_name("no-such-session.jsonl"))),
        ("cache", "info"),
        ("--version",),
    ],
)
def test_every_command_keeps_its_code(argv: tuple[str, ...]) -> None:
    done = run(*argv)
    assert done.returncode == in_process(*argv), done.stderr
    if done.returncode:
        assert argv[-1].rsplit("/", 1)[-1] in done.stderr  # the message was flushed too


def test_a_library_load_freezes_nothing() -> None:
    """Only the process owner decides: ``Session.open`` in a plain process leaves the
    collector's generations as they were (a long-lived host keeps collecting them)."""
    script = (
        "import gc, sys\n"
        "from pathlib import Path\n"
        "from pi_context.bindings.session import Session\n"
        "Session.open(Path(sys.argv[1]), readonly=True).branch()\n"
        "print(gc.get_freeze_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(SESSION)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
