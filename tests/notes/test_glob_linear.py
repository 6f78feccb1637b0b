"""The notes glob matcher: the same answers as before, in time bounded by pattern x path
(issue 31, finding 4: ``*a*a*…*b`` or ``**/`` repeated, compiled to a backtracking regex,
ran for minutes on one ordinary path and froze the MCP server)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.bindings.notes.address import compile_glob, segment_matches


def reference(pattern: str) -> re.Pattern[str]:
    """The glob's meaning, as the earlier regex translation spelled it (the oracle)."""
    pieces: list[str] = []
    for segment in pattern.split("/"):
        if segment == "**":
            pieces.append("(?:/[^/]+)*")
        else:
            body = "".join(
                "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment
            )
            pieces.append("/" + body)
    return re.compile("".join(pieces), re.DOTALL)


segment_glob = st.text(alphabet="ab*?", min_size=1, max_size=6).filter(lambda s: "**" not in s)
pattern_segment = st.one_of(segment_glob, st.just("**"))
patterns = st.lists(pattern_segment, min_size=1, max_size=5).map("/".join)
names = st.text(alphabet="ab.", min_size=1, max_size=5)
paths = st.lists(names, min_size=1, max_size=5).map("/".join)


@settings(max_examples=1500, deadline=None)
@given(patterns, paths)
def test_the_matcher_agrees_with_the_regex_meaning(pattern: str, path: str) -> None:
    expected = reference(pattern).fullmatch("/" + path) is not None
    assert compile_glob(pattern).matches(path) == expected


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="ab*?", max_size=8), st.text(alphabet="ab", max_size=8))
def test_one_segment_matches_as_fnmatch_does(pattern: str, name: str) -> None:
    assert segment_matches(pattern, name) == fnmatch.fnmatchcase(name, pattern)


def test_the_published_forms_match() -> None:
    assert compile_glob("notes/**").matches("notes/a/b.md")
    assert compile_glob("notes/**").matches("notes")
    assert compile_glob("**/todo.md").matches("todo.md")
    assert compile_glob("**/todo.md").matches("a/b/todo.md")
    assert not compile_glob("*.md").matches("a/b.md")
    assert compile_glob("a/?.md").matches("a/x.md")


HOSTILE = ("*a" * 14 + "*b", "**/" * 24 + "x", "**/" * 24 + "*a" * 14 + "*b")


def test_hostile_patterns_end_instead_of_hanging() -> None:
    """Each pattern against a long ordinary path, in a child process bounded at a minute (the
    earlier regex took minutes on the first, holding the GIL, so only a process bound can
    stop it); the timings against the regex are in ``benchmarks/hostile_bounds.py``."""
    paths = ("a" * 40 + ".md", "projects/alpha/" + "a" * 200 + "/notes.md")
    code = (
        "from pi_context.bindings.notes.address import compile_glob\n"
        f"for pattern in {HOSTILE!r}:\n"
        f"    for path in {paths!r}:\n"
        "        assert not compile_glob(pattern).matches(path)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
