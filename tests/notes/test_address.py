"""Virtual path validation and glob semantics, by property and by named case."""

from __future__ import annotations

import os
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.bindings.notes.address import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    NoteAddressError,
    compile_glob,
    validate_path,
)

SEGMENT_CHARS = st.sampled_from(list("ab.-_*?/") + ["é", "进", " ", "\\", "\0", "\n"])
segments = st.text(alphabet=st.sampled_from(list("abc.é进-")), min_size=1, max_size=4)


@given(st.text(alphabet=SEGMENT_CHARS, max_size=12))
def test_a_valid_path_never_leaves_its_home(candidate: str) -> None:
    try:
        path = validate_path(candidate)
    except NoteAddressError:
        return
    home = "/home/notes"
    joined = os.path.normpath(os.path.join(home, *path.split("/")))
    assert joined.startswith(home + "/")
    assert all(part not in ("", ".", "..") for part in path.split("/"))
    assert not path.startswith("/") and "\\" not in path and "\0" not in path


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (None, "non-empty"),
        (7, "non-empty"),
        ("", "non-empty"),
        ("a\0b", "NUL"),
        ("a\\b", "backslash"),
        ("/a", "no leading /"),
        ("a/", "unsupported component: an empty segment"),
        ("a/../b", "unsupported component: '..'"),
        ("./a", "unsupported component: '.'"),
        ("a\nb", "control characters"),
        ("x" * (MAX_SEGMENT_BYTES + 1), "longer than 255 UTF-8 bytes"),
        ("/".join(["abcdefg"] * 200), "the limit is 1024"),
        ("a/.pi-notes-locks/x", "reserved prefix"),
        ("\ud800", "lone surrogate"),
    ],
)
def test_invalid_paths_are_named(path: object, message: str) -> None:
    with pytest.raises(NoteAddressError, match=None) as caught:
        validate_path(path)
    assert message in str(caught.value)


def test_limits_are_in_utf8_bytes() -> None:
    assert validate_path("进" * 85) == "进" * 85  # 255 bytes
    with pytest.raises(NoteAddressError):
        validate_path("进" * 86)  # 258 bytes
    near = "/".join(["进" * 80] * 4)  # 4*240 + 3 = 963 bytes
    assert len(near.encode()) <= MAX_PATH_BYTES and validate_path(near) == near


@cache
def reference_match(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """A direct recursive reading of the glob rules, independent of the regex compiler."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(reference_match(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and segment_match(head, path[0]) and reference_match(rest, path[1:])


@cache
def segment_match(pattern: str, name: str) -> bool:
    if not pattern:
        return not name
    if pattern[0] == "*":
        return any(segment_match(pattern[1:], name[i:]) for i in range(len(name) + 1))
    if not name:
        return False
    return (pattern[0] == "?" or pattern[0] == name[0]) and segment_match(pattern[1:], name[1:])


pattern_segments = st.one_of(
    st.just("**"), st.text(alphabet=st.sampled_from(list("ab*?.")), min_size=1, max_size=3)
).filter(lambda s: s not in (".", "..") and (s == "**" or "**" not in s))
path_segments = st.text(alphabet=st.sampled_from(list("ab.*?")), min_size=1, max_size=3).filter(
    lambda s: s not in (".", "..")
)


@given(
    st.lists(pattern_segments, min_size=1, max_size=4),
    st.lists(path_segments, min_size=1, max_size=4),
)
def test_glob_agrees_with_the_reference_matcher(pattern: list[str], path: list[str]) -> None:
    compiled = compile_glob("/".join(pattern))
    assert compiled.matches("/".join(path)) == reference_match(tuple(pattern), tuple(path))


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*", "a.md", True),
        ("*", "dir/a.md", False),
        ("*.md", "a.md", True),
        ("dir/*", "dir/a.md", True),
        ("dir/*", "dir/sub/a.md", False),
        ("dir/**", "dir/sub/a.md", True),
        ("dir/**", "dir/a.md", True),
        ("**/a.md", "a.md", True),
        ("**/a.md", "x/y/a.md", True),
        ("a?.md", "ab.md", True),
        ("a?.md", "a/.md", False),
        ("[ab].md", "[ab].md", True),
        ("[ab].md", "a.md", False),
    ],
)
def test_glob_cases(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern).matches(path) is expected


@pytest.mark.parametrize(
    "pattern", ["", "/a", "a//b", "a/../b", "./a", "a**", "**b/c", "a\\b", "a\0", 3]
)
def test_invalid_patterns_are_named(pattern: object) -> None:
    with pytest.raises(NoteAddressError) as caught:
        compile_glob(pattern)
    assert str(caught.value).startswith("invalid pattern")
