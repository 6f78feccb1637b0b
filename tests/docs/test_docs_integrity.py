"""The words around the code cannot drift silently: no tracked file holds a merge-conflict
marker, every relative link in README.md and docs/ resolves, and the README's command table
has a row for every subcommand of the CLI that names every one of its options (and no row
for a command that does not exist).

Each check also runs against a small planted mistake, so a check that could not fail would be
caught here.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"


def _load_markers():  # tools/ is not a package: load the CI script itself
    path = REPO / "tools" / "conflict_markers.py"
    spec = importlib.util.spec_from_file_location("conflict_markers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


markers = _load_markers()


def docs() -> list[Path]:
    """README.md and every markdown page under docs/."""
    return [README, *sorted((REPO / "docs").rglob("*.md"))]


# ---------------------------------------------------------------- conflict markers


def test_no_tracked_file_holds_a_conflict_marker() -> None:
    assert markers.find(REPO) == []


def test_a_planted_conflict_is_found(tmp_path: Path) -> None:
    planted = ["intro", "<" * 7 + " HEAD", "ours", "=" * 7, "theirs", ">" * 7 + " main", "end"]
    assert [n for n, _ in markers.markers(planted)] == [2, 4, 6]
    # a lone setext underline outside a conflict is text, not a marker
    assert list(markers.markers(["Title", "=" * 7])) == []
    repo = tmp_path / "repo"
    repo.mkdir()
    import subprocess

    (repo / "a.md").write_text("\n".join(planted) + "\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "a.md"], cwd=repo, check=True)
    assert [line.split(":")[:2] for line in markers.find(repo)] == [
        ["a.md", "2"],
        ["a.md", "4"],
        ["a.md", "6"],
    ]


# ---------------------------------------------------------------- relative links

_INLINE = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(text: str) -> Iterator[str]:
    """Every link target of ``text`` that is a relative path (no scheme, not a bare anchor),
    outside code blocks and code spans."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    for match in (*_INLINE.finditer(prose), *_REFERENCE.finditer(prose)):
        target = match.group(1)
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        yield target


def dead_links(page: Path) -> list[str]:
    dead = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            dead.append(target)
    return dead


@pytest.mark.parametrize("page", docs(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert dead_links(page) == []


def test_a_planted_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("x")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [anchor](#top) [web](https://example.org/x) [gone](missing.md#a)\n"
        "`[not a link](nope.md)`\n\n```md\n[in code](nope.md)\n```\n\n[ref]: gone/too.md\n"
    )
    assert dead_links(page) == ["missing.md#a", "gone/too.md"]


# ---------------------------------------------------------------- machine paths

_MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|srv|mnt|opt/[a-z]+-[a-z]+)/[\w./-]*")


def machine_paths(text: str) -> list[str]:
    """Absolute paths of a particular machine (``/work/...``, ``/root/...``): a doc names
    paths relative to the checkout, ``~``, or a plainly made-up ``/home/me`` or ``/path/to``."""
    return _MACHINE_PATH.findall(text)


@pytest.mark.parametrize("page", docs(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_doc_cites_a_machine_path(page: Path) -> None:
    assert machine_paths(page.read_text(encoding="utf-8")) == []


def test_a_planted_machine_path_is_found() -> None:
    assert machine_paths("the seeds (`/work/shared/seeds`) and ~/.pi/agent, /home/me/x") == [
        "/work/shared/seeds"
    ]
    assert machine_paths("see /root/.cache/x") == ["/root/.cache/x"]


# ---------------------------------------------------------------- the command table


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[str]]]:
    """(command words, long options) of every runnable (sub)command of the CLI."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    options = sorted(
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    )
    if not subparsers:
        yield path, options
    for action in subparsers:
        for name, sub in action.choices.items():
            yield from commands(sub, (*path, name))


def table_rows(text: str, heading: str = "## Commands") -> list[tuple[list[str], str]]:
    """(the command words each row's first cell names, the whole row) of the table under
    ``heading``; ``a\\|b\\|c`` in the first cell names each alternative."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `pi-context"):
            continue
        first = re.match(r"\| `pi-context ([^`]*)`", line)
        assert first is not None, line
        words: list[str] = []
        for word in first.group(1).split():
            if word.startswith(("-", "[", '"', "<")) or word.isupper():
                break
            words.append(word)
        if words and "\\|" in words[-1]:
            rows.extend(([*words[:-1], alt], line) for alt in words[-1].split("\\|"))
        else:
            rows.append((words, line))
    return rows


def table_problems(text: str, parser: argparse.ArgumentParser) -> list[str]:
    rows = table_rows(text)
    by_command: dict[tuple[str, ...], str] = {}
    known = dict(commands(parser))
    known_words = set(known)
    for words, line in rows:
        # the longest prefix that is a command: `export quint` is `export` with its argument
        command = tuple(words)
        while command and command not in known_words:
            command = command[:-1]
        command = command or tuple(words)
        by_command[command] = by_command.get(command, "") + line
    problems = []
    for command, options in known.items():
        row = by_command.get(command)
        if row is None:
            problems.append(f"no row for `pi-context {' '.join(command)}`")
            continue
        problems += [
            f"`pi-context {' '.join(command)}` row does not name {option}"
            for option in options
            if not re.search(re.escape(option) + r"(?![\w-])", row)
        ]
    for command in by_command:
        if command and command not in known_words:
            problems.append(f"row for `pi-context {' '.join(command)}`, which is no command")
    return problems


def test_the_command_table_names_every_subcommand_and_option() -> None:
    assert table_problems(README.read_text(encoding="utf-8"), build_parser()) == []


def test_a_missing_row_or_option_is_found() -> None:
    text = README.read_text(encoding="utf-8")
    export_row = next(line for _, line in table_rows(text) if "`pi-context session export" in line)
    assert "no row for `pi-context session export`" in table_problems(
        text.replace(export_row, ""), build_parser()
    )
    shorter = text.replace("--auto-handoff", "--auto")
    assert "`pi-context demo` row does not name --auto-handoff" in table_problems(
        shorter, build_parser()
    )
    version_row = "| `pi-context --version`"
    extra = text.replace(version_row, "| `pi-context frobnicate` | x |\n" + version_row)
    assert "row for `pi-context frobnicate`, which is no command" in table_problems(
        extra, build_parser()
    )
