"""Every fenced Python and shell block of README.md and docs/ runs in the suite, or says in
its fence info why it cannot and is checked to parse (``snippets.py`` gives the rules). The
count of blocks run and parsed is printed at the end of the run (``conftest.py``).

The fenced code blocks of README.md and docs/ that the suite runs.

A block's fence info says what it is: ```` ```python ```` and ```` ```sh ```` (also ``bash``,
``shell``) blocks run; ```` ```python no-run: REASON ```` (any language) says why it cannot run
here (it installs, it starts a server that waits for input, it needs a build or a network),
and is then only checked to parse (``ast.parse``, ``bash -n``). Other languages (``text``,
``json``, ``mermaid``, ``ts``) are not code the suite runs.

Python blocks run in a fresh interpreter, each in an empty temporary folder, with the suite's
isolated homes; top-level ``await`` is not accepted (a reader pasting the block would get a
``SyntaxError``): write ``asyncio.run(main())``. Shell blocks run with ``bash -e`` from the
checkout's root, so they may read its files but must write nothing there.

A maintained plugin was weighed first (pytest-markdown-docs, pytest-codeblocks, phmdoctest,
sybil): none runs shell blocks and takes the reason for not running a block from its fence
info, so this small collector does it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

RUNNABLE = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                    re.MULTILINE | re.DOTALL)  # fmt: skip
_NO_RUN = re.compile(r"^no-run:\s*(?P<why>\S.*)$")


@dataclass(frozen=True)
class Snippet:
    page: Path
    line: int
    language: str
    """``python`` or ``sh``."""
    code: str
    no_run: str | None
    """Why the block cannot run here (from its fence info), or None: it runs."""
    info: str

    def id(self, root: Path) -> str:
        page = self.page.relative_to(root) if self.page.is_relative_to(root) else self.page
        return f"{page}:{self.line}"


def snippets(page: Path) -> Iterator[Snippet]:
    text = page.read_text(encoding="utf-8")
    for match in _FENCE.finditer(text):
        info = match.group("info").strip()
        words = info.split(None, 1)
        language = RUNNABLE.get(words[0].lower()) if words else None
        if language is None:
            continue
        rest = words[1] if len(words) > 1 else ""
        reason = _NO_RUN.match(rest)
        if rest and reason is None:
            raise ValueError(
                f"{page}:{text[: match.start()].count(chr(10)) + 1}: fence info {info!r}: "
                "after the language only 'no-run: REASON' is understood"
            )
        yield Snippet(
            page=page,
            line=text[: match.start()].count("\n") + 1,
            language=language,
            code=match.group("body"),
            no_run=reason.group("why") if reason else None,
            info=info,
        )


def pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def all_snippets(root: Path) -> list[Snippet]:
    return [s for page in pages(root) for s in snippets(page)]


REPO = Path(__file__).resolve().parents[2]
SNIPPETS = all_snippets(REPO)
SNIPPET_COUNTS = {"run": 0, "parsed": 0}


def _parse(snippet: Snippet) -> None:
    if snippet.language == "python":
        compile(snippet.code, snippet.id(REPO), "exec")  # a top-level await fails here
    else:
        done = subprocess.run(["bash", "-n"], input=snippet.code, capture_output=True, text=True)
        assert done.returncode == 0, f"{snippet.id(REPO)}: {done.stderr}"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id(REPO))
def test_snippet(snippet: Snippet, tmp_path: Path) -> None:
    _parse(snippet)
    if snippet.no_run is not None:
        SNIPPET_COUNTS["parsed"] += 1
        return
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if snippet.language == "python":
        command, cwd = [sys.executable, "-c", snippet.code], tmp_path
    else:
        command, cwd = ["bash", "-e", "-c", snippet.code], REPO
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{snippet.id(REPO)} ({snippet.info}) failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr
    SNIPPET_COUNTS["run"] += 1


def test_the_fence_rules_are_enforced(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(1)\n```\n\n```sh no-run: starts a server\nserve --forever\n```\n\n"
        "```text\nnot code\n```\n"
    )
    found = list(snippets(page))
    assert [(s.language, s.no_run, s.line) for s in found] == [
        ("python", None, 1),
        ("sh", "starts a server", 5),
    ]
    page.write_text("```python skip\nprint(1)\n```\n")
    with pytest.raises(ValueError, match="no-run: REASON"):
        list(snippets(page))
    # top-level await does not parse: a pasted block would fail
    bad = Snippet(page, 1, "python", "await main()\n", "needs a host", "python no-run: x")
    with pytest.raises(SyntaxError):
        _parse(bad)
    broken_sh = Snippet(page, 1, "sh", "if then fi (\n", "x", "sh no-run: x")
    with pytest.raises(AssertionError):
        _parse(broken_sh)
