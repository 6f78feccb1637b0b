"""Every ``pi-context`` command on hostile ground ends with a message, never a traceback
(issue 25 items 10 and 11).

Each command runs in its own process, as a user runs it, with every path-like argument in
turn pointing at something that is not what it should be (missing, a directory, a FIFO,
``/dev/zero``, ``/dev/urandom``, a link to a device, garbage bytes, JSON nested 20,000 deep,
lone surrogates, entries with wrong types in every field, a path through a file, a name too
long, a name that is not UTF-8) and with numbers that are not numbers, and hostile bytes on
stdin. Each must finish within a bound, keep its traceback to itself and, when it fails, say
why. The demo on a full disk (a process limited to a small file size, and a real small tmpfs
where mounting is permitted) ends in one line; ``tool --args`` nested 20,000 deep is refused
by its limit.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

V26 = "reset-control@0.26"
TIMEOUT = 60  # seconds per command: generous for a loaded machine, tiny next to a hang


def hostile_paths(root: Path) -> dict[str, Path]:
    def file(name: str, data: bytes) -> Path:
        path = root / name
        path.write_bytes(data)
        return path

    paths = {
        "missing": root / "missing.jsonl",
        "directory": root / "a-directory",
        "fifo": root / "fifo",
        "zero": Path("/dev/zero"),
        "urandom": Path("/dev/urandom"),
        "link-to-zero": root / "zero-link",
        "empty": file("empty.jsonl", b""),
        "garbage": file("garbage.jsonl", bytes(range(256)) * 16),
        "deep": file(
            "deep.jsonl", b'{"type":"session","id":"x"}\n' + b"[" * 20_000 + b"]" * 20_000 + b"\n"
        ),
        "deep-yaml": file("deep.yaml", b"a: " + b"[" * 20_000 + b"]" * 20_000 + b"\n"),
        "surrogates": file(
            "surrogates.jsonl",
            b'{"type":"session","version":3,"id":"\\ud800","timestamp":"t","cwd":"/"}\n'
            b'{"type":"message","id":"\\udfff","parentId":null,"timestamp":"t",'
            b'"message":{"role":"user","content":"\\ud800\\u0000\\n"}}\n',
        ),
        "wrong-shapes": file(  # every field of every kind of entry holding the wrong type
            "wrong-shapes.jsonl",
            b'{"type":"session","version":3,"id":"0192aaaa-0000-7000-8000-00000000000a",'
            b'"timestamp":{},"cwd":7}\n'
            b'{"type":"message","id":[1],"parentId":{},"timestamp":null,'
            b'"message":{"role":5,"content":{"type":"text"}}}\n'
            b'{"type":"message","id":"a","parentId":null,"message":{"role":"assistant",'
            b'"content":[7,{"type":"toolCall","arguments":"x","name":[]},{"type":"text"}]}}\n'
            b'{"type":"message","id":"b","parentId":"a","message":{"role":"toolResult",'
            b'"toolCallId":{},"content":[{"type":"image","data":5}]}}\n'
            b'{"type":"compaction","id":"c","parentId":"b","summary":[],"firstKeptEntryId":1,'
            b'"tokensBefore":"many"}\n'
            b'{"type":"custom_message","id":"d","parentId":"c","customType":{},"content":9,'
            b'"display":"yes"}\n'
            b'{"type":"branch_summary","id":"e","parentId":"d","fromId":[],"summary":null}\n'
            b'{"type":"label","id":"f","parentId":"e","targetId":{},"label":[]}\n'
            b'{"type":"model_change","id":"g","parentId":"f","provider":1,"modelId":[]}\n'
            b'{"type":"session_info","id":"h","parentId":"g","name":{"a":1}}\n'
            b'{"type":"custom","id":"i","parentId":"h","customType":"pi-context","data":[[]]}\n'
            b'[]\n7\n"s"\nnull\n{}\n',
        ),
        "long-name": root / ("n" * 300),
        "not-utf8": Path(os.fsdecode(os.fsencode(root) + b"/\xff\xfe.jsonl")),
    }
    paths["through-a-file"] = paths["empty"] / "x.jsonl"
    paths["directory"].mkdir()
    os.mkfifo(paths["fifo"])
    os.symlink("/dev/zero", paths["link-to-zero"])
    return paths


# Six commands that read a path first (a session, a notes home, a spec, a trace) take every
# kind of hostile path; each other command line takes a few, in turn, so that together they
# still meet every kind (and the suite stays near 190 processes).
# PI_CONTEXT_CLI_FUZZ=all gives every command every kind (about 360 processes).
_EVERY = os.environ.get("PI_CONTEXT_CLI_FUZZ") == "all"
_SOME = 3


def _templates(p: str, out: str) -> list[tuple[bool, list[str]]]:
    """(a few kinds only, command line) for one hostile path ``p``."""
    return [
        (False, ["session", "show", p]),
        (True, ["session", "show", "--json", "--leaf", "\x1b[2J", p]),
        (True, ["session", "report", p]),
        (True, ["session", "report", "--json", p]),
        (False, ["tool", "history_list", "--session", p]),
        (True, ["tool", "history_search", "--session", p, "--args", '{"query": "a"}']),
        (True, ["tool", "history_read", "--session", p, "--args", '{"item_id": "\\ud800"}']),
        (False, ["tool", "notes_list", "--notes-home", p, "--session", p, "--cwd", p]),
        (True, ["tool", "notes_write", "--notes-home", p, "--args", '{"path": "a"}']),
        (False, ["notes", "homes", "--notes-home", p, "--session", p, "--cwd", p]),
        (True, ["notes", "sweep", "--notes-home", p]),
        (True, ["notes", "migrate", "--notes-home", p, "--from", p]),
        (True, ["demo", "--windows", "1", "--quiet", "--dir", p]),
        (True, ["mcp", "--session", p, "--notes-home", p, "--cwd", p]),
        (False, ["serve", "--spec", p]),
        (True, ["diff", p, V26]),
        (True, ["verify", "--spec", p, "--examples", "1", "--no-hypothesis", "--quiet"]),
        (True, ["mutate", "--spec", p, "--quiet", "--root", out, "--json", out]),
        (True, ["conformance", "--impl", p, "--startup-timeout", "2", "--quiet"]),
        (False, ["conformance", "--impl", "cat", "--replay", p, "--quiet"]),
        (True, ["conformance", "--impl", "pi-context serve", "--spec", p, "--quiet"]),
    ]


def command_lines(paths: dict[str, Path], root: Path) -> list[list[str]]:
    """Every command with hostile paths in every path-like argument it takes."""
    kinds = list(paths.items())
    runs: list[list[str]] = []
    for at, (kind, path) in enumerate(kinds):
        out = str(root / "out" / kind)  # where a command may write when its input is refused
        for place, (few, argv) in enumerate(_templates(str(path), out)):
            # a "few" line takes kinds place*_SOME .. place*_SOME+_SOME-1 (mod their count)
            if _EVERY or not few or (at - place * _SOME) % len(kinds) < _SOME:
                runs.append(argv)
    for number in ["-1", "nan", "9" * 5000, "--"]:
        runs += [
            ["demo", "--windows", number, "--quiet", "--dir", str(root / "demo")],
            ["conformance", "--impl", "cat", "--examples", number, "--steps", number],
            ["conformance", "--impl", "cat", "--seed", number, "--timeout", number],
            ["generate", "--check", "--target", number],
        ]
    for spec in ["reset-control@9.99", "../../../etc/passwd", "", "\udcff"]:
        runs += [
            ["diff", spec, spec],
            ["serve", "--spec", spec],
            ["verify", "--spec", spec, "--quiet"],
            ["tool", spec],
            ["tool", "notes_list", "--notes-home", str(root / "notes"), "--args", spec],
        ]
    runs += [
        ["tool", "notes_list", "--args", "[" * 20_000],
        ["tool", "history_list", "--args", '{"a":' * 20_000 + "1" + "}" * 20_000],
        ["--no-such-option"],
        [],
        ["session"],
        ["notes"],
        ["tool"],
        ["no-such-command"],
        ["demo", "--spec", "reset-control@9.99", "--quiet", "--dir", str(root / "demo-spec")],
        ["verify", "--spec", V26, "--examples", "nan", "--seed", "-"],
        ["\udcff"],
    ]
    return runs


STDIN = [
    b"",
    bytes(range(256)) * 8,
    b"[" * 100_000 + b"\n",
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + b"[" * 50_000 + b"\n",
    b"\xff\xfe\n" * 10 + b'{"request":"hello","protocol":"\\ud800"}\n',
]


def _run(root: Path, index: int, argv: list[str]) -> tuple[list[str], int | None, bytes, bytes]:
    env = {
        **os.environ,
        "HOME": str(root / "home"),
        "PI_NOTES_HOME": str(root / "notes-home"),
        "PI_CONTEXT_CACHE_DIR": str(root / "cache"),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pi_context", *argv],
            input=STDIN[index % len(STDIN)],
            capture_output=True,
            timeout=TIMEOUT,
            cwd=root / "cwd",
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as timed_out:
        return argv, None, timed_out.stdout or b"", timed_out.stderr or b""
    return argv, done.returncode, done.stdout, done.stderr


def test_no_command_ends_in_a_traceback_on_hostile_arguments(tmp_path: Path) -> None:
    paths = hostile_paths(tmp_path)
    (tmp_path / "cwd").mkdir()
    runs = command_lines(paths, tmp_path)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda job: _run(tmp_path, *job), enumerate(runs)))
    bad = []
    for argv, code, out, err in results:
        shown = [arg[:40] for arg in argv]
        if code is None:
            bad.append(f"{shown}: still running after {TIMEOUT} s")
        elif b"Traceback" in err or b"Traceback" in out:
            bad.append(f"{shown}: traceback\n{err[-1500:].decode(errors='replace')}")
        elif code < 0:
            bad.append(f"{shown}: killed by signal {-code}")
        elif code != 0 and not (err.strip() or out.strip()):
            bad.append(f"{shown}: exit {code} with no message")
    assert not bad, f"{len(bad)} of {len(runs)} command lines:\n" + "\n".join(bad)


def test_tool_args_nested_20k_deep_are_refused_by_their_limit(tmp_path: Path) -> None:
    for args in ["[" * 20_000 + "]" * 20_000, '{"a":' * 20_000 + "1" + "}" * 20_000]:
        done = subprocess.run(
            [sys.executable, "-m", "pi_context", "tool", "notes_list", "--args", args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == "pi-context tool: --args nests deeper than 512 levels (the limit)\n"


# --- the demo on a full disk ----------------------------------------------------------------


def _demo(directory: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def preexec() -> None:  # a file may grow to ``limit`` bytes; past it a write fails (EFBIG)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "pi_context", "demo", "--quiet", "--dir", str(directory)],
        capture_output=True,
        text=True,
        preexec_fn=preexec,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("limit", [0, 600, 20_000])
def test_the_demo_on_a_full_disk_ends_in_one_line(tmp_path: Path, limit: int) -> None:
    # Python ignores SIGXFSZ, so a write past RLIMIT_FSIZE fails with EFBIG, as a full disk
    # fails one with ENOSPC: at the settings file (0), the first notes (600), the session (20k).
    done = _demo(tmp_path / "run", limit)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("pi-context demo: ") and done.stderr.count("\n") == 1
    assert "File too large" in done.stderr, done.stderr


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_the_demo_on_a_real_full_tmpfs_ends_in_one_line(small_tmpfs: Path) -> None:
    done = _demo(small_tmpfs / "run")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("pi-context demo: ") and done.stderr.count("\n") == 1
    assert "No space left on device" in done.stderr, done.stderr
